// The C API (include/devmesh/devmesh.h): a thin layer over devmesh::Mesh.
//
// Every entry point runs its body through guard(), the one place where C++
// exceptions become status codes: devmesh::Error maps to its status,
// std::bad_alloc and anything else to DEVMESH_ERR_INTERNAL, and the detail
// goes to a thread_local for devmesh_last_error(). Bodies compute into
// locals and write output parameters last, with non-throwing stores, so a
// failing call never writes them.
#include "devmesh/devmesh.h"

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capi/version.h"
#include "devmesh/backend_plugin.h"
#include "devmesh/hosts.hpp"
#include "devmesh/mesh.hpp"
#include "runtime/creation.hpp"

// A handle: one view of a root mesh, plus its dim names as stable C strings
// (devmesh_dim_name hands them out borrowed, for the handle's lifetime).
struct devmesh_s {
  devmesh::Mesh mesh;
  std::vector<std::string> names;
};

namespace {

using devmesh::Error;
using devmesh::Mesh;
using devmesh::Status;

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
static_assert(DEVMESH_COMM_PATH_AUTOMATIC == static_cast<int>(devmesh::CommPath::automatic));
static_assert(DEVMESH_COMM_PATH_CREATE_GROUP == static_cast<int>(devmesh::CommPath::create_group));
static_assert(DEVMESH_COMM_PATH_SPLIT == static_cast<int>(devmesh::CommPath::split));
static_assert(DEVMESH_COMM_PATH_CART_SUB == static_cast<int>(devmesh::CommPath::cart_sub));
static_assert(DEVMESH_COMM_ERRORS_INHERIT == static_cast<int>(devmesh::CommErrors::inherit));
static_assert(DEVMESH_COMM_ERRORS_RETURN == static_cast<int>(devmesh::CommErrors::return_codes));

thread_local std::string last_error_text;

// Stores "fn: detail" for devmesh_last_error(); never throws. Out of memory,
// it falls back to a text short enough for the small-string buffer.
void remember(const char* fn, std::string_view prefix, std::string_view detail) noexcept {
  try {
    std::string text(fn);
    text += ": ";
    text += prefix;
    text += detail;
    last_error_text = std::move(text);
  } catch (...) {
    last_error_text.clear();
    last_error_text.assign("out of memory");
  }
}

template <class Body>
int guard(const char* fn, Body&& body) noexcept {
  try {
    body();
    return DEVMESH_SUCCESS;
  } catch (const Error& e) {
    remember(fn, {}, e.what());
    return static_cast<int>(e.status());
  } catch (const std::bad_alloc&) {
    remember(fn, {}, "out of memory");
    return DEVMESH_ERR_INTERNAL;
  } catch (const std::exception& e) {
    remember(fn, "internal error: ", e.what());
    return DEVMESH_ERR_INTERNAL;
  } catch (...) {
    remember(fn, "internal error: ", "unknown exception");
    return DEVMESH_ERR_INTERNAL;
  }
}

[[noreturn]] void invalid(const std::string& what) { throw Error(Status::invalid_argument, what); }

template <class T>
T* need(T* p, const char* what) {
  if (!p) invalid(std::string(what) + " is NULL");
  return p;
}

const Mesh& mesh_of(devmesh_t m) {
  if (!m) invalid("the mesh handle is NULL");
  return m->mesh;
}

// A dim argument: NULL means "the only dim of a 1-D view" (the C++ API's
// empty name); an empty C string is an error, not that shorthand.
std::string_view dim_arg(const char* dim) {
  if (!dim) return {};
  if (!*dim) invalid("the dim name is empty (pass NULL for the only dim of a 1-D view)");
  return dim;
}

std::vector<std::string> strings(int n, const char* const a[], const char* what) {
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (!a[i]) invalid(std::string(what) + "[" + std::to_string(i) + "] is NULL");
    out.emplace_back(a[i]);
  }
  return out;
}

std::unique_ptr<devmesh_s> make_handle(Mesh mesh) {
  auto h = std::make_unique<devmesh_s>();
  h->names = mesh.names();
  h->mesh = std::move(mesh);
  return h;
}

// Stores a new handle into *out: the last step of a successful call.
void give(std::unique_ptr<devmesh_s> h, devmesh_t* out) noexcept { *out = h.release(); }

void copy_ints(const std::vector<int>& v, int out[]) noexcept {
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = v[i];
}

