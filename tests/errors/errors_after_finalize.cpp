// Every surface after MPI_Finalize: a mesh still alive keeps answering pure
// queries, every call that needs MPI (communicators, create_comms, cart_comm)
// fails with invalid_argument naming MPI_Finalize instead of calling MPI
// (backend communicators asked for before MPI_Finalize included),
// creating a mesh fails the same way, and handles are destroyed without an
// MPI call. Not Boost.Test: its main() finalizes MPI before the checks.
// Exits non-zero on failure.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "devmesh/devmesh.h"
#include "devmesh/mesh.hpp"

using namespace devmesh;

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what);
    ++failures;
  }
}

// f must throw Error(invalid_argument) whose message contains needle.
void expect_released(const std::function<void()>& f, const char* needle, const char* what) {
  try {
    f();
    check(false, what);
  } catch (const Error& e) {
    check(e.status() == Status::invalid_argument && std::strstr(e.what(), needle) != nullptr, what);
    if (e.status() != Status::invalid_argument || !std::strstr(e.what(), needle))
      std::printf("  got %s: %s\n", std::string(status_name(e.status())).c_str(), e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"});
  int shape[2] = {0, 0};
  const char* names[2] = {"a", "b"};
  devmesh_t h = nullptr;
  check(devmesh_create(MPI_COMM_WORLD, 2, shape, names, &h) == DEVMESH_SUCCESS, "C create");
  // Asked for once before: "a" (C++) and "b" (C); "b" in C++ is not.
  int one = 1, sum = 0;
  m.communicator("a").allreduce(&one, &sum, 1, DataType::int32, ReduceOp::sum);
  check(devmesh_allreduce(h, "b", &one, &sum, 1, DEVMESH_INT32, DEVMESH_SUM, nullptr) == DEVMESH_SUCCESS,
        "C allreduce");
  MPI_Finalize();

  // C++: pure queries work; everything that needs MPI fails cleanly.
  check(m.size("a") * m.size("b") == m.size(), "queries after MPI_Finalize");
  check(m.flatten("ab").size() == m.size(), "views after MPI_Finalize");
  expect_released([&] { m.comm("a"); }, "MPI_Finalize", "comm after MPI_Finalize");
  expect_released([&] { m.communicator("a"); }, "MPI_Finalize", "communicator asked before, after MPI_Finalize");
  expect_released([&] { m.communicator("b"); }, "MPI_Finalize", "communicator after MPI_Finalize");
  expect_released([&] { m.cart_comm(); }, "MPI_Finalize", "cart_comm after MPI_Finalize");
  for (CommPath p : {CommPath::automatic, CommPath::split, CommPath::cart_sub})
    expect_released([&] { m.create_comms(p); }, "MPI_Finalize", "create_comms after MPI_Finalize");
  expect_released([] { Mesh::create(MPI_COMM_WORLD, {0}, {"x"}); }, "finalized", "create after MPI_Finalize");

  // C: the same statuses, outputs untouched.
  int v = -7;
  check(devmesh_size(h, "a", &v) == DEVMESH_SUCCESS && v > 0, "C query after MPI_Finalize");
  MPI_Comm c = MPI_COMM_SELF;
  check(devmesh_comm(h, "a", &c) == DEVMESH_ERR_INVALID_ARGUMENT && c == MPI_COMM_SELF, "C comm");
  check(devmesh_allreduce(h, "b", &one, &sum, 1, DEVMESH_INT32, DEVMESH_SUM, nullptr) == DEVMESH_ERR_INVALID_ARGUMENT &&
            std::strstr(devmesh_last_error(), "MPI_Finalize") != nullptr,
        "C allreduce asked before, after MPI_Finalize");
  check(devmesh_create_comms(h, DEVMESH_COMM_PATH_AUTOMATIC) == DEVMESH_ERR_INVALID_ARGUMENT, "C create_comms");
  check(std::strstr(devmesh_last_error(), "MPI_Finalize") != nullptr, "C message names MPI_Finalize");
  check(devmesh_cart_comm(h, &c) == DEVMESH_ERR_INVALID_ARGUMENT && c == MPI_COMM_SELF, "C cart_comm");
  devmesh_t out = nullptr;
  check(devmesh_create(MPI_COMM_WORLD, 2, shape, names, &out) == DEVMESH_ERR_INVALID_ARGUMENT && !out,
        "C create after MPI_Finalize");
  check(std::strstr(devmesh_last_error(), "finalized") != nullptr, "C create message");
  check(devmesh_destroy(&h) == DEVMESH_SUCCESS && h == nullptr, "C destroy after MPI_Finalize");
  std::printf("%s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
