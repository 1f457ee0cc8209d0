// The levels a backend sees around its device (BackendInstance::levels):
// version 4's topology member, its answer checked before the placement
// reads it.
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "plugins.hpp"

namespace devmesh::detail {
namespace {

// Room for the usual answer ("domain=" and a 32-digit UUID with a clique
// id); a plugin that needs more says how much, once.
constexpr std::size_t first_size = 256;
// More than any topology needs: a larger request is the plugin's bug.
constexpr std::size_t most = std::size_t{1} << 16;

[[noreturn]] void malformed(const PluginTable& t, const std::string& problem) {
  throw Error(Status::backend, "plugin '" + std::string(t.name) + "' returned from topology " + problem);
}

// Refuses anything but "level=name" pairs separated by ';' (the rule of
// backend_plugin.h): no empty item or side, no white space, no level
// "host" (the core's own), no level twice.
void check_pairs(const PluginTable& t, std::string_view text) {
  std::vector<std::string_view> seen;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(';', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    const std::size_t eq = item.find('=');
    const std::string quoted = "'" + std::string(item) + "'";
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size() ||
        item.find('=', eq + 1) != std::string_view::npos)
      malformed(t, "the item " + quoted + " of '" + std::string(text) + "', which is not level=name");
    if (item.find_first_of(" \t\r\n\v\f") != std::string_view::npos)
      malformed(t, "the item " + quoted + ", which holds white space");
    const std::string_view level = item.substr(0, eq);
    if (level == "host") malformed(t, "the level 'host', which is the core's own");
    for (const std::string_view s : seen)
      if (s == level) malformed(t, "the level '" + std::string(level) + "' twice");
    seen.push_back(level);
    start = end + 1;
  }
}

}  // namespace

std::string BackendInstance::levels(int host_local_rank) const {
  const PluginTable& t = *table_;
  if (!(t.capabilities & DEVMESH_BACKEND_CAP_TOPOLOGY) || !t.topology) return {};
  if (host_local_rank < 0)
    throw Error(Status::invalid_argument, "host-local rank " + std::to_string(host_local_rank) + " is negative");
  std::vector<char> buf(first_size, '\0');
  std::size_t written = 0;
  int rc = t.topology(instance_, host_local_rank, buf.data(), buf.size(), &written);
  if (rc == DEVMESH_ERR_INVALID_ARGUMENT && written >= buf.size()) {
    // Too small: once more with the size the plugin asked for.
    if (written >= most)
      malformed(t, "a need of " + std::to_string(written) + " bytes, more than the " + std::to_string(most) +
                       " the core reads");
    buf.assign(written + 1, '\0');
    written = 0;
    rc = t.topology(instance_, host_local_rank, buf.data(), buf.size(), &written);
  }
  check(t, rc, "topology");
  if (written >= buf.size() || strnlen(buf.data(), buf.size()) != written)
    malformed(t, "a length of " + std::to_string(written) + " bytes that is not its text's (in a buffer of " +
                     std::to_string(buf.size()) + ")");
  std::string text(buf.data(), written);
  if (!text.empty()) check_pairs(t, text);
  return text;
}

}  // namespace devmesh::detail