// Checks the caller's capacity before writing anything, so a short array is
// reported instead of overrun and the output stays untouched.
void copy_ints(const std::vector<int>& v, int capacity, const char* capacity_name, const char* array_name,
               int out[]) {
  if (capacity < 0 || static_cast<std::size_t>(capacity) < v.size())
    invalid(std::string(capacity_name) + " is " + std::to_string(capacity) + " but " + array_name + " needs " +
            std::to_string(v.size()) + " entries");
  copy_ints(v, out);
}

// Items of a C option string: "a,b,c" split at `sep`; empty items are
// refused (a doubled or trailing separator is a typo).
std::vector<std::string> items(std::string_view text, char sep, const char* field) {
  std::vector<std::string> out;
  while (true) {
    const std::size_t at = text.find(sep);
    const std::string_view item = text.substr(0, at);
    if (item.empty())
      invalid(std::string(field) + " has an empty entry (a doubled or trailing '" + std::string(1, sep) + "')");
    out.emplace_back(item);
    if (at == std::string_view::npos) return out;
    text.remove_prefix(at + 1);
  }
}

// What a C config asks of a creation: the options, and the rank list if it
// has one.
struct Creation {
  devmesh::MeshOptions options;
  std::optional<std::vector<int>> ranks;
};

// The C config as a Creation. A config shorter than ours (an older caller)
// leaves the fields it lacks unset.
Creation creation_of(const devmesh_config_t* cfg) {
  Creation out;
  devmesh::MeshOptions& o = out.options;
  if (!cfg) return out;
  if (cfg->magic != DEVMESH_CONFIG_MAGIC)
    invalid("the config was not initialised with DEVMESH_CONFIG_INITIALIZER (wrong magic)");
  constexpr std::size_t known = offsetof(devmesh_config_t, backend) + sizeof(const char*);
  if (cfg->size < known || cfg->size > (std::size_t{1} << 16))
    invalid("the config's size field (" + std::to_string(cfg->size) + ") is not a devmesh_config_t size");
  devmesh_config_t c = DEVMESH_CONFIG_INITIALIZER;
  std::memcpy(&c, cfg, std::min(cfg->size, sizeof c));
  if (c.backend) o.backend = c.backend;
  if (c.dim_backends && *c.dim_backends) {
    for (const std::string& item : items(c.dim_backends, ',', "dim_backends")) {
      const std::size_t eq = item.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
        invalid("dim_backends entry '" + item + "' is not of the form dim=backend");
      o.dim_backends.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
  }
  if (c.backend_options && *c.backend_options) o.backend_options = items(c.backend_options, ',', "backend_options");
  if (c.dim_options && *c.dim_options) {
    for (const std::string& group : items(c.dim_options, ';', "dim_options")) {
      const std::size_t colon = group.find(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == group.size())
        invalid("dim_options entry '" + group + "' is not of the form dim:key=value[,key=value...]");
      const std::string dim = group.substr(0, colon);
      for (std::string& option : items(std::string_view(group).substr(colon + 1), ',', "dim_options"))
        o.dim_options.emplace_back(dim, std::move(option));
    }
  }
  if (c.comm_errors != DEVMESH_CONFIG_UNSET && c.comm_errors != DEVMESH_COMM_ERRORS_INHERIT &&
      c.comm_errors != DEVMESH_COMM_ERRORS_RETURN)
    invalid("comm_errors " + std::to_string(c.comm_errors) + " is not a devmesh_comm_errors");
  if (c.comm_errors != DEVMESH_CONFIG_UNSET) o.comm_errors = static_cast<devmesh::CommErrors>(c.comm_errors);
  if (c.host_aware != DEVMESH_CONFIG_UNSET && c.host_aware != 0 && c.host_aware != 1)
    invalid("host_aware " + std::to_string(c.host_aware) + " is neither 0 nor 1");
  o.host_aware = c.host_aware == 1;
  if (c.nranks == DEVMESH_CONFIG_UNSET) {
    if (c.ranks) invalid("ranks is set but nranks is not: the rank list needs its length");
  } else {
    if (c.nranks < 1) invalid("nranks is " + std::to_string(c.nranks) + "; the rank list needs at least one rank");
    if (!c.ranks) invalid("nranks is " + std::to_string(c.nranks) + " but ranks is NULL");
    out.ranks.emplace(c.ranks, c.ranks + c.nranks);
  }
  return out;
}

// Runs a creation request built from C arguments. What the C layer finds
// wrong on this rank (NULL pointers, ndim < 1, a malformed config) does not
// fail here: `read` stores it in the request, and the rank joins the
// creation's collective calls, so that every rank fails alike (the same
// status where all found the same problem, else INCONSISTENT) instead of
// leaving the others waiting. Problems that leave nothing to communicate
// over (a NULL parent or group, a NULL tag) fail at once, on this rank.
template <class Read>
void run(devmesh::detail::CreationRequest r, const devmesh_config_t* config, devmesh_t* mesh, Read&& read) {
  try {
    Creation c = creation_of(config);
    r.options = std::move(c.options);
    need(mesh, "the mesh output pointer");
    read(r, c);
  } catch (const Error& e) {
    r.error = e;
  }
  Mesh m = devmesh::detail::create(std::move(r));
  if (!m.is_member()) {
    *mesh = nullptr;
    return;
  }
  give(make_handle(std::move(m)), mesh);
}

// A shape and its names, as every creation but adoption takes them. Each
// is read where it can be, so that a rank with one bad argument differs
// from the others in that argument only; the first problem is thrown.
void read_shape(devmesh::detail::CreationRequest& r, int ndim, const int shape[], const char* const names[]) {
  if (ndim < 1) invalid("ndim is " + std::to_string(ndim) + "; a mesh needs at least one dim");
  if (shape) r.shape.assign(shape, shape + ndim);
  if (names) r.names = strings(ndim, names, "names");
  need(shape, "shape");
  need(names, "names");
}

using devmesh::detail::CreationKind;

// devmesh_create*.
int create(const char* fn, MPI_Comm parent, int ndim, const int shape[], const char* const names[],
           devmesh_t* mesh, const devmesh_config_t* config = nullptr) {
  return guard(fn, [&] {
    if (parent == MPI_COMM_NULL) invalid("the parent communicator is MPI_COMM_NULL");
    devmesh::detail::CreationRequest r;
    r.parent = parent;
    run(std::move(r), config, mesh, [&](devmesh::detail::CreationRequest& req, Creation& c) {
      if (c.ranks) {
        req.kind = CreationKind::ranks;
        req.ranks = std::move(*c.ranks);
      }
      read_shape(req, ndim, shape, names);
    });
  });
}

// devmesh_create_from_comms*.
int create_from_comms(const char* fn, MPI_Comm parent, int ndim, const std::vector<MPI_Comm>* comms,
                      const char* const names[], const devmesh_config_t* config, devmesh_t* mesh) {
  return guard(fn, [&] {
    if (parent == MPI_COMM_NULL) invalid("the parent communicator is MPI_COMM_NULL");
    devmesh::detail::CreationRequest r;
    r.kind = CreationKind::comms;
    r.parent = parent;
    run(std::move(r), config, mesh, [&](devmesh::detail::CreationRequest& req, Creation& c) {
      if (c.ranks) invalid("a rank list does not apply to adopted communicators: their ranks give the order");
      if (ndim < 1) invalid("ndim is " + std::to_string(ndim) + "; a mesh needs at least one dim");
      need(comms, "comms");
      need(names, "names");
      req.comms = *comms;
      req.names = strings(ndim, names, "names");
    });
  });
}

// devmesh_create_from_group*.
int create_from_group(const char* fn, MPI_Group group, const char* tag, int ndim, const int shape[],
                      const char* const names[], const devmesh_config_t* config, devmesh_t* mesh) {
  return guard(fn, [&] {
    need(tag, "tag");
    devmesh::detail::CreationRequest r;
    r.kind = CreationKind::group;
    r.group = group;
    r.tag = tag;
    run(std::move(r), config, mesh, [&](devmesh::detail::CreationRequest& req, Creation& c) {
      if (c.ranks) invalid("a rank list does not apply to a mesh from a group: the group lists the members");
      read_shape(req, ndim, shape, names);
    });
  });
}

// devmesh_create_hosts*.
int create_hosts(const char* fn, MPI_Comm parent, const char* host_dim, const char* local_dim, devmesh_t* mesh) {
  return guard(fn, [&] {
    if (parent == MPI_COMM_NULL) invalid("the parent communicator is MPI_COMM_NULL");
    devmesh::detail::CreationRequest r;
    r.kind = CreationKind::hosts;
    r.parent = parent;
    r.names = {host_dim ? host_dim : "host", local_dim ? local_dim : "local"};
    run(std::move(r), nullptr, mesh, [](devmesh::detail::CreationRequest&, Creation&) {});
  });
}

std::optional<std::vector<MPI_Comm>> c_comms(int ndim, const MPI_Comm comms[]) {
  if (!comms || ndim < 1) return std::nullopt;
  return std::vector<MPI_Comm>(comms, comms + ndim);
}

}  // namespace

