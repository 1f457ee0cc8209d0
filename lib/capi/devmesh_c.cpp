// The C API (include/devmesh/devmesh.h), a thin layer over devmesh::Mesh:
// handles, views, queries, communicators, errors and the version. Every
// entry point runs its body through guard() (capi.hpp); creation is in
// creation_c.cpp, the collectives and point to point in collectives_c.cpp.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capi/capi.hpp"
#include "capi/version.h"
#include "devmesh/backend_plugin.h"
#include "devmesh/devmesh.h"
#include "devmesh/hosts.hpp"
#include "devmesh/mesh.hpp"

using namespace devmesh::capi;

namespace {

static_assert(DEVMESH_SUCCESS == static_cast<int>(Status::success));
static_assert(DEVMESH_ERR_INVALID_ARGUMENT == static_cast<int>(Status::invalid_argument));
static_assert(DEVMESH_ERR_SHAPE_MISMATCH == static_cast<int>(Status::shape_mismatch));
static_assert(DEVMESH_ERR_UNKNOWN_DIM == static_cast<int>(Status::unknown_dim));
static_assert(DEVMESH_ERR_DUPLICATE_NAME == static_cast<int>(Status::duplicate_name));
static_assert(DEVMESH_ERR_OVERLAP == static_cast<int>(Status::overlap));
static_assert(DEVMESH_ERR_INCONSISTENT == static_cast<int>(Status::inconsistent));
static_assert(DEVMESH_ERR_NOT_MEMBER == static_cast<int>(Status::not_member));
static_assert(DEVMESH_ERR_BACKEND == static_cast<int>(Status::backend));
static_assert(DEVMESH_ERR_UNSUPPORTED == static_cast<int>(Status::unsupported));
static_assert(DEVMESH_ERR_INTERNAL == static_cast<int>(Status::internal));
static_assert(DEVMESH_ERR_PROC_FAILED == static_cast<int>(Status::proc_failed));
static_assert(DEVMESH_ERR_REVOKED == static_cast<int>(Status::revoked));
static_assert(DEVMESH_ERR_TIMEOUT == static_cast<int>(Status::timeout));
static_assert(DEVMESH_COMM_PATH_AUTOMATIC == static_cast<int>(devmesh::CommPath::automatic));
static_assert(DEVMESH_COMM_PATH_CREATE_GROUP == static_cast<int>(devmesh::CommPath::create_group));
static_assert(DEVMESH_COMM_PATH_SPLIT == static_cast<int>(devmesh::CommPath::split));
static_assert(DEVMESH_COMM_PATH_CART_SUB == static_cast<int>(devmesh::CommPath::cart_sub));

void copy_ints(const std::vector<int>& v, int out[]) noexcept {
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = v[i];
}

// Checks the caller's capacity before writing anything, so a short array is
// reported instead of overrun and the output stays untouched.
void copy_ints(const std::vector<int>& v, int capacity, const char* capacity_name, const char* array_name, int out[]) {
  if (capacity < 0 || static_cast<std::size_t>(capacity) < v.size())
    invalid(std::string(capacity_name) + " is " + std::to_string(capacity) + " but " + array_name + " needs " +
            std::to_string(v.size()) + " entries");
  copy_ints(v, out);
}

// devmesh_flatten(_ex): config NULL gives the new dim no backend of its own.
int flatten_c(const char* fn, devmesh_t m, const char* name, const devmesh_config_t* config, devmesh_t* out) {
  return guard(fn, [&] {
    const Mesh& mesh = mesh_of(m);
    need(out, "the output handle pointer");
    // The name the flattened dim will have, for the config's per-dim fields.
    std::string made = name ? name : "";
    if (!name)
      for (const std::string& d : mesh.names()) made += (made.empty() ? "" : "_") + d;
    std::optional<std::string> n;
    if (name) n = name;
    give(make_handle(mesh.flatten(std::move(n), new_dim_backends(config, {made})[0])), out);
  });
}

// devmesh_unflatten(_ex), as devmesh_flatten(_ex).
int unflatten_c(const char* fn, devmesh_t m, const char* dim, int n, const int sizes[], const char* const names[],
                const devmesh_config_t* config, devmesh_t* out) {
  return guard(fn, [&] {
    const Mesh& mesh = mesh_of(m);
    need(out, "the output handle pointer");
    need(dim, "dim");
    if (n < 1) invalid("n is " + std::to_string(n) + "; unflatten needs at least one size");
    need(sizes, "sizes");
    need(names, "names");
    std::vector<int> s(sizes, sizes + n);
    for (int i = 0; i < n; ++i)
      if (s[static_cast<std::size_t>(i)] < 1 && s[static_cast<std::size_t>(i)] != -1)
        invalid("unflatten size " + std::to_string(s[static_cast<std::size_t>(i)]) + " at position " +
                std::to_string(i) + " must be at least 1 (or -1, inferred)");
    const std::vector<std::string> new_names = strings(n, names, "names");
    give(make_handle(mesh.unflatten(dim, s, new_names, new_dim_backends(config, new_names))), out);
  });
}

}  // namespace

