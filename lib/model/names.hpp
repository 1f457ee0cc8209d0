// Name rules and message pieces the model's operations share (internal to
// lib/model, not installed).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace devmesh::detail {

// "'dp'": a name as the model's messages quote it.
std::string quoted(std::string_view s);

// "dp_cp" from ("dp", "cp") and "_": also how flatten() names its dim.
std::string join(const std::vector<std::string>& names, std::string_view sep);

// A dim name's rule: non-empty and at most max_name_length bytes. Throws
// Error(invalid_argument) naming `what` otherwise.
void check_name(std::string_view name, std::string_view what);

}  // namespace devmesh::detail
