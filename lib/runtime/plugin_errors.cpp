// Statuses and messages from a plugin, as the core reports them.
#include <cstring>

#include "cross_check.hpp"
#include "mpi_check.hpp"
#include "plugin_table.hpp"

namespace devmesh::detail {

std::string plugin_message(const PluginTable& t) {
  const char* m = t.last_error ? t.last_error() : nullptr;
  if (!m || !*m) return "no detail given";
  std::string_view text(m, strnlen(m, max_message + 1));
  const std::string own = "backend '" + std::string(t.name) + "'";
  if (text.substr(0, own.size()) == own) {
    text.remove_prefix(own.size());
    while (!text.empty() && (text.front() == ':' || text.front() == ',' || text.front() == ' ')) text.remove_prefix(1);
  }
  return cut_message(text.empty() ? std::string_view("no detail given") : text);
}

Error plugin_error(const PluginTable& t, int rc, std::string_view what) {
  const std::string prefix = "backend '" + std::string(t.name) + "', " + std::string(what) + ": ";
  if (rc <= 0 || rc > static_cast<int>(Status::timeout))
    return Error(Status::backend, "plugin '" + std::string(t.name) + "' returned invalid status " + std::to_string(rc) +
                                      " from " + std::string(what) + " (its message: " + plugin_message(t) + ")");
  int code = t.last_mpi_error ? t.last_mpi_error() : 0, cls = 0;
  if (!mpi_error_known(code, &cls)) code = 0;
  return Error(static_cast<Status>(rc), prefix + plugin_message(t), code, cls);
}

}  // namespace devmesh::detail