extern "C" {

int devmesh_dim_within_hosts(devmesh_t m, const char* dim, int* within) {
  return guard("devmesh_dim_within_hosts", [&] {
    need(within, "within");
    const Mesh& mesh = mesh_of(m);
    const std::string_view d = dim_arg(dim);
    const bool w = devmesh::dim_within_hosts(mesh, d);
    *within = w ? 1 : 0;
  });
}

int devmesh_dim_within(devmesh_t m, const char* dim, const char* level, int* within) {
  return guard("devmesh_dim_within", [&] {
    need(within, "within");
    need(level, "level");
    const bool w = devmesh::dim_within(mesh_of(m), dim_arg(dim), level);
    *within = w ? 1 : 0;
  });
}

int devmesh_backend_comm(devmesh_t m, const char* dim, const char* backend, void** handle) {
  return guard("devmesh_backend_comm", [&] {
    const Mesh& mesh = mesh_of(m);
    need(handle, "the handle output pointer");
    devmesh::Communicator& c = mesh.communicator(dim_arg(dim));
    if (backend && c.backend() != backend)
      invalid("dim '" + std::string(dim ? dim : mesh.names().at(0)) + "' runs on backend '" + std::string(c.backend()) +
              "', not '" + backend + "'");
    void* h = c.native_handle();
    if (!h) throw Error(Status::unsupported, "backend '" + std::string(c.backend()) + "' gives no native handle");
    *handle = h;
  });
}

int devmesh_dim_backend(devmesh_t m, const char* dim, const char** backend) {
  return guard("devmesh_dim_backend", [&] {
    const Mesh& mesh = mesh_of(m);
    need(backend, "the backend output pointer");
    *backend = mesh.backend(dim_arg(dim)).data();
  });
}

int devmesh_register_backend(const devmesh_backend_v1_t* backend) {
  return guard("devmesh_register_backend", [&] { devmesh::register_backend(backend); });
}

int devmesh_destroy(devmesh_t* mesh) {
  return guard("devmesh_destroy", [&] {
    if (!mesh || !*mesh) return;
    std::unique_ptr<devmesh_s> h = live_handles().remove(*mesh);
    if (!h) invalid(std::string("*mesh is ") + stale_handle_text());
    *mesh = nullptr;
  });
}

int devmesh_slice(devmesh_t m, int n, const char* const dims[], devmesh_t* out) {
  return guard("devmesh_slice", [&] {
    const Mesh& mesh = mesh_of(m);
    need(out, "the output handle pointer");
    if (n < 1) invalid("n is " + std::to_string(n) + "; a slice needs at least one dim");
    need(dims, "dims");
    give(make_handle(mesh.slice(strings(n, dims, "dims"))), out);
  });
}

int devmesh_flatten(devmesh_t m, const char* name, devmesh_t* out) {
  return flatten_c("devmesh_flatten", m, name, nullptr, out);
}

int devmesh_flatten_ex(devmesh_t m, const char* name, const devmesh_config_t* config, devmesh_t* out) {
  return flatten_c("devmesh_flatten_ex", m, name, config, out);
}

int devmesh_unflatten(devmesh_t m, const char* dim, int n, const int sizes[], const char* const names[],
                      devmesh_t* out) {
  return unflatten_c("devmesh_unflatten", m, dim, n, sizes, names, nullptr, out);
}

int devmesh_unflatten_ex(devmesh_t m, const char* dim, int n, const int sizes[], const char* const names[],
                         const devmesh_config_t* config, devmesh_t* out) {
  return unflatten_c("devmesh_unflatten_ex", m, dim, n, sizes, names, config, out);
}

int devmesh_root(devmesh_t m, devmesh_t* out) {
  return guard("devmesh_root", [&] {
    const Mesh& mesh = mesh_of(m);
    need(out, "the output handle pointer");
    give(make_handle(mesh.root()), out);
  });
}

int devmesh_concatenate(int n, const devmesh_t meshes[], devmesh_t* out) {
  return guard("devmesh_concatenate", [&] {
    need(out, "the output handle pointer");
    if (n < 1) invalid("n is " + std::to_string(n) + "; concatenate needs at least one mesh");
    need(meshes, "meshes");
    std::vector<Mesh> parts;
    parts.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      if (!meshes[i]) invalid("meshes[" + std::to_string(i) + "] is NULL");
      const devmesh_s* h = live_handles().find(meshes[i]);
      if (!h) invalid("meshes[" + std::to_string(i) + "] is " + stale_handle_text());
      parts.push_back(h->mesh);
    }
    give(make_handle(Mesh::concatenate(parts)), out);
  });
}

