// The services the core gives version 3 backend plugins
// (devmesh_backend_host_t, devmesh/backend_plugin.h): one logger, MPI error
// text, the cross-check, the MPI identity, and what a plugin needs
// of the core's MPI communicators (revoked or not, left unfreed), each the
// core's own.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>

#include "cross_check.hpp"
#include "mpi_check.hpp"
#include "mpi_features.hpp"
#include "plugins.hpp"

namespace devmesh::detail {
namespace {

int level_from_environment() {
  const char* v = std::getenv("DEVMESH_LOG");
  if (!v || !*v || std::strcmp(v, "warn") == 0) return DEVMESH_LOG_WARN;
  if (std::strcmp(v, "info") == 0) return DEVMESH_LOG_INFO;
  if (std::strcmp(v, "debug") == 0) return DEVMESH_LOG_DEBUG;
  std::fprintf(stderr, "devmesh: DEVMESH_LOG=%s is none of warn, info, debug; logging at warn\n", v);
  return DEVMESH_LOG_WARN;
}

int world_rank() {
  int initialized = 0, finalized = 0, rank = -1;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

const char* level_name(int level) {
  switch (level) {
    case DEVMESH_LOG_WARN:
      return "warn";
    case DEVMESH_LOG_INFO:
      return "info";
    default:
      return "debug";
  }
}

void host_log(const char* backend, int level, const char* message) {
  log_line(backend ? backend : "?", level, message ? message : "");
}

void copy_out(std::string_view text, char* out, std::size_t len) {
  if (!out || len == 0) return;
  const std::size_t n = std::min(text.size(), len - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

int host_mpi_error(int code, char* text, std::size_t len, int* cls) {
  int c = 0;
  const bool known = mpi_error_known(code, &c);
  if (cls) *cls = c;
  copy_out(known ? mpi_error_text(code) + " (MPI error class " + std::to_string(c) + ")"
                 : "unknown MPI error code " + std::to_string(code),
           text, len);
  return known ? 1 : 0;
}

int host_cross_check(MPI_Comm comm, int status, char* message, std::size_t len) {
  const std::string mine = message ? std::string(message, strnlen(message, len)) : std::string();
  const Status local =
      status >= 0 && status <= static_cast<int>(Status::timeout) ? static_cast<Status>(status) : Status::backend;
  try {
    cross_check(comm, "a backend's cross-check", {}, local, mine);
    return DEVMESH_SUCCESS;
  } catch (const Error& e) {
    if (e.status() != local) copy_out(e.what(), message, len);
    return static_cast<int>(e.status());
  } catch (...) {
    copy_out("out of memory in the cross-check", message, len);
    return DEVMESH_ERR_INTERNAL;
  }
}

int host_comm_revoked(MPI_Comm comm) { return mpi::comm_is_revoked(comm) ? 1 : 0; }

void host_leave_unfreed(MPI_Comm comm) { leave_unfreed(comm); }

std::string first_line_of_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING + 1] = {};
  int len = 0;
  if (MPI_Get_library_version(text, &len) != MPI_SUCCESS) return "unknown MPI library";
  std::string s(text, strnlen(text, sizeof text - 1));
  return s.substr(0, s.find('\n'));
}

}  // namespace

int log_level() {
  static const int level = level_from_environment();
  return level;
}

void log_line(std::string_view backend, int level, std::string_view message) {
  if (level > log_level()) return;
  const std::string line = "devmesh[" + std::to_string(world_rank()) + "] backend '" + std::string(backend) + "' " +
                           level_name(level) + ": " + cut_message(message) + "\n";
  static std::mutex mutex;  // one line at a time from this process
  std::lock_guard lock(mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

const devmesh_backend_host_t& backend_host() {
  static const std::string library = first_line_of_library_version();
  static const devmesh_backend_host_t host = [] {
    devmesh_backend_host_t h{};
    h.size = sizeof h;
    h.log_level = log_level();
    h.log = host_log;
    h.mpi_error = host_mpi_error;
    h.agree = host_cross_check;  // the ABI v3 field's name: the cross-check, not MPIX_Comm_agree
    h.mpi_library = library.c_str();
    h.mpi_family = DEVMESH_BACKEND_MPI;
    h.comm_revoked = host_comm_revoked;
    h.leave_unfreed = host_leave_unfreed;
    return h;
  }();
  return host;
}

const char* mpi_library() { return backend_host().mpi_library; }

}  // namespace devmesh::detail

extern "C" const devmesh_backend_host_t* devmesh_backend_host(void) { return &devmesh::detail::backend_host(); }
