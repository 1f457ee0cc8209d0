// What every file of the C layer shares: the handle, and guard(), the one
// place where C++ exceptions become status codes (devmesh::Error maps to its
// status, std::bad_alloc and anything else to DEVMESH_ERR_INTERNAL, the
// detail goes to a thread_local for devmesh_last_error()). Bodies compute
// into locals and write output parameters last, with non-throwing stores,
// so a failing call never writes them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "devmesh/devmesh.h"
#include "devmesh/mesh.hpp"

// A handle: one view of a root mesh, plus its dim names as stable C strings
// (devmesh_dim_name hands them out borrowed, for the handle's lifetime).
struct devmesh_s {
  devmesh::Mesh mesh;
  std::vector<std::string> names;
};

namespace devmesh::capi {

using devmesh::Error;
using devmesh::Mesh;
using devmesh::Status;

inline thread_local std::string last_error_text;

// Stores "fn: detail" for devmesh_last_error(); never throws. Out of memory,
// it falls back to a text short enough for the small-string buffer.
inline void remember(const char* fn, std::string_view prefix, std::string_view detail) noexcept {
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

[[noreturn]] inline void invalid(const std::string& what) { throw Error(Status::invalid_argument, what); }

template <class T>
T* need(T* p, const char* what) {
  if (!p) invalid(std::string(what) + " is NULL");
  return p;
}

// A table of live C objects handed out as tokens (slot, generation), never
// addresses: a devmesh_t (the handles alive) and a devmesh_request_t (the
// requests pending). A destroyed or ended object, a stale copy of its token
// or a made-up value is recognised without reading memory through it, and
// a slot used again later carries a new generation. Thread-safe: add and
// remove take a mutex; find, on the path of every C call, takes none. Slots
// live in chunks that never move (a directory of chunks made as needed),
// each an object pointer and a generation, both atomic: add stores the
// generation, then the object (release); find loads the object (acquire),
// then the generation, so an object it sees with its token's generation
// was entered for that token. (A find racing the remove of its own object
// is the caller's use of a handle while destroying it, as with any lock.)
// token = generation << 32 | (slot + 1): never 0 (NULL).
template <class Object, class Token>
class TokenTable {
 public:
  TokenTable() = default;
  TokenTable(const TokenTable&) = delete;
  TokenTable& operator=(const TokenTable&) = delete;
  ~TokenTable() {
    for (auto& c : chunks_) {
      Chunk* chunk = c.load(std::memory_order_relaxed);
      if (!chunk) break;
      for (Slot& s : chunk->slots) delete s.object.load(std::memory_order_relaxed);
      delete chunk;
    }
  }
  // Takes h and returns its token. Throws only std::bad_alloc (h is then
  // destroyed).
  Token add(std::unique_ptr<Object> h) {
    std::lock_guard lock(mutex_);
    std::size_t index;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      if (used_ == chunk_slots * max_chunks) throw std::bad_alloc();
      if (used_ % chunk_slots == 0) chunks_[used_ / chunk_slots].store(new Chunk(), std::memory_order_release);
      index = used_++;
    }
    Slot& s = *slot_at(index);
    // Generation 0 is never handed out, so a token from a slot's first use
    // cannot be made up from a small integer.
    std::uint32_t g = s.generation.load(std::memory_order_relaxed) + 1;
    if (g == 0) g = 1;
    s.generation.store(g, std::memory_order_relaxed);
    s.object.store(h.release(), std::memory_order_release);
    const std::uintptr_t v = (static_cast<std::uintptr_t>(g) << 32) | (index + 1);
    return reinterpret_cast<Token>(v);
  }
  // The live object of a token, or nullptr.
  Object* find(Token token) const {
    const Slot* s = slot_of(token);
    if (!s) return nullptr;
    Object* o = s->object.load(std::memory_order_acquire);
    return o && s->generation.load(std::memory_order_relaxed) == generation_of(token) ? o : nullptr;
  }
  // Takes the object of a token out (nullptr when not live).
  std::unique_ptr<Object> remove(Token token) {
    std::lock_guard lock(mutex_);
    Slot* s = slot_of(token);
    Object* o = s ? s->object.load(std::memory_order_relaxed) : nullptr;
    if (!o || s->generation.load(std::memory_order_relaxed) != generation_of(token)) return nullptr;
    s->object.store(nullptr, std::memory_order_release);
    try {
      free_.push_back(static_cast<std::size_t>((reinterpret_cast<std::uintptr_t>(token) & 0xffffffffu) - 1));
    } catch (...) {
      // Out of memory: the slot is not used again, which is harmless.
    }
    return std::unique_ptr<Object>(o);
  }

 private:
  static_assert(sizeof(std::uintptr_t) >= 8, "tokens need 64-bit pointers");
  static constexpr std::size_t chunk_slots = 1024, max_chunks = 4096;  // 4M live objects at most
  struct Slot {
    std::atomic<Object*> object{nullptr};
    std::atomic<std::uint32_t> generation{0};
  };
  struct Chunk {
    Slot slots[chunk_slots];
  };
  static std::uint32_t generation_of(Token token) {
    return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(token) >> 32);
  }
  Slot* slot_at(std::size_t index) const {
    Chunk* c = chunks_[index / chunk_slots].load(std::memory_order_acquire);
    return c ? &c->slots[index % chunk_slots] : nullptr;
  }
  // The slot a token names, or nullptr for one never handed out.
  Slot* slot_of(Token token) const {
    const std::uintptr_t index_plus_one = reinterpret_cast<std::uintptr_t>(token) & 0xffffffffu;
    if (index_plus_one == 0 || index_plus_one > chunk_slots * max_chunks) return nullptr;
    return slot_at(index_plus_one - 1);
  }
  std::mutex mutex_;
  std::size_t used_ = 0;  // slots handed out at least once (under mutex_)
  std::vector<std::size_t> free_;
  std::array<std::atomic<Chunk*>, max_chunks> chunks_{};
};

