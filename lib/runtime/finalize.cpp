#include "finalize.hpp"

#include <mpi.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "mesh_state.hpp"
#include "mpi_check.hpp"

namespace devmesh::detail {
namespace {

std::mutex live_mutex;
// Live states in creation order (MPI_Finalize releases them in that order
// on every rank), searched from the newest, which usually goes first: a
// vector, so that registering one allocates nothing once it has grown.
std::vector<MeshState*>& live() {
  static std::vector<MeshState*> states;
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
  live().push_back(state);
}

void unregister_live(MeshState* state) noexcept {
  std::lock_guard lock(live_mutex);
  std::vector<MeshState*>& states = live();
  if (auto it = std::find(states.rbegin(), states.rend(), state); it != states.rend())
    states.erase(std::next(it).base());
}

void install_finalize_hook() {
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