extern "C" {

int devmesh_create(MPI_Comm parent, int ndim, const int shape[], const char* const names[],
                   devmesh_t* mesh) {
  return create("devmesh_create", parent, ndim, shape, names, mesh);
}

int devmesh_create_ex(MPI_Comm parent, int ndim, const int shape[], const char* const names[],
                      const devmesh_config_t* config, devmesh_t* mesh) {
  return create("devmesh_create_ex", parent, ndim, shape, names, mesh, config);
}


int devmesh_create_hosts(MPI_Comm parent, const char* host_dim, const char* local_dim, devmesh_t* mesh) {
  return create_hosts("devmesh_create_hosts", parent, host_dim, local_dim, mesh);
}

int devmesh_dim_within_hosts(devmesh_t m, const char* dim, int* within) {
  return guard("devmesh_dim_within_hosts", [&] {
    need(within, "within");
    const Mesh& mesh = mesh_of(m);
    const std::string_view d = dim_arg(dim);
    const bool w = devmesh::dim_within_hosts(mesh, d);
    *within = w ? 1 : 0;
  });
}

int devmesh_backend_comm(devmesh_t m, const char* dim, const char* backend, void** handle) {
  return guard("devmesh_backend_comm", [&] {
    const Mesh& mesh = mesh_of(m);
    need(handle, "the handle output pointer");
    devmesh::Communicator& c = mesh.communicator(dim_arg(dim));
    if (backend && c.backend() != backend)
      invalid("dim '" + std::string(dim ? dim : mesh.names().at(0)) + "' runs on backend '" +
              std::string(c.backend()) + "', not '" + backend + "'");
    void* h = c.native_handle();
    if (!h)
      throw Error(Status::unsupported, "backend '" + std::string(c.backend()) + "' gives no native handle");
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
    std::unique_ptr<devmesh_s> h(*mesh);
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
  return guard("devmesh_flatten", [&] {
    const Mesh& mesh = mesh_of(m);
    need(out, "the output handle pointer");
    std::optional<std::string> n;
    if (name) n = name;
    give(make_handle(mesh.flatten(std::move(n))), out);
  });
}

int devmesh_unflatten(devmesh_t m, const char* dim, int n, const int sizes[], const char* const names[],
                      devmesh_t* out) {
  return guard("devmesh_unflatten", [&] {
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
    give(make_handle(mesh.unflatten(dim, s, strings(n, names, "names"))), out);
  });
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
      parts.push_back(meshes[i]->mesh);
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
    mesh_of(m);
    need(name, "name");
    if (index < 0 || static_cast<std::size_t>(index) >= m->names.size())
      invalid("dim index " + std::to_string(index) + " is out of range [0, " + std::to_string(m->names.size()) +
              ")");
    *name = m->names[static_cast<std::size_t>(index)].c_str();
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

int devmesh_neighbors(devmesh_t m, const char* dim, int periodic, int distance, int* prev, int* next,
                      int* parent_prev, int* parent_next) {
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

}  // extern "C"

// ---- collectives over a dim ------------------------------------------------
namespace {

static_assert(DEVMESH_INT8 == static_cast<int>(devmesh::DataType::int8));
static_assert(DEVMESH_BFLOAT16 == static_cast<int>(devmesh::DataType::bfloat16));
static_assert(DEVMESH_FLOAT64 == static_cast<int>(devmesh::DataType::float64));
static_assert(DEVMESH_SUM == static_cast<int>(devmesh::ReduceOp::sum));
static_assert(DEVMESH_MAX == static_cast<int>(devmesh::ReduceOp::max));

devmesh::DataType datatype_arg(int t) {
  if (t < DEVMESH_INT8 || t > DEVMESH_FLOAT64) invalid("unknown datatype " + std::to_string(t));
  return static_cast<devmesh::DataType>(t);
}

devmesh::ReduceOp op_arg(int op) {
  if (op < DEVMESH_SUM || op > DEVMESH_MAX) invalid("unknown reduction op " + std::to_string(op));
  return static_cast<devmesh::ReduceOp>(op);
}

// A buffer of count elements, times blocks (the group's size for the
// "all" side of allgather, reduce_scatter and alltoall): NULL only when
// empty, and a byte size that fits in size_t.
void buffer_arg(const void* p, std::size_t count, devmesh::DataType t, std::size_t blocks,
                const char* what) {
  const std::size_t es = devmesh::size_of(t);
  if (count > 0 && p == nullptr) invalid(std::string(what) + " is NULL with count > 0");
  if (blocks > 0 && count > SIZE_MAX / es / blocks)
    invalid("count " + std::to_string(count) + " x " + std::to_string(blocks) +
            " elements overflow the byte size of " + what);
}

// A local rank of dim's group (root or peer).
void rank_arg(const Mesh& mesh, std::string_view dim, int r, const char* what) {
  const int n = mesh.size(dim);
  if (r < 0 || r >= n)
    invalid(std::string(what) + " " + std::to_string(r) + " is outside the group of " +
            std::to_string(n) + " ranks");
}

// A point to point peer: a local rank, or MPI_PROC_NULL.
void peer_arg(const Mesh& mesh, std::string_view dim, int peer, const char* what) {
  if (peer != MPI_PROC_NULL) rank_arg(mesh, dim, peer, what);
}

std::size_t group_size(const Mesh& mesh, std::string_view dim) {
  return static_cast<std::size_t>(mesh.size(dim));
}

}  // namespace

extern "C" {

int devmesh_allreduce(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count,
                      int datatype, int op, void* stream) {
  return guard("devmesh_allreduce", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    const auto o = op_arg(op);
    mesh.size(d);  // an unknown dim before anything else about buffers
    buffer_arg(sendbuf, count, t, 1, "sendbuf");
    buffer_arg(recvbuf, count, t, 1, "recvbuf");
    mesh.communicator(d).allreduce(sendbuf, recvbuf, count, t, o, stream);
  });
}

int devmesh_allgather(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count,
                      int datatype, void* stream) {
  return guard("devmesh_allgather", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    const std::size_t n = group_size(mesh, d);
    buffer_arg(sendbuf, count, t, 1, "sendbuf");
    buffer_arg(recvbuf, count, t, n, "recvbuf");
    mesh.communicator(d).allgather(sendbuf, recvbuf, count, t, stream);
  });
}

int devmesh_reduce_scatter(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count,
                           int datatype, int op, void* stream) {
  return guard("devmesh_reduce_scatter", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    const auto o = op_arg(op);
    const std::size_t n = group_size(mesh, d);
    buffer_arg(sendbuf, count, t, n, "sendbuf");
    buffer_arg(recvbuf, count, t, 1, "recvbuf");
    mesh.communicator(d).reduce_scatter(sendbuf, recvbuf, count, t, o, stream);
  });
}

int devmesh_broadcast(devmesh_t m, const char* dim, void* buffer, size_t count, int datatype, int root,
                      void* stream) {
  return guard("devmesh_broadcast", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    rank_arg(mesh, d, root, "root");
    buffer_arg(buffer, count, t, 1, "buffer");
    mesh.communicator(d).broadcast(buffer, count, t, root, stream);
  });
}

int devmesh_alltoall(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count,
                     int datatype, void* stream) {
  return guard("devmesh_alltoall", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    const std::size_t n = group_size(mesh, d);
    buffer_arg(sendbuf, count, t, n, "sendbuf");
    buffer_arg(recvbuf, count, t, n, "recvbuf");
    mesh.communicator(d).alltoall(sendbuf, recvbuf, count, t, stream);
  });
}

