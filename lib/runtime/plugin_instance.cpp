// One opened instance of a backend, and the making of its communicators:
// the plugin's creation steps with the members' outcomes cross-checked.
#include <algorithm>
#include <optional>
#include <vector>

#include "cross_check.hpp"
#include "mpi_check.hpp"
#include "mpi_features.hpp"
#include "plugin_communicator.hpp"
#include "plugins.hpp"

namespace devmesh::detail {
namespace {

// The reductions a backend states it has on an instance, as a mask; every
// pair for a table without reduce_supported (it then answers per call).
std::uint64_t reduce_mask(const PluginTable& t, void* instance) {
  std::uint64_t mask = 0;
  for (int type = 0; type < datatypes; ++type)
    for (int op = 0; op < reductions; ++op)
      if (!t.reduce_supported || t.reduce_supported(instance, type, op) == 1)
        mask |= std::uint64_t{1} << (type * reductions + op);
  return mask;
}

// What a creation step returned, as an Error (success: Status::success).
Error outcome(const PluginTable& t, int rc, void* made, std::string_view step) {
  if (rc != DEVMESH_SUCCESS) return plugin_error(t, rc, step);
  if (!made)
    return Error(Status::backend, "plugin '" + std::string(t.name) + "' returned success from " + std::string(step) +
                                      " with a NULL communicator");
  return Error(Status::success, "");
}

// The members' outcomes of the creation steps, cross-checked over `comm`
// (MPI_COMM_NULL: nothing to cross-check, each rank's failure is its own).
struct Settlement {
  MPI_Comm comm;
  std::string call;
  // This rank's outcome of a step; `undo` releases what this rank made
  // when another rank failed.
  template <class Undo>
  void operator()(const Error& mine, std::span<const Field> fields, Undo&& undo) const {
    if (comm == MPI_COMM_NULL) {
      if (mine.status() != Status::success) throw mine;
      return;
    }
    try {
      cross_check(comm, call, fields, mine.status(), mine.what());
    } catch (...) {
      if (mine.status() == Status::success) undo();
      if (mine.status() != Status::success) throw mine;  // its own message, its MPI code
      throw;
    }
  }
};

// The communicator the core cross-checks over while a plugin makes its
// communicator: a duplicate of the group's, so that the cross-check never
// meets the plugin's own traffic on group.group, which a member that failed
// early would otherwise enter while the others are in the plugin's
// collective (docs/BACKENDS.md, "What older plugins get").
class CrossCheckComm {
 public:
  explicit CrossCheckComm(MPI_Comm group) {
    DEVMESH_MPI(MPI_Comm_dup(group, &comm_));
    return_errors(comm_);
  }
  ~CrossCheckComm() { mpi::free_comm(comm_); }
  CrossCheckComm(const CrossCheckComm&) = delete;
  CrossCheckComm& operator=(const CrossCheckComm&) = delete;
  MPI_Comm get() const noexcept { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace

std::vector<std::pair<std::string, std::string>> split_options(const std::vector<std::string>& items,
                                                               std::string_view what) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& item : items) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(Status::invalid_argument, std::string(what) + " '" + item + "' is not of the form key=value");
    std::string key = item.substr(0, eq);
    for (const auto& [k, v] : out)
      if (k == key) throw Error(Status::invalid_argument, std::string(what) + " '" + key + "' is given twice");
    out.emplace_back(std::move(key), item.substr(eq + 1));
  }
  return out;
}

std::string BackendSpec::key() const {
  std::vector<std::string> sorted = options;
  std::sort(sorted.begin(), sorted.end());
  std::string k = name;
  for (const std::string& o : sorted) k += '\n' + o;
  return k;
}

BackendInstance::BackendInstance(const BackendSpec& spec)
    : table_(&load_backend(spec.name)), options_(split_options(spec.options, "option of backend '" + spec.name + "'")) {
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : options_) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  void* instance = nullptr;
  check(*table_, table_->open(static_cast<int>(options_.size()), keys.data(), values.data(), &instance), "options");
  instance_ = instance;
}

BackendInstance::~BackendInstance() { table_->close(instance_); }

std::unique_ptr<Communicator> BackendInstance::create(const devmesh_backend_group_t& group, Fault* fault) {
  const PluginTable& t = *table_;
  int rank = 0, size = 0;
  DEVMESH_MPI(MPI_Comm_rank(group.group, &rank));
  DEVMESH_MPI(MPI_Comm_size(group.group, &size));
  // Without communication of its own, nothing to cross-check: a failure is
  // this rank's alone, as for any local call. Otherwise the members
  // cross-check over a communicator of the core's own, made before the
  // plugin's first step: a member whose step failed before the plugin
  // communicated must not meet the others' plugin traffic on group.group.
  const bool cross_checked = !(t.capabilities & DEVMESH_BACKEND_CAP_LOCAL_CREATE);
  std::optional<CrossCheckComm> own;
  if (cross_checked) own.emplace(group.group);
  const Settlement settle{own ? own->get() : MPI_COMM_NULL,
                          "creating a backend '" + std::string(t.name) + "' communicator"};
  void* prepared = nullptr;
  const int prepared_rc = t.comm_prepare(t, instance_, &group, &prepared);
  const Error prepared_e =
      prepared_rc == DEVMESH_SUCCESS ? Error(Status::success, "") : plugin_error(t, prepared_rc, "comm_prepare");
  // A step of the plugin's own that may fail before any communication: the
  // members' outcomes are cross-checked before anyone connects.
  if (t.prepares_locally) settle(prepared_e, {}, [&] { t.comm_abandon(t, prepared); });
  if (prepared_e.status() != Status::success) throw prepared_e;
  void* comm = nullptr;
  const int connected_rc = t.comm_connect(t, prepared, &comm);
  const Error connected = outcome(t, connected_rc, comm, t.connect_name);
  settle(connected, {}, [&] { t.comm_destroy(comm); });
  // The two-step creation cross-checks the reductions too, once every
  // member has a communicator to state them for.
  const std::uint64_t mask = reduce_mask(t, instance_);
  const Field reductions_field{"reductions the backend supports", mask};
  if (t.prepares_locally)
    settle(connected, std::span<const Field>(&reductions_field, 1), [&] { t.comm_destroy(comm); });
  try {
    return plugin_communicator(t, comm, rank, size, mask, fault, group.group);
  } catch (...) {
    t.comm_destroy(comm);
    throw;
  }
}

std::string canonical_options(const BackendSpec& spec, const PluginTable* table) {
  std::vector<std::string> kept;
  for (const std::string& item : spec.options) {
    const std::string_view key = std::string_view(item).substr(0, item.find('='));
    bool per_rank = false;
    for (const char* const* p = table ? table->per_rank_keys : nullptr; p && *p; ++p)
      if (key == *p) per_rank = true;
    if (!per_rank) kept.push_back(item);
  }
  std::sort(kept.begin(), kept.end());
  std::string out = spec.name;
  for (const std::string& s : kept) out += '\n' + s;
  return out;
}

}  // namespace devmesh::detail
