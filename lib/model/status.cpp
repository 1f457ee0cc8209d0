#include "devmesh/status.hpp"

#include <ostream>

namespace devmesh {
namespace {

// The one table of statuses: the C++ name, and the description that
// devmesh_status_string (C, Fortran) gives. Indexed by the status value.
struct StatusEntry {
  Status status;
  std::string_view name, description;
};
constexpr StatusEntry statuses[] = {
    {Status::success, "success", "success"},
    {Status::invalid_argument, "invalid_argument", "invalid argument"},
    {Status::shape_mismatch, "shape_mismatch", "shape mismatch"},
    {Status::unknown_dim, "unknown_dim", "unknown dim"},
    {Status::duplicate_name, "duplicate_name", "duplicate name"},
    {Status::overlap, "overlap", "overlapping dims"},
    {Status::inconsistent, "inconsistent", "inconsistent arguments across ranks"},
    {Status::not_member, "not_member", "not a member of the mesh"},
    {Status::backend, "backend", "backend failure"},
    {Status::unsupported, "unsupported", "unsupported"},
    {Status::internal, "internal", "internal error"},
    {Status::proc_failed, "proc_failed", "a process of the group failed"},
    {Status::revoked, "revoked", "revoked"},
    {Status::timeout, "timeout", "timed out"},
};
constexpr bool in_order() {
  for (std::size_t i = 0; i < std::size(statuses); ++i)
    if (static_cast<std::size_t>(statuses[i].status) != i) return false;
  return true;
}
static_assert(in_order(), "the status table is indexed by the status value");

const StatusEntry* find(int value) noexcept {
  return value >= 0 && static_cast<std::size_t>(value) < std::size(statuses) ? &statuses[value] : nullptr;
}

}  // namespace

std::string_view status_name(Status s) noexcept {
  const StatusEntry* e = find(static_cast<int>(s));
  return e ? e->name : "unknown_status";
}

std::string_view status_description(int value) noexcept {
  const StatusEntry* e = find(value);
  return e ? e->description : "unknown status";
}

std::ostream& operator<<(std::ostream& os, Status s) { return os << status_name(s); }

}  // namespace devmesh