int devmesh_barrier(devmesh_t m, const char* dim, void* stream) {
  return guard("devmesh_barrier", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    mesh.size(d);
    mesh.communicator(d).barrier(stream);
  });
}

int devmesh_send(devmesh_t m, const char* dim, const void* buffer, size_t count, int datatype, int peer,
                 void* stream) {
  return guard("devmesh_send", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    peer_arg(mesh, d, peer, "peer");
    buffer_arg(buffer, count, t, 1, "buffer");
    mesh.communicator(d).send(buffer, count, t, peer, stream);
  });
}

int devmesh_recv(devmesh_t m, const char* dim, void* buffer, size_t count, int datatype, int peer,
                 void* stream) {
  return guard("devmesh_recv", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    peer_arg(mesh, d, peer, "peer");
    buffer_arg(buffer, count, t, 1, "buffer");
    mesh.communicator(d).recv(buffer, count, t, peer, stream);
  });
}

}  // extern "C"

// A pending request at the C boundary.
struct devmesh_request_s {
  devmesh::Request request;
};

namespace {

template <bool Send, class Buffer>
int start(const char* fn, devmesh_t m, const char* dim, Buffer buffer, size_t count, int datatype, int peer,
          void* stream, devmesh_request_t* request) {
  return guard(fn, [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    need(request, "request");
    peer_arg(mesh, d, peer, "peer");
    buffer_arg(buffer, count, t, 1, "buffer");
    auto r = std::make_unique<devmesh_request_s>();
    devmesh::Communicator& c = mesh.communicator(d);
    r->request = Send ? c.isend(buffer, count, t, peer, stream)
                      : c.irecv(const_cast<void*>(static_cast<const void*>(buffer)), count, t, peer, stream);
    *request = r->request.pending() ? r.release() : DEVMESH_REQUEST_NULL;
  });
}

// Ends *request (freeing it) whatever happens.
void end(devmesh_request_t* request) {
  const std::unique_ptr<devmesh_request_s> r(std::exchange(*request, DEVMESH_REQUEST_NULL));
  if (r) r->request.wait();
}

}  // namespace

