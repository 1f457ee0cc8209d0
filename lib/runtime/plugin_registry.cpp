// Finding backends by name: the built-in one, those registered in process,
// and plugins loaded from libdevmesh-backend-<name>.so, each initialised
// once per process and kept as a PluginTable.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "mpi/mpi_backend.hpp"
#include "plugin_table.hpp"
#include "plugins.hpp"

namespace devmesh::detail {
namespace {

constexpr std::size_t max_name = 64;
// The one backend built into libdevmesh (backends/mpi); its name is reserved.
constexpr std::string_view built_in_name = "mpi";

void check_name(std::string_view name) {
  const bool ok = !name.empty() && name.size() <= max_name && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
  if (!ok)
    throw Error(Status::invalid_argument,
                "unknown backend '" + std::string(name) +
                    "': a backend name is 1 to 64 of a-z, 0-9, '_', '-' (\"mpi\" is built in; a backend X is "
                    "the plugin libdevmesh-backend-X.so)");
}

struct Registry {
  std::mutex mutex;
  // Usable tables by name: registered, or loaded and initialised.
  std::map<std::string, PluginTable, std::less<>> tables;
  // Backends found but unusable, with the reason (so init is tried once).
  std::map<std::string, std::string, std::less<>> broken;
};

Registry& registry() {
  static Registry r;
  return r;
}

// The install's plugin directory: "devmesh" beside the loaded libdevmesh.
std::string install_plugin_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&install_plugin_dir), &info) == 0 || !info.dli_fname) return {};
  std::string lib = info.dli_fname;
  const std::size_t slash = lib.rfind('/');
  if (slash == std::string::npos) return {};
  return lib.substr(0, slash) + "/devmesh";
}

[[noreturn]] void unusable(std::string_view name, const std::string& where, const std::string& why) {
  throw Error(Status::unsupported, "backend '" + std::string(name) + "' (" + where + ") cannot be used: " + why);
}

// The MPI libraries loaded in the process (libmpi.so*, libmpich.so*,
// libmpi_abi.so*), by path.
std::set<std::string> loaded_mpi_libraries() {
  std::set<std::string> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        const std::string_view path = info->dlpi_name ? info->dlpi_name : "";
        const std::string_view base = path.substr(path.rfind('/') + 1);
        for (const std::string_view stem : {"libmpi.so", "libmpich.so", "libmpi_abi.so"})
          if (base.substr(0, stem.size()) == stem) static_cast<std::set<std::string>*>(data)->emplace(path);
        return 0;
      },
      &out);
  return out;
}

// dlopen, refusing a plugin that brings a second MPI library into the
// process (a plugin linked against another MPI than the core's: its MPI
// calls would reach the core's MPI with foreign handles). Whatever a plugin
// states, this is the loader's own view.
void* open_library(std::string_view name, const std::string& path, const std::string& where) {
  const std::set<std::string> before = loaded_mpi_libraries();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return nullptr;
  std::string added;
  for (const std::string& lib : loaded_mpi_libraries())
    if (!before.count(lib)) added += (added.empty() ? "" : ", ") + lib;
  if (!added.empty() && !before.empty()) {
    std::string core;
    for (const std::string& lib : before) core += (core.empty() ? "" : ", ") + lib;
    dlclose(handle);
    unusable(name, where,
             "it loads the MPI library " + added + ", but this devmesh runs on " + core + " (" + mpi_library() +
                 "): build the plugin with the MPI devmesh was built with");
  }
  return handle;
}

// The directories searched before the dynamic loader's own path.
std::vector<std::string> plugin_dirs() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("DEVMESH_BACKEND_PATH")) {
    std::string_view rest = path;
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      if (colon != 0) dirs.emplace_back(rest.substr(0, colon));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (std::string d = install_plugin_dir(); !d.empty()) dirs.push_back(std::move(d));
  return dirs;
}

// dlopen of the plugin file of `name`: the first found in plugin_dirs(),
// else through the dynamic loader. *where: the path, for messages.
void* open_file(std::string_view name, std::string* where) {
  const std::string file = "libdevmesh-backend-" + std::string(name) + ".so";
  const std::vector<std::string> dirs = plugin_dirs();
  for (const std::string& d : dirs) {
    const std::string path = d + "/" + file;
    if (access(path.c_str(), F_OK) != 0) continue;
    *where = path;
    if (void* handle = open_library(name, path, *where)) return handle;
    const char* e = dlerror();
    unusable(name, path, std::string("the loader says: ") + (e ? e : "unknown error"));
  }
  *where = file + " through the dynamic loader";
  if (void* handle = open_library(name, file, *where)) return handle;
  const char* said = dlerror();
  const std::string e = said ? said : "";
  // The loader names the file it could not find first: if that is the
  // plugin itself, there is none; otherwise one of its dependencies.
  if (!e.empty() && e.rfind(file + ":", 0) != 0) unusable(name, *where, "the loader says: " + e);
  std::string looked;
  for (const std::string& d : dirs) looked += d + ", ";
  throw Error(Status::invalid_argument,
              "unknown backend '" + std::string(name) + "': no " + file + " in " +
                  (looked.empty() ? std::string("DEVMESH_BACKEND_PATH (unset), ") : looked) +
                  "nor on the dynamic loader's path (\"mpi\" is built in; a backend X is the plugin "
                  "libdevmesh-backend-X.so, found through DEVMESH_BACKEND_PATH)");
}

