// Backends behind the plugin interface (devmesh/backend_plugin.h): finding
// and loading them by name, one instance per root mesh and option set, and
// their communicators as devmesh::Communicator.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "devmesh/backend.hpp"
#include "devmesh/backend_plugin.h"
#include "plugin_table.hpp"

namespace devmesh::detail {

class Fault;

// The table of backend `name`: registered in process, built in ("mpi"), or
// loaded from libdevmesh-backend-<name>.so and initialised, once per
// process. Thread-safe. Errors: a bad name or no such file anywhere ->
// invalid_argument, saying where it looked; found but unusable (the
// loader's error, no symbol, an ABI version this core does not accept,
// init() failing) -> unsupported, saying why.
const PluginTable& load_backend(std::string_view name);

// The host services given to version 3 plugins (backend_host.cpp).
const devmesh_backend_host_t& backend_host();
// The user's log level (DEVMESH_LOG), and one line of the log.
int log_level();
void log_line(std::string_view backend, int level, std::string_view message);
// The first line of MPI_Get_library_version.
const char* mpi_library();

// A backend and its options, as one dim asks for it.
struct BackendSpec {
  std::string name;
  std::vector<std::string> options;  // "key=value", in the caller's order
  // Identifies the instance among a root's: name and options, canonical.
  std::string key() const;
};

// One opened instance of a backend (open() .. close()).
class BackendInstance {
 public:
  // Loads the backend and opens it with the spec's options. Not collective.
  explicit BackendInstance(const BackendSpec& spec);
  ~BackendInstance();
  BackendInstance(const BackendInstance&) = delete;
  BackendInstance& operator=(const BackendInstance&) = delete;
  // Collective over group.group: comm_prepare and comm_connect, with the
  // members' results cross-checked (unless the backend creates locally), so
  // that every member gets the same status. Where the plugin has no local
  // step of its own (comm_create), the cross-check runs on a duplicate of
  // group.group, never beside the plugin's traffic. fault: the mesh's
  // fault state (fault_tolerance), or null: its revoke reaches the
  // communicator, and the communicator's failures revoke it.
  std::unique_ptr<Communicator> create(const devmesh_backend_group_t& group, Fault* fault = nullptr);
  const PluginTable& table() const noexcept { return *table_; }
  // The levels this backend sees around the calling process's device, as
  // "level=name" pairs separated by ';', innermost first, outside the host
  // (an NVLink domain: "domain=..."); "" where it sees none or its table
  // lacks DEVMESH_BACKEND_CAP_TOPOLOGY. host_local_rank: the process's
  // position on its host, for a backend that picks its device by it. Not
  // collective (plugin_topology.cpp).
  std::string levels(int host_local_rank) const;

 private:
  const PluginTable* table_;
  std::vector<std::pair<std::string, std::string>> options_;
  void* instance_ = nullptr;
};

// What the cross-check compares of a backend spec, canonical: the name and
// the "key=value" items sorted, without the keys `table` declares per rank
// (table NULL: the backend did not load here; all items are kept, which
// matches the ranks where it loaded unless per-rank options were given).
std::string canonical_options(const BackendSpec& spec, const PluginTable* table);

// Splits "key=value" items (throws invalid_argument naming a malformed or
// repeated one).
std::vector<std::pair<std::string, std::string>> split_options(const std::vector<std::string>& items,
                                                               std::string_view what);

}  // namespace devmesh::detail