extern "C" {

int devmesh_isend(devmesh_t m, const char* dim, const void* buffer, size_t count, int datatype, int peer,
                  void* stream, devmesh_request_t* request) {
  return start<true>("devmesh_isend", m, dim, buffer, count, datatype, peer, stream, request);
}

int devmesh_irecv(devmesh_t m, const char* dim, void* buffer, size_t count, int datatype, int peer,
                  void* stream, devmesh_request_t* request) {
  return start<false>("devmesh_irecv", m, dim, buffer, count, datatype, peer, stream, request);
}

int devmesh_wait(devmesh_request_t* request) {
  return guard("devmesh_wait", [&] { end(need(request, "request")); });
}

int devmesh_test(devmesh_request_t* request, int* done) {
  return guard("devmesh_test", [&] {
    need(request, "request");
    need(done, "done");
    if (!*request) {
      *done = 1;
      return;
    }
    bool finished = false;
    try {
      finished = (*request)->request.test();
    } catch (...) {
      end(request);  // already ended by the failure; frees the handle
      throw;
    }
    if (finished) end(request);
    *done = finished ? 1 : 0;
  });
}

int devmesh_waitall(int n, devmesh_request_t requests[]) {
  int first = DEVMESH_SUCCESS;
  const int checked = guard("devmesh_waitall", [&] {
    if (n < 0) invalid("n " + std::to_string(n) + " is negative");
    if (n > 0) need(requests, "requests");
  });
  if (checked != DEVMESH_SUCCESS) return checked;
  std::string message;
  for (int i = 0; i < n; ++i) {
    const int rc = guard("devmesh_waitall", [&] { end(&requests[i]); });
    if (rc != DEVMESH_SUCCESS && first == DEVMESH_SUCCESS) {
      first = rc;
      message = last_error_text;
    }
  }
  if (first != DEVMESH_SUCCESS) last_error_text = message;
  return first;
}

int devmesh_sendrecv(devmesh_t m, const char* dim, const void* sendbuf, size_t sendcount, int sendtype, int dest,
                     void* recvbuf, size_t recvcount, int recvtype, int source, void* stream) {
  return guard("devmesh_sendrecv", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto st = datatype_arg(sendtype);
    const auto rt = datatype_arg(recvtype);
    peer_arg(mesh, d, dest, "dest");
    peer_arg(mesh, d, source, "source");
    buffer_arg(sendbuf, sendcount, st, 1, "sendbuf");
    buffer_arg(recvbuf, recvcount, rt, 1, "recvbuf");
    mesh.communicator(d).sendrecv(sendbuf, sendcount, st, dest, recvbuf, recvcount, rt, source, stream);
  });
}

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

int devmesh_create_from_comms(MPI_Comm parent, int ndim, const MPI_Comm comms[], const char* const names[],
                              const devmesh_config_t* config, devmesh_t* mesh) {
  const auto v = c_comms(ndim, comms);
  return create_from_comms("devmesh_create_from_comms", parent, ndim, v ? &*v : nullptr, names, config, mesh);
}

int devmesh_create_from_group(MPI_Group group, const char* tag, int ndim, const int shape[],
                              const char* const names[], const devmesh_config_t* config, devmesh_t* mesh) {
  return create_from_group("devmesh_create_from_group", group, tag, ndim, shape, names, config, mesh);
}

}  // extern "C"
