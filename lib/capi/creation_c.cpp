// The C API's creation functions (devmesh_create*, include/devmesh/devmesh.h):
// C arguments and the C config translated into a CreationRequest for the
// one creation driver (lib/runtime/creation.hpp).
#include <algorithm>
#include <cstring>
#include <optional>

#include "capi/capi.hpp"
#include "runtime/creation.hpp"

using namespace devmesh::capi;

namespace {

static_assert(DEVMESH_COMM_ERRORS_INHERIT == static_cast<int>(devmesh::CommErrors::inherit));
static_assert(DEVMESH_COMM_ERRORS_RETURN == static_cast<int>(devmesh::CommErrors::return_codes));

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

// "a=b,c=d" as pairs; `form` is an item's form, for the message.
std::vector<std::pair<std::string, std::string>> pairs_of(const char* text, const char* field, const char* form) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& item : items(text, ',', field)) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      invalid(std::string(field) + " entry '" + item + "' is not of the form " + form);
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
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
  if (c.dim_backends && *c.dim_backends) o.dim_backends = pairs_of(c.dim_backends, "dim_backends", "dim=backend");
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
  // comm_errors and deadline are checked with every front end's options (the creation's check_options).
  if (c.comm_errors != DEVMESH_CONFIG_UNSET) o.comm_errors = static_cast<devmesh::CommErrors>(c.comm_errors);
  if (c.host_aware != DEVMESH_CONFIG_UNSET && c.host_aware != 0 && c.host_aware != 1)
    invalid("host_aware " + std::to_string(c.host_aware) + " is neither 0 nor 1");
  o.host_aware = c.host_aware == 1;
  if (c.fault_tolerance != DEVMESH_CONFIG_UNSET && c.fault_tolerance != 0 && c.fault_tolerance != 1)
    invalid("fault_tolerance " + std::to_string(c.fault_tolerance) + " is neither 0 nor 1");
  o.fault_tolerance = c.fault_tolerance == 1;
  o.deadline = c.deadline;
  // spares' other conditions (fault_tolerance, no rank list, fewer than the parent) are the creation's.
  if (c.spares != DEVMESH_CONFIG_UNSET && c.spares < 0)
    invalid("spares is " + std::to_string(c.spares) + "; give 0 or more");
  o.spares = c.spares == DEVMESH_CONFIG_UNSET ? 0 : c.spares;
  if (c.placement && *c.placement) o.placement = pairs_of(c.placement, "placement", "dim=level");
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

// devmesh_create and devmesh_create_ex.
int create(const char* fn, MPI_Comm parent, int ndim, const int shape[], const char* const names[], devmesh_t* mesh,
           const devmesh_config_t* config = nullptr) {
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

// devmesh_create_from_comms.
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

// devmesh_create_from_group.
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

// devmesh_create_hosts.
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

int devmesh_create(MPI_Comm parent, int ndim, const int shape[], const char* const names[], devmesh_t* mesh) {
  return create("devmesh_create", parent, ndim, shape, names, mesh);
}

int devmesh_create_ex(MPI_Comm parent, int ndim, const int shape[], const char* const names[],
                      const devmesh_config_t* config, devmesh_t* mesh) {
  return create("devmesh_create_ex", parent, ndim, shape, names, mesh, config);
}

int devmesh_create_hosts(MPI_Comm parent, const char* host_dim, const char* local_dim, devmesh_t* mesh) {
  return create_hosts("devmesh_create_hosts", parent, host_dim, local_dim, mesh);
}

int devmesh_create_from_comms(MPI_Comm parent, int ndim, const MPI_Comm comms[], const char* const names[],
                              const devmesh_config_t* config, devmesh_t* mesh) {
  const auto v = c_comms(ndim, comms);
  return create_from_comms("devmesh_create_from_comms", parent, ndim, v ? &*v : nullptr, names, config, mesh);
}

int devmesh_create_from_group(MPI_Group group, const char* tag, int ndim, const int shape[], const char* const names[],
                              const devmesh_config_t* config, devmesh_t* mesh) {
  return create_from_group("devmesh_create_from_group", group, tag, ndim, shape, names, config, mesh);
}

}  // extern "C"

namespace devmesh::capi {

// The backends of the dims devmesh_flatten_ex or devmesh_unflatten_ex
// makes (new_names), from the config's backend fields: `backend` (with
// backend_options) for every new dim, dim_backends and dim_options by new
// name, as devmesh_create_ex gives them to a mesh's dims. An empty
// DimBackend: none chosen (the mesh's default backend).
std::vector<devmesh::DimBackend> new_dim_backends(const devmesh_config_t* config,
                                                  const std::vector<std::string>& new_names) {
  std::vector<devmesh::DimBackend> out(new_names.size());
  if (!config) return out;
  const devmesh::MeshOptions o = creation_of(config).options;  // checks magic, size and syntax
  devmesh_config_t c = DEVMESH_CONFIG_INITIALIZER;
  std::memcpy(&c, config, std::min(config->size, sizeof c));
  if (c.nranks != DEVMESH_CONFIG_UNSET || c.ranks || c.host_aware != DEVMESH_CONFIG_UNSET ||
      c.comm_errors != DEVMESH_CONFIG_UNSET || c.fault_tolerance != DEVMESH_CONFIG_UNSET || c.deadline != 0 ||
      c.spares != DEVMESH_CONFIG_UNSET)
    invalid(
        "a new dim takes only the config's backend fields (backend, backend_options, dim_backends, "
        "dim_options); nranks, ranks, host_aware, comm_errors, fault_tolerance, deadline and spares are the "
        "mesh's");
  const std::string fallback = c.backend ? c.backend : "";
  if (fallback.empty() && !o.backend_options.empty())
    invalid(
        "backend_options without a backend (a new dim without one runs on the mesh's default backend, "
        "with the mesh's options)");
  std::string unknown;
  const auto known = [&](const std::string& dim, const char* field) {
    if (std::find(new_names.begin(), new_names.end(), dim) == new_names.end() &&
        unknown.find("'" + dim + "'") == std::string::npos)
      unknown += (unknown.empty() ? "" : ", ") + std::string(field) + " '" + dim + "'";
  };
  for (const auto& [dim, backend] : o.dim_backends) known(dim, "dim_backends");
  for (const auto& [dim, option] : o.dim_options) known(dim, "dim_options");
  if (!unknown.empty()) {
    std::string made;
    for (std::size_t i = 0; i < new_names.size(); ++i) made += (i ? ", " : "") + new_names[i];
    throw Error(Status::unknown_dim, unknown + ": not a dim this call makes (it makes: " + made + ")");
  }
  for (std::size_t i = 0; i < new_names.size(); ++i) {
    devmesh::DimBackend& b = out[i];
    b.name = fallback;
    bool own_options = false;
    for (const auto& [dim, backend] : o.dim_backends)
      if (dim == new_names[i]) b.name = backend;
    for (const auto& [dim, option] : o.dim_options)
      if (dim == new_names[i]) {
        b.options.push_back(option);
        own_options = true;
      }
    if (!own_options && !b.name.empty() && b.name == fallback) b.options = o.backend_options;
  }
  return out;
}

}  // namespace devmesh::capi
