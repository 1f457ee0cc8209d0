#include "mpi_check.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "mpi_features.hpp"

namespace devmesh::detail {

namespace {

// MPI_Error_string gets a zeroed heap buffer this many times
// MPI_MAX_ERROR_STRING, since an MPI may write past that bound on a long
// error stack, and the text is taken only up to the first NUL within
// MPI_MAX_ERROR_STRING, whatever length MPI reports (docs/RELIABILITY.md,
// "Faults on two real hosts").
constexpr std::size_t error_text_slack = 8;

}  // namespace

std::string mpi_error_text(int code) {
  const std::size_t size = static_cast<std::size_t>(MPI_MAX_ERROR_STRING) * error_text_slack;
  const std::unique_ptr<char[]> text(new (std::nothrow) char[size]());
  if (!text) return {};
  int len = 0;
  if (MPI_Error_string(code, text.get(), &len) != MPI_SUCCESS) return {};
  return std::string(text.get(), strnlen(text.get(), MPI_MAX_ERROR_STRING - 1));
}

bool mpi_error_known(int code, int* cls) {
  *cls = 0;
  int c = 0;
  if (code <= 0 || MPI_Error_class(code, &c) != MPI_SUCCESS || c <= 0) return false;
  // The largest class MPI knows: MPI_LASTUSEDCODE (classes and codes added
  // at run time included), never below MPI_ERR_LASTCODE.
  int last = MPI_ERR_LASTCODE, initialized = 0, finalized = 0, flag = 0;
  void* value = nullptr;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized && MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &value, &flag) == MPI_SUCCESS &&
      flag && value)
    last = std::max(last, *static_cast<int*>(value));
  if (c > last) return false;
  *cls = c;
  return true;
}

void throw_mpi_error(int code, const char* call) {
  int cls = code;
  if (MPI_Error_class(code, &cls) != MPI_SUCCESS) cls = code;
  std::string what(call);
  what = what.substr(0, what.find('('));
  throw Error(mpi::status_of_class(cls),
              what + " failed: " + mpi_error_text(code) + " (MPI error class " + std::to_string(cls) + ")", code, cls);
}

void return_errors(MPI_Comm& comm) {
  if (comm == MPI_COMM_NULL) return;
  if (const int e = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN); e != MPI_SUCCESS) {
    MPI_Comm_free(&comm);
    throw_mpi_error(e, "MPI_Comm_set_errhandler");
  }
}

void check_parent_usable(MPI_Comm parent) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  const bool sessions = mpi::has_comm_from_group && parent != MPI_COMM_WORLD && parent != MPI_COMM_SELF;
  if (finalized || (!initialized && !sessions))
    throw Error(Status::invalid_argument, "MPI is not initialized (or already finalized)");
  if (parent == MPI_COMM_NULL) throw Error(Status::invalid_argument, "the parent communicator is MPI_COMM_NULL");
}

namespace {

std::mutex unfreed_mutex;
std::vector<MPI_Comm> unfreed;

}  // namespace

void leave_unfreed(MPI_Comm comm) {
  std::lock_guard lock(unfreed_mutex);
  unfreed.push_back(comm);
}

bool left_unfreed(MPI_Comm comm) {
  std::lock_guard lock(unfreed_mutex);
  const auto it = std::find(unfreed.begin(), unfreed.end(), comm);
  if (it == unfreed.end()) return false;
  unfreed.erase(it);
  return true;
}

}  // namespace devmesh::detail
