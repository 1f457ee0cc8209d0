// What every file of the C layer shares: the handle, and guard(), the one
// place where C++ exceptions become status codes (devmesh::Error maps to its
// status, std::bad_alloc and anything else to DEVMESH_ERR_INTERNAL, the
// detail goes to a thread_local for devmesh_last_error()). Bodies compute
// into locals and write output parameters last, with non-throwing stores,
// so a failing call never writes them.
#pragma once

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

// The handles alive: a devmesh_t is a token (slot, generation), never an
// address, so a destroyed handle, a stale copy of one or a made-up value is
// recognised without reading memory through it, and a slot used again later
// carries a new generation. Thread-safe (one mutex: distinct handles may be
// used from several threads at once).
class HandleTable {
 public:
  // Takes h and returns its token. Throws only std::bad_alloc (h is then
  // destroyed).
  devmesh_t add(std::unique_ptr<devmesh_s> h);
  // The live handle of a token, or nullptr.
  devmesh_s* find(devmesh_t token);
  // Takes the handle of a token out (nullptr when not live).
  std::unique_ptr<devmesh_s> remove(devmesh_t token);

 private:
  struct Slot {
    std::unique_ptr<devmesh_s> handle;
    std::uint32_t generation = 0;
  };
  Slot* slot(devmesh_t token);
  std::mutex mutex_;
  std::vector<Slot> slots_;
  std::vector<std::size_t> free_;
};

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
