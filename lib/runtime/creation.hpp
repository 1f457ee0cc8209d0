// The one way a mesh is made. Every front end (Mesh::create, Mesh::adopt,
// Mesh::create_from_group, create_host_mesh, create_host_aware, the C API
// and through it Fortran) translates its arguments into a CreationRequest;
// create() runs it. A new way to make a mesh is a new kind here, with no
// failure path of its own: whatever a front end finds wrong on one rank
// goes into the request, and that rank still makes every collective call
// of the creation, so every rank fails alike.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"
#include "devmesh/status.hpp"

namespace devmesh::detail {

class CreationMode;  // creation_steps.hpp

enum class CreationKind : int {
  shape = 0,  // over all of the parent's ranks (host-major with options.host_aware)
  ranks = 1,  // over an explicit list of parent ranks
  comms = 2,  // over the program's own communicators, one per dim (adoption)
  group = 3,  // over an MPI group with no parent communicator (MPI Sessions)
  hosts = 4,  // (hosts, ranks per host), the shape found by host discovery
};

struct CreationRequest {
  CreationKind kind = CreationKind::shape;
  MPI_Comm parent = MPI_COMM_NULL;   // every kind but group
  MPI_Group group = MPI_GROUP_NULL;  // group
  std::string tag;                   // group: all members pass the same
  std::vector<int> shape;            // shape, ranks, group
  std::vector<std::string> names;    // one per dim; hosts: {host dim, local dim}
  std::vector<int> ranks;            // ranks
  std::vector<MPI_Comm> comms;       // comms: the caller's, one per dim
  MeshOptions options;
  // The parent is devmesh's own (a shrink's survivors' communicator), and
  // the creation owns it from the call on, also when it fails: it becomes
  // the root communicator where the root is all of it in its own order
  // (no communicator made for the root), else the new mesh keeps it as its
  // parent; a non-member, or a failed creation, frees it.
  bool owns_parent = false;
  // The parent is devmesh's own, just made by a shrink or a repair (owned
  // or not): the members agree over it before making anything over it.
  bool fresh_parent = false;
  // How the creation treats failure; null: as the options say
  // (fault_tolerance: ulfm_mode(), else plain_mode()).
  const CreationMode* mode = nullptr;
  // What the front end found wrong on this rank (a NULL pointer, a
  // malformed C config). The rank joins the creation and every rank fails:
  // with this error where all found the same, else with inconsistent.
  std::optional<Error> error;
};

// Options for a new root over the members of an old one in the old root
// order (a shrink's, a repair's): no spares, no reordering (host_aware,
// placement).
void keep_root_order(MeshOptions& options);

// The modes a front end may ask for: a shrink makes its new root in the
// ULFM mode over the survivors, whose arguments are the same on every
// member by construction (no cross-check of them; what fails on one member
// alone fails every member at the end).
const CreationMode& ulfm_survivors_mode();

// Runs a creation: local checks (request.error first) -> one cross-check
// over the parent -> host discovery where asked -> build. Collective over
// the parent (kind group: over the group's members). Non-members of the
// new root get the null mesh. Errors are the same on every rank (see
// mesh.hpp and hosts.hpp per front end).
Mesh create(CreationRequest request);

}  // namespace devmesh::detail