int devmesh_ndim(devmesh_t m, int* ndim) {
  return guard("devmesh_ndim", [&] {
    const Mesh& mesh = mesh_of(m);
    need(ndim, "ndim");
    *ndim = mesh.ndim();
  });
}

int devmesh_size(devmesh_t m, const char* dim, int* size) {
  return guard("devmesh_size", [&] {
    const Mesh& mesh = mesh_of(m);
    need(size, "size");
    const int s = dim ? mesh.size(dim_arg(dim)) : mesh.size();
    *size = s;
  });
}

int devmesh_shape(devmesh_t m, int maxdims, int shape[]) {
  return guard("devmesh_shape", [&] {
    const Mesh& mesh = mesh_of(m);
    need(shape, "shape");
    copy_ints(mesh.shape(), maxdims, "maxdims", "shape", shape);
  });
}

int devmesh_dim_name(devmesh_t m, int index, const char** name) {
  return guard("devmesh_dim_name", [&] {
    const devmesh_s& h = handle_of(m);
    need(name, "name");
    if (index < 0 || static_cast<std::size_t>(index) >= h.names.size())
      invalid("dim index " + std::to_string(index) + " is out of range [0, " + std::to_string(h.names.size()) + ")");
    *name = h.names[static_cast<std::size_t>(index)].c_str();
  });
}

int devmesh_local_rank(devmesh_t m, const char* dim, int* rank) {
  return guard("devmesh_local_rank", [&] {
    const Mesh& mesh = mesh_of(m);
    need(rank, "rank");
    const int r = mesh.local_rank(dim_arg(dim));
    *rank = r;
  });
}

int devmesh_coordinate(devmesh_t m, int maxdims, int coord[]) {
  return guard("devmesh_coordinate", [&] {
    const Mesh& mesh = mesh_of(m);
    need(coord, "coord");
    copy_ints(mesh.coordinate(), maxdims, "maxdims", "coord", coord);
  });
}

int devmesh_group_ranks(devmesh_t m, const char* dim, int maxranks, int ranks[]) {
  return guard("devmesh_group_ranks", [&] {
    const Mesh& mesh = mesh_of(m);
    need(ranks, "ranks");
    copy_ints(mesh.group(dim_arg(dim)), maxranks, "maxranks", "ranks", ranks);
  });
}

