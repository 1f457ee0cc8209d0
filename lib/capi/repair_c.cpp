// The C API's repair (include/devmesh/devmesh.h, "repair"): devmesh_repair,
// devmesh_repair_ex, devmesh_release_spares, devmesh_standby and
// devmesh_join over Mesh::repair, release_spares, standby and join
// (docs/SEMANTICS.md "Repair").
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capi/capi.hpp"
#include "devmesh/devmesh.h"
#include "devmesh/mesh.hpp"

using namespace devmesh::capi;

namespace {

// Hands a mesh a repair, standby or join gave to the caller: NULL for the
// null mesh (a released spare), else a new handle.
void give_mesh(Mesh m, devmesh_t* out) {
  if (!m.is_member()) {
    *out = nullptr;
    return;
  }
  give(make_handle(std::move(m)), out);
}

// devmesh_repair and devmesh_repair_ex: command NULL is spares only; argv
// NULL-terminated (NULL: none), as MPI_Comm_spawn takes it.
int repair(const char* fn, devmesh_t m, const char* command, char* argv[], MPI_Info info, devmesh_t* repaired) {
  return guard(fn, [&] {
    const Mesh& mesh = mesh_of(m);
    need(repaired, "the repaired output pointer");
    std::optional<devmesh::Spawn> spawn;
    if (command) {
      spawn.emplace();
      spawn->command = command;
      for (char** a = argv; a && *a; ++a) spawn->argv.emplace_back(*a);
      spawn->info = info;
    }
    give_mesh(mesh.repair(std::move(spawn)), repaired);
  });
}

}  // namespace

extern "C" {

int devmesh_repair(devmesh_t m, const char* command, char* argv[], devmesh_t* repaired) {
  return repair("devmesh_repair", m, command, argv, MPI_INFO_NULL, repaired);
}

int devmesh_repair_ex(devmesh_t m, const char* command, char* argv[], MPI_Info info, devmesh_t* repaired) {
  return repair("devmesh_repair_ex", m, command, argv, info, repaired);
}

int devmesh_release_spares(devmesh_t m) {
  return guard("devmesh_release_spares", [&] { mesh_of(m).release_spares(); });
}

int devmesh_standby(MPI_Comm parent, devmesh_t* mesh) {
  return guard("devmesh_standby", [&] {
    need(mesh, "the mesh output pointer");
    give_mesh(Mesh::standby(parent), mesh);
  });
}

int devmesh_join(devmesh_t* mesh) {
  return guard("devmesh_join", [&] {
    need(mesh, "the mesh output pointer");
    give_mesh(Mesh::join(), mesh);
  });
}

}  // extern "C"
