// Meshes still alive at MPI_Finalize: their communicators are freed inside
// MPI_Finalize (an attribute delete callback on MPI_COMM_SELF), the handles
// stay usable for pure queries, communicator calls fail with a clear error,
// and destroying them afterwards makes no MPI call. Exits non-zero on failure.
#include <mpi.h>

#include <cstdio>
#include <cstring>

#include "comm_counter.hpp"
#include "devmesh/mesh.hpp"

using namespace devmesh;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int failures = 0;
  const long before = comm_counter::live();
  auto* kept = new Mesh(Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"}));
  static Mesh global = kept->flatten();  // destroyed after main returns
  kept->create_comms();
  global.comm();
  // Something to free at MPI_Finalize: at 1 rank one communicator (both
  // dims and the flattened view are the caller alone; create_comms checks
  // over MPI_COMM_WORLD, making no root communicator where MPI 4 is used).
  if (comm_counter::live() - before < 1 || comm_counter::live() - before != kept->comm_count()) ++failures;
  MPI_Finalize();
  // Everything the library made was freed during MPI_Finalize.
  if (comm_counter::live() != before) {
    std::printf("communicators left after MPI_Finalize: %ld\n", comm_counter::live() - before);
    ++failures;
  }
  if (kept->size("a") * kept->size("b") != kept->size()) ++failures;  // pure queries still work
  try {
    kept->comm("a");
    ++failures;
  } catch (const Error& e) {
    if (e.status() != Status::invalid_argument || !std::strstr(e.what(), "MPI_Finalize")) ++failures;
  }
  delete kept;  // no MPI call after finalize
  std::printf("%s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
