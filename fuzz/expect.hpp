// What the fuzz targets share besides the reference (tests/support/
// reference.hpp): how a disagreement ends an input, and which statuses the
// pure model may report.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "devmesh/status.hpp"

namespace fuzz {

// A disagreement with the reference: print it and abort, which libFuzzer
// records as a crash (and saves the input).
[[noreturn]] inline void mismatch(const std::string& what) {
  std::fprintf(stderr, "\n*** reference mismatch: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

#define FUZZ_EXPECT(cond, ...)                                                 \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::ostringstream fuzz_expect_os;                                       \
      fuzz_expect_os << #cond << " [" << __FILE__ << ":" << __LINE__ << "] "   \
                     << __VA_ARGS__;                                           \
      ::fuzz::mismatch(fuzz_expect_os.str());                                  \
    }                                                                          \
  } while (0)

// The five statuses the pure model may report (the others belong to MPI,
// backends and the C layer).
inline bool model_status(devmesh::Status s) {
  using devmesh::Status;
  return s == Status::invalid_argument || s == Status::shape_mismatch || s == Status::unknown_dim ||
         s == Status::duplicate_name || s == Status::overlap;
}

}  // namespace fuzz