// Loads and checks one plugin; returns its table (not yet initialised).
// The newest interface first (backend_plugin.h: how the ABI grows).
const devmesh_backend_v1_t* open_plugin(std::string_view name, std::string* where) {
  void* handle = open_file(name, where);
  const devmesh_backend_v1_t* table = nullptr;
  unsigned version = 0;
  const std::pair<const char*, unsigned> symbols[] = {{DEVMESH_BACKEND_SYMBOL_V4, DEVMESH_BACKEND_ABI_VERSION_4},
                                                      {DEVMESH_BACKEND_SYMBOL_V3, DEVMESH_BACKEND_ABI_VERSION_3},
                                                      {DEVMESH_BACKEND_SYMBOL_V2, DEVMESH_BACKEND_ABI_VERSION_2},
                                                      {DEVMESH_BACKEND_SYMBOL_V1, DEVMESH_BACKEND_ABI_VERSION}};
  for (const auto& [symbol, v] : symbols) {
    // Each table starts with its version 1 member.
    table = static_cast<const devmesh_backend_v1_t*>(dlsym(handle, symbol));
    version = v;
    if (table) break;
  }
  if (!table) {
    dlclose(handle);
    unusable(name, *where,
             "it exports none of " DEVMESH_BACKEND_SYMBOL_V4 ", " DEVMESH_BACKEND_SYMBOL_V3
             ", " DEVMESH_BACKEND_SYMBOL_V2 ", " DEVMESH_BACKEND_SYMBOL_V1 " (not a devmesh backend plugin)");
  }
  std::string problem = table_problem(*table, {version});
  if (problem.empty() && name != table->name) problem = "it calls itself '" + std::string(table->name) + "'";
  if (!problem.empty()) {
    dlclose(handle);
    unusable(name, *where, problem);
  }
  return table;
}

// init_host or init, whichever the table has; "" or why it failed.
std::string initialise(const PluginTable& t) {
  int rc = DEVMESH_SUCCESS;
  if (t.init_host)
    rc = t.init_host(&backend_host());
  else if (t.init)
    rc = t.init();
  if (rc == DEVMESH_SUCCESS) return {};
  return plugin_message(t);
}

const PluginTable& built_in() {
  static const PluginTable table = [] {
    PluginTable t = normalise(backends::mpi_table());
    t.opens_without_check = true;  // it takes no options
    if (const std::string why = initialise(t); !why.empty())
      throw Error(Status::internal, "the built-in backend failed to initialise: " + why);
    return t;
  }();
  return table;
}

}  // namespace

const PluginTable& load_backend(std::string_view name) {
  if (name == built_in_name) return built_in();
  check_name(name);
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (auto it = r.tables.find(name); it != r.tables.end()) return it->second;
  if (auto it = r.broken.find(name); it != r.broken.end()) throw Error(Status::unsupported, it->second);
  std::string where;
  PluginTable table;
  try {
    table = normalise(*open_plugin(name, &where));
    if (const std::string why = initialise(table); !why.empty())
      unusable(name, where, "its initialisation failed: " + why);
  } catch (const Error& e) {
    // Found but unusable stays so for the process (init is not retried);
    // not found may be fixed by a later DEVMESH_BACKEND_PATH.
    if (e.status() == Status::unsupported) r.broken.emplace(std::string(name), e.what());
    throw;
  }
  log_line(name, DEVMESH_LOG_INFO, "loaded " + where + " (ABI v" + std::to_string(table.abi_version) + ")");
  return r.tables.emplace(std::string(name), table).first->second;
}

}  // namespace devmesh::detail

namespace devmesh {

void register_backend(const devmesh_backend_v1_t* table) {
  if (!table) throw Error(Status::invalid_argument, "the backend table is NULL");
  if (const std::string problem =
          detail::table_problem(*table, {DEVMESH_BACKEND_ABI_VERSION, DEVMESH_BACKEND_ABI_VERSION_2,
                                         DEVMESH_BACKEND_ABI_VERSION_3, DEVMESH_BACKEND_ABI_VERSION_4});
      !problem.empty())
    throw Error(Status::invalid_argument, "the backend table cannot be used: " + problem);
  const std::string_view name = table->name;
  detail::check_name(name);
  if (name == detail::built_in_name)
    throw Error(Status::invalid_argument, "the name 'mpi' is reserved for the built-in backend");
  detail::Registry& r = detail::registry();
  std::lock_guard lock(r.mutex);
  if (auto it = r.tables.find(name); it != r.tables.end()) {
    if (it->second.source == table) return;
    throw Error(Status::duplicate_name,
                "another backend is already registered or loaded as '" + std::string(name) + "'");
  }
  const detail::PluginTable normalised = detail::normalise(*table);
  if (const std::string why = detail::initialise(normalised); !why.empty())
    throw Error(Status::unsupported, "backend '" + std::string(name) + "' failed to initialise: " + why);
  r.broken.erase(std::string(name));
  r.tables.emplace(std::string(name), normalised);
}

}  // namespace devmesh
