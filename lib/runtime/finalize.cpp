#include "finalize.hpp"

#include <mpi.h>

#include <mutex>
#include <set>

#include "mesh_state.hpp"
#include "mpi_check.hpp"

namespace devmesh::detail {
namespace {

std::mutex live_mutex;
std::set<MeshState*>& live() {
  static std::set<MeshState*> states;
  return states;
}

int release_all(MPI_Comm, int, void*, void*) {
  std::lock_guard lock(live_mutex);
  for (MeshState* s : live()) s->release();
  return MPI_SUCCESS;
}

}  // namespace

void register_live(MeshState* state) {
  std::lock_guard lock(live_mutex);
  live().insert(state);
}

void unregister_live(MeshState* state) noexcept {
  std::lock_guard lock(live_mutex);
  live().erase(state);
}

void watch_finalize() {
  static std::mutex m;
  static bool installed = false;
  std::lock_guard lock(m);
  if (installed) return;
  int initialized = 0;
  if (MPI_Initialized(&initialized) != MPI_SUCCESS || !initialized) return;
  int key = MPI_KEYVAL_INVALID;
  DEVMESH_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_all, &key, nullptr));
  DEVMESH_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr));
  installed = true;
}

bool mpi_alive() noexcept {
  int finalized = 1;
  return MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized;
}

}  // namespace devmesh::detail
