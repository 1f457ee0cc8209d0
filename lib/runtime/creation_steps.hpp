// The creation driver's steps (creation.cpp) and its seam, CreationMode:
// what the driver asks of the way a creation treats failure. The plain
// mode is the driver's own; the ULFM modes (fault_tolerance, and a
// shrink's survivors) live in ulfm/. Internal to the runtime.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "adoption.hpp"
#include "creation.hpp"
#include "cross_check.hpp"
#include "hosts.hpp"
#include "plugins.hpp"

namespace devmesh::detail {

class MeshState;

// A creation under way on this rank.
struct Creation {
  explicit Creation(CreationRequest r) : request(std::move(r)) {}
  ~Creation();
  Creation(const Creation&) = delete;
  Creation& operator=(const Creation&) = delete;
  bool has_rank_list() const { return !order.empty(); }

  CreationRequest request;
  MPI_Comm parent = MPI_COMM_NULL;
  // The communicator made from request.group (kind group), freed unless it
  // becomes the root communicator.
  MPI_Comm group_comm = MPI_COMM_NULL;
  int world = 0, me = 0;
  std::optional<View> view;
  std::vector<int> order;  // the rank list of the root, when it has one
  std::optional<HostInfo> hosts;
  // The levels the placement was made over (options.placement).
  std::optional<Levels> levels;
  Adopting adopting;
  std::vector<std::pair<BackendSpec, std::unique_ptr<BackendInstance>>> backends;
  std::uint64_t seq = 0, digest = 0;
  // backends_named(request.options), made once.
  std::optional<std::vector<BackendSpec>> named;
  // A parent of devmesh's own that holds exactly the root in root order.
  bool parent_is_root = false;
  // What failed on this rank alone where the arguments needed no
  // cross-check (a shrink's), reported at the end.
  std::optional<Error> deferred;
  // A copy of the parent made on every parent rank where the root has
  // spares (options.spares), made with the root communicator; the pool a
  // repair takes them from (ulfm/pool.hpp).
  mutable MPI_Comm pool = MPI_COMM_NULL;
};

// How a creation treats failure. The driver runs, on every rank: local
// checks (with the mode's check) -> the mode's cross-check -> host discovery
// -> the root communicator the mode needs -> the mesh state -> the mode's
// finish.
class CreationMode {
 public:
  virtual ~CreationMode() = default;
  // What the mode needs of the request and of the machine, on this rank.
  virtual void check(const Creation& c) const = 0;
  // The cross-check that ends the local checks (cross_check_arguments).
  virtual void cross_check(Creation& c) const;
  // The new root's communicator over c.parent from the members' group, or
  // MPI_COMM_NULL where the mode needs none before the state exists.
  virtual MPI_Comm root_comm(const Creation& c, MPI_Group members) const = 0;
  // The last step, once the state holds everything.
  virtual void finish(const Creation& c, MeshState& state) const = 0;
};

// The plain mode and the ULFM modes (ulfm/creation_mode.cpp): over the
// program's parent, and over a shrink's survivors, whose arguments are the
// same on every member by construction.
const CreationMode& plain_mode();
const CreationMode& ulfm_mode();
const CreationMode& ulfm_survivors_mode();

// ---- the driver's steps the modes share (creation.cpp) -----------------------

const char* call_of(CreationKind kind);
// Per-dim backends and options name dims of the mesh.
void check_dim_names(const CreationRequest& r);
// Opens (and so checks) every backend the options name.
void load_backends(Creation& c);
// The arguments every rank must pass alike.
std::array<Field, 9> fields_of(Creation& c);
// The local checks, then one cross-check over the parent.
void cross_check_arguments(Creation& c);
// Takes the next root sequence number of this process without a cross-check.
std::uint64_t next_root_seq();
// Runs build (the driver's last step) for a creation with spares
// (ulfm/spares.cpp): the spares stand by for the mesh once every member made it.
Mesh build_with_spares(Creation& c, Mesh (*build)(Creation&));

}  // namespace devmesh::detail