using HandleTable = TokenTable<devmesh_s, devmesh_t>;

// A pending request at the C boundary: a devmesh_request_t is its token in
// live_requests() (requests_c.cpp), so a request ended already, a stale
// copy of one or a made-up value is refused without a memory read.
struct PendingRequest {
  devmesh::Request request;
};
using RequestTable = TokenTable<PendingRequest, devmesh_request_t>;

// Hands a started operation to C: *out = its token, or
// DEVMESH_REQUEST_NULL when it is already complete. The last step of a
// successful start (requests_c.cpp).
void give_request(devmesh::Request r, devmesh_request_t* out);

// The process's table. Never destroyed: handles still alive at exit are
// left alone, as they were before handles were tokens (their communicators
// went with MPI_Finalize).
HandleTable& live_handles();

inline const char* stale_handle_text() {
  return "not a live devmesh handle (destroyed already, a copy of a destroyed one, or not made by devmesh)";
}

inline devmesh_s& handle_of(devmesh_t m) {
  if (!m) invalid("the mesh handle is NULL");
  devmesh_s* h = live_handles().find(m);
  if (!h) invalid(std::string("the mesh handle is ") + stale_handle_text());
  return *h;
}

inline const Mesh& mesh_of(devmesh_t m) { return handle_of(m).mesh; }

// Data types, reductions, buffers, counts, roots and peers are checked in
// one place for every caller, C, C++ and Fortran: the backend
// communicator's argument gate (lib/runtime/plugin_gate.hpp). Here only
// what C adds.
inline devmesh::DataType datatype_arg(int t) { return static_cast<devmesh::DataType>(t); }
inline devmesh::ReduceOp op_arg(int op) { return static_cast<devmesh::ReduceOp>(op); }

// A dim argument: NULL means "the only dim of a 1-D view" (the C++ API's
// empty name); an empty C string is an error, not that shorthand.
inline std::string_view dim_arg(const char* dim) {
  if (!dim) return {};
  if (!*dim) invalid("the dim name is empty (pass NULL for the only dim of a 1-D view)");
  return dim;
}

inline std::vector<std::string> strings(int n, const char* const a[], const char* what) {
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (!a[i]) invalid(std::string(what) + "[" + std::to_string(i) + "] is NULL");
    out.emplace_back(a[i]);
  }
  return out;
}

// The backends of the dims devmesh_flatten_ex or devmesh_unflatten_ex makes,
// one per new name, from the config's backend fields (creation_c.cpp).
std::vector<devmesh::DimBackend> new_dim_backends(const devmesh_config_t* config,
                                                  const std::vector<std::string>& new_names);

inline std::unique_ptr<devmesh_s> make_handle(Mesh mesh) {
  auto h = std::make_unique<devmesh_s>();
  h->names = mesh.names();
  h->mesh = std::move(mesh);
  return h;
}

// Enters a new handle and stores its token into *out: the last step of a
// successful call (out untouched when entering it fails).
inline void give(std::unique_ptr<devmesh_s> h, devmesh_t* out) {
  const devmesh_t token = live_handles().add(std::move(h));
  *out = token;
}

}  // namespace devmesh::capi
