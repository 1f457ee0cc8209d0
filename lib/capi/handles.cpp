// The table of live C handles (capi.hpp, HandleTable).
#include <cstdint>
#include <limits>

#include "capi/capi.hpp"

namespace devmesh::capi {
namespace {

// token = generation << 32 | (slot + 1): never 0 (NULL), and a slot's
// tokens differ from one use to the next.
constexpr int generation_shift = 32;

devmesh_t encode(std::size_t index, std::uint32_t generation) {
  const std::uintptr_t v =
      (static_cast<std::uintptr_t>(generation) << generation_shift) | static_cast<std::uintptr_t>(index + 1);
  return reinterpret_cast<devmesh_t>(v);
}

}  // namespace

static_assert(sizeof(std::uintptr_t) >= 8, "handle tokens need 64-bit pointers");

HandleTable& live_handles() {
  static HandleTable* table = new HandleTable;  // never destroyed, see capi.hpp
  return *table;
}

HandleTable::Slot* HandleTable::slot(devmesh_t token) {
  const auto v = reinterpret_cast<std::uintptr_t>(token);
  const std::uintptr_t index_plus_one = v & 0xffffffffu;
  const auto generation = static_cast<std::uint32_t>(v >> generation_shift);
  if (index_plus_one == 0 || index_plus_one > slots_.size()) return nullptr;
  Slot& s = slots_[index_plus_one - 1];
  return s.handle && s.generation == generation ? &s : nullptr;
}

devmesh_t HandleTable::add(std::unique_ptr<devmesh_s> h) {
  std::lock_guard lock(mutex_);
  std::size_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    if (slots_.size() >= std::numeric_limits<std::uint32_t>::max() - 1) throw std::bad_alloc();
    slots_.emplace_back();
    index = slots_.size() - 1;
  }
  Slot& s = slots_[index];
  // Generation 0 is never handed out, so a token from a slot's first use
  // cannot be made up from a small integer.
  if (++s.generation == 0) s.generation = 1;
  s.handle = std::move(h);
  return encode(index, s.generation);
}

devmesh_s* HandleTable::find(devmesh_t token) {
  std::lock_guard lock(mutex_);
  Slot* s = slot(token);
  return s ? s->handle.get() : nullptr;
}

std::unique_ptr<devmesh_s> HandleTable::remove(devmesh_t token) {
  std::lock_guard lock(mutex_);
  Slot* s = slot(token);
  if (!s) return nullptr;
  std::unique_ptr<devmesh_s> h = std::move(s->handle);
  try {
    free_.push_back(static_cast<std::size_t>(s - slots_.data()));
  } catch (...) {
    // Out of memory: the slot is not used again, which is harmless.
  }
  return h;
}

}  // namespace devmesh::capi