int devmesh_all_groups(devmesh_t m, const char* dim, int maxranks, int ranks[]) {
  return guard("devmesh_all_groups", [&] {
    const Mesh& mesh = mesh_of(m);
    need(ranks, "ranks");
    const auto groups = mesh.all_groups(dim_arg(dim));
    std::vector<int> flat;
    for (const auto& g : groups) flat.insert(flat.end(), g.begin(), g.end());
    copy_ints(flat, maxranks, "maxranks", "ranks", ranks);
  });
}

int devmesh_root_size(devmesh_t m, int* size) {
  return guard("devmesh_root_size", [&] {
    const Mesh& mesh = mesh_of(m);
    need(size, "size");
    *size = static_cast<int>(mesh.view().root_size());
  });
}

int devmesh_parent_rank(devmesh_t m, int* rank) {
  return guard("devmesh_parent_rank", [&] {
    const Mesh& mesh = mesh_of(m);
    need(rank, "rank");
    *rank = mesh.parent_rank();
  });
}

int devmesh_comm_count(devmesh_t m, int* count) {
  return guard("devmesh_comm_count", [&] {
    const Mesh& mesh = mesh_of(m);
    need(count, "count");
    *count = mesh.comm_count();
  });
}

int devmesh_comm(devmesh_t m, const char* dim, MPI_Comm* comm) {
  return guard("devmesh_comm", [&] {
    const Mesh& mesh = mesh_of(m);
    need(comm, "comm");
    const MPI_Comm c = mesh.comm(dim_arg(dim));
    *comm = c;
  });
}

int devmesh_create_comms(devmesh_t m, int path) {
  return guard("devmesh_create_comms", [&] {
    const Mesh& mesh = mesh_of(m);
    // An unknown path is refused by create_comms after its cross-member
    // check (refused here, other members would wait in that check forever).
    mesh.create_comms(static_cast<devmesh::CommPath>(path));
  });
}

int devmesh_cart_comm(devmesh_t m, MPI_Comm* comm) {
  return guard("devmesh_cart_comm", [&] {
    const Mesh& mesh = mesh_of(m);
    need(comm, "comm");
    const MPI_Comm c = mesh.cart_comm();
    *comm = c;
  });
}

// ---- Cartesian views, neighbours, groups with their communicator ----------

namespace {

// The count against the view's dims is Mesh::cart_comm's check.
std::vector<bool> periods_arg(int ndims, const int periodic[]) {
  if (ndims < 0) invalid("ndims is " + std::to_string(ndims) + " (give one periodic flag per dim, or 0 for none)");
  if (ndims == 0) return {};
  need(periodic, "periodic");
  return std::vector<bool>(periodic, periodic + ndims);
}

// The groups of dim after checking the caller's array holds W ints, before
// the collective comm(dim), so a short array fails alike on every member
// without a communicator being made.
devmesh::Groups groups_with_comm(const Mesh& mesh, const char* dim, int maxranks, int ranks[]) {
  need(ranks, "ranks");
  const std::string_view d = dim_arg(dim);
  const auto w = mesh.view().root_size();
  mesh.size(d);  // an unknown dim is reported before the capacity
  if (maxranks < 0 || maxranks < w)
    invalid("maxranks is " + std::to_string(maxranks) + " but ranks needs " + std::to_string(w) + " entries");
  return mesh.all_groups_with_comm(d);
}

void copy_groups(const devmesh::Groups& g, int ranks[], int* own) noexcept {
  std::size_t i = 0;
  for (const auto& group : g.ranks)
    for (int r : group) ranks[i++] = r;
  if (own) *own = static_cast<int>(g.own);
}

}  // namespace

int devmesh_cart_comm_periodic(devmesh_t m, int ndims, const int periodic[], MPI_Comm* comm) {
  return guard("devmesh_cart_comm_periodic", [&] {
    const Mesh& mesh = mesh_of(m);
    need(comm, "comm");
    const MPI_Comm c = mesh.cart_comm(periods_arg(ndims, periodic));
    *comm = c;
  });
}

int devmesh_neighbors(devmesh_t m, const char* dim, int periodic, int distance, int* prev, int* next, int* parent_prev,
                      int* parent_next) {
  return guard("devmesh_neighbors", [&] {
    const Mesh& mesh = mesh_of(m);
    const devmesh::Neighbors n = mesh.neighbors(dim_arg(dim), periodic != 0, distance);
    if (prev) *prev = n.prev;
    if (next) *next = n.next;
    if (parent_prev) *parent_prev = n.parent_prev;
    if (parent_next) *parent_next = n.parent_next;
  });
}

int devmesh_all_groups_comm(devmesh_t m, const char* dim, int maxranks, int ranks[], int* own, MPI_Comm* comm) {
  return guard("devmesh_all_groups_comm", [&] {
    const Mesh& mesh = mesh_of(m);
    need(comm, "comm");
    const devmesh::Groups g = groups_with_comm(mesh, dim, maxranks, ranks);
    copy_groups(g, ranks, own);
    *comm = g.comm;
  });
}

int devmesh_revoke(devmesh_t m) {
  return guard("devmesh_revoke", [&] { mesh_of(m).revoke(); });
}

int devmesh_is_revoked(devmesh_t m, int* revoked) {
  return guard("devmesh_is_revoked", [&] {
    const Mesh& mesh = mesh_of(m);
    need(revoked, "revoked");
    *revoked = mesh.is_revoked() ? 1 : 0;
  });
}

int devmesh_failed_ranks(devmesh_t m, int maxranks, int ranks[], int* nfailed) {
  return guard("devmesh_failed_ranks", [&] {
    const Mesh& mesh = mesh_of(m);
    need(nfailed, "nfailed");
    const std::vector<int> failed = mesh.failed_ranks();
    if (!failed.empty()) need(ranks, "ranks");
    copy_ints(failed, maxranks, "maxranks", "ranks", ranks);
    *nfailed = static_cast<int>(failed.size());
  });
}

int devmesh_agree(devmesh_t m, int* flag) {
  return guard("devmesh_agree", [&] {
    const Mesh& mesh = mesh_of(m);
    need(flag, "flag");
    *flag = mesh.agree(*flag != 0) ? 1 : 0;
  });
}

int devmesh_shrink(devmesh_t m, const char* dim, devmesh_t* survivors) {
  return guard("devmesh_shrink", [&] {
    const Mesh& mesh = mesh_of(m);
    need(survivors, "the survivors output pointer");
    std::optional<std::string_view> d;
    if (dim) d = dim_arg(dim);
    Mesh out = mesh.shrink(d);
    if (!out.is_member()) {
      *survivors = nullptr;
      return;
    }
    give(make_handle(std::move(out)), survivors);
  });
}

int devmesh_root_index(devmesh_t m, int* index) {
  return guard("devmesh_root_index", [&] {
    const Mesh& mesh = mesh_of(m);
    need(index, "index");
    *index = mesh.root_index();
  });
}

int devmesh_shrunk_index(devmesh_t m, int old_index, int* new_index) {
  return guard("devmesh_shrunk_index", [&] {
    const Mesh& mesh = mesh_of(m);
    need(new_index, "new_index");
    *new_index = mesh.shrunk_index(old_index);
  });
}

}  // extern "C"

extern "C" {

const char* devmesh_status_string(int status) {
  // A string_view into the status table's literals: NUL-terminated.
  return devmesh::status_description(status).data();
}

const char* devmesh_last_error(void) { return last_error_text.c_str(); }

int devmesh_version(int* major, int* minor, int* patch) {
  if (major) *major = DEVMESH_LIB_VERSION_MAJOR;
  if (minor) *minor = DEVMESH_LIB_VERSION_MINOR;
  if (patch) *patch = DEVMESH_LIB_VERSION_PATCH;
  return DEVMESH_SUCCESS;
}

}  // extern "C"
