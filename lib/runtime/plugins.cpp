#include "plugins.hpp"

#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "agreement.hpp"
#include "fault.hpp"
#include "mpi_check.hpp"
#include "mpi_features.hpp"

namespace devmesh::detail {
namespace {

static_assert(DEVMESH_INT8 == static_cast<int>(DataType::int8));
static_assert(DEVMESH_UINT8 == static_cast<int>(DataType::uint8));
static_assert(DEVMESH_INT32 == static_cast<int>(DataType::int32));
static_assert(DEVMESH_UINT32 == static_cast<int>(DataType::uint32));
static_assert(DEVMESH_INT64 == static_cast<int>(DataType::int64));
static_assert(DEVMESH_UINT64 == static_cast<int>(DataType::uint64));
static_assert(DEVMESH_FLOAT16 == static_cast<int>(DataType::float16));
static_assert(DEVMESH_BFLOAT16 == static_cast<int>(DataType::bfloat16));
static_assert(DEVMESH_FLOAT32 == static_cast<int>(DataType::float32));
static_assert(DEVMESH_FLOAT64 == static_cast<int>(DataType::float64));
static_assert(DEVMESH_SUM == static_cast<int>(ReduceOp::sum));
static_assert(DEVMESH_PROD == static_cast<int>(ReduceOp::prod));
static_assert(DEVMESH_MIN == static_cast<int>(ReduceOp::min));
static_assert(DEVMESH_MAX == static_cast<int>(ReduceOp::max));
static_assert(DEVMESH_ERR_TIMEOUT == static_cast<int>(Status::timeout));

constexpr std::size_t max_name = 64;
constexpr int datatypes = DEVMESH_FLOAT64 + 1, reductions = DEVMESH_MAX + 1;
static_assert(datatypes * reductions <= 64, "one bit per (data type, reduction) pair");

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

// ---- the versions of a table ---------------------------------------------

// The version 2 (3) table t is the first member of, or nullptr for an older
// table (its version checked at loading or registration).
const devmesh_backend_v2_t* v2_of(const devmesh_backend_v1_t& t) {
  return t.abi_version >= DEVMESH_BACKEND_ABI_VERSION_2 ? reinterpret_cast<const devmesh_backend_v2_t*>(&t) : nullptr;
}
const devmesh_backend_v3_t* v3_of(const devmesh_backend_v1_t& t) {
  return t.abi_version >= DEVMESH_BACKEND_ABI_VERSION_3 ? reinterpret_cast<const devmesh_backend_v3_t*>(&t) : nullptr;
}

// Why a table cannot be used, or "" when it can. `versions` are the ABI
// versions accepted where it was found (its symbol's, or any this core
// knows for a registered table).
std::string table_problem(const devmesh_backend_v1_t& t, std::initializer_list<unsigned> versions) {
  if (std::find(versions.begin(), versions.end(), t.abi_version) == versions.end()) {
    std::string known;
    for (unsigned v : versions) known += std::string(known.empty() ? "" : " or ") + std::to_string(v);
    return "its ABI version is " + std::to_string(t.abi_version) + " but this devmesh accepts " + known;
  }
  if (!t.name) return "its table has no name";
  const devmesh_backend_v2_t* v2 = v2_of(t);
  const devmesh_backend_v3_t* v3 = v3_of(t);
  std::string missing;
  auto need = [&](bool present, const char* what) {
    if (!present) missing += std::string(missing.empty() ? "" : ", ") + what;
  };
  need(t.last_error != nullptr, "last_error");
  need(t.open != nullptr, "open");
  need(t.close != nullptr, "close");
  need(v3 || t.comm_create != nullptr, "comm_create");
  need(t.comm_destroy != nullptr, "comm_destroy");
  if (v3) {
    need(v3->comm_prepare != nullptr, "comm_prepare");
    need(v3->comm_connect != nullptr, "comm_connect");
    need(v3->comm_abandon != nullptr, "comm_abandon");
  }
  if (!missing.empty()) return "its table lacks the mandatory " + missing;
  // Non-blocking point to point comes whole: a request that nothing can end
  // would otherwise reach the caller.
  if (v2) {
    const bool has[] = {v2->isend != nullptr, v2->irecv != nullptr, v2->test != nullptr, v2->wait != nullptr};
    const char* names[] = {"isend", "irecv", "test", "wait"};
    const bool any = std::count(std::begin(has), std::end(has), true) > 0;
    for (std::size_t i = 0; any && i < std::size(has); ++i) need(has[i], names[i]);
    if (!missing.empty())
      return "its table has non-blocking point to point without " + missing +
             " (isend, irecv, test and wait come all together or not at all)";
    if (v3 && any != ((v3->capabilities & DEVMESH_BACKEND_CAP_NONBLOCKING) != 0))
      return any ? "its table has isend, irecv, test and wait but not the capability DEVMESH_BACKEND_CAP_NONBLOCKING"
                 : "it states DEVMESH_BACKEND_CAP_NONBLOCKING but has no isend, irecv, test and wait";
  }
  if (v3 && !v3->revoke &&
      (v3->capabilities & (DEVMESH_BACKEND_CAP_REVOKE_SPREADS | DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD)))
    return "it states DEVMESH_BACKEND_CAP_REVOKE_SPREADS or DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD but has no revoke";
  if (v3 && v3->mpi_family && std::strcmp(v3->mpi_family, DEVMESH_BACKEND_MPI) != 0)
    return std::string("it was compiled against ") + v3->mpi_family + "'s mpi.h, but this devmesh was built with " +
           DEVMESH_BACKEND_MPI + " (" + mpi_library() + ")";
  return {};
}

struct Registry {
  std::mutex mutex;
  // Usable tables by name: registered, built in, or loaded and initialised.
  std::map<std::string, const devmesh_backend_v1_t*, std::less<>> tables;
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

// Loads and checks one plugin; returns its table (not yet initialised).
const devmesh_backend_v1_t* open_plugin(std::string_view name, std::string* where) {
  const std::string file = "libdevmesh-backend-" + std::string(name) + ".so";
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
  void* handle = nullptr;
  for (const std::string& d : dirs) {
    const std::string path = d + "/" + file;
    if (access(path.c_str(), F_OK) != 0) continue;
    *where = path;
    handle = open_library(name, path, *where);
    if (!handle) {
      const char* e = dlerror();
      unusable(name, path, std::string("the loader says: ") + (e ? e : "unknown error"));
    }
    break;
  }
  if (!handle) {
    *where = file + " through the dynamic loader";
    handle = open_library(name, file, *where);
    if (!handle) {
      const char* said = dlerror();
      const std::string e = said ? said : "";
      // The loader names the file it could not find first: if that is the
      // plugin itself, there is none; otherwise one of its dependencies.
      if (e.empty() || e.rfind(file + ":", 0) == 0) {
        std::string looked;
        for (const std::string& d : dirs) looked += d + ", ";
        throw Error(Status::invalid_argument,
                    "unknown backend '" + std::string(name) + "': no " + file + " in " +
                        (looked.empty() ? std::string("DEVMESH_BACKEND_PATH (unset), ") : looked) +
                        "nor on the dynamic loader's path (\"mpi\" is built in; a backend X is the plugin "
                        "libdevmesh-backend-X.so, found through DEVMESH_BACKEND_PATH)");
      }
      unusable(name, *where, "the loader says: " + e);
    }
  }
  // The newest interface first (backend_plugin.h: how the ABI grows).
  const devmesh_backend_v1_t* table = nullptr;
  unsigned version = 0;
  if (const auto* v3 = static_cast<const devmesh_backend_v3_t*>(dlsym(handle, DEVMESH_BACKEND_SYMBOL_V3))) {
    table = &v3->v2.v1;
    version = DEVMESH_BACKEND_ABI_VERSION_3;
  } else if (const auto* v2 = static_cast<const devmesh_backend_v2_t*>(dlsym(handle, DEVMESH_BACKEND_SYMBOL_V2))) {
    table = &v2->v1;
    version = DEVMESH_BACKEND_ABI_VERSION_2;
  } else {
    table = static_cast<const devmesh_backend_v1_t*>(dlsym(handle, DEVMESH_BACKEND_SYMBOL_V1));
    version = DEVMESH_BACKEND_ABI_VERSION;
  }
  if (!table) {
    dlclose(handle);
    unusable(name, *where,
             "it exports none of " DEVMESH_BACKEND_SYMBOL_V3 ", " DEVMESH_BACKEND_SYMBOL_V2
             ", " DEVMESH_BACKEND_SYMBOL_V1 " (not a devmesh backend plugin)");
  }
  std::string problem = table_problem(*table, {version});
  if (problem.empty() && name != table->name) problem = "it calls itself '" + std::string(table->name) + "'";
  if (!problem.empty()) {
    dlclose(handle);
    unusable(name, *where, problem);
  }
  return table;
}

// init_host (v3) or init (v1, v2); "" or why it failed.
std::string initialise(const devmesh_backend_v1_t& t);

// ---- statuses and messages from a plugin -----------------------------------

// The plugin's last_error(), cut at 4 KiB, without a leading "backend '<name>'"
// (the core puts that in front, once).
std::string plugin_message(const devmesh_backend_v1_t& t) {
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

// A plugin's status as an Error: the plugin's message, the MPI error behind
// it when MPI knows the code, a status outside the enum as BACKEND.
Error plugin_error(const devmesh_backend_v1_t& t, int rc, std::string_view what) {
  const std::string prefix = "backend '" + std::string(t.name) + "', " + std::string(what) + ": ";
  if (rc <= 0 || rc > static_cast<int>(Status::timeout))
    return Error(Status::backend, "plugin '" + std::string(t.name) + "' returned invalid status " + std::to_string(rc) +
                                      " from " + std::string(what) + " (its message: " + plugin_message(t) + ")");
  int code = t.last_mpi_error ? t.last_mpi_error() : 0, cls = 0;
  if (!mpi_error_known(code, &cls)) code = 0;
  return Error(static_cast<Status>(rc), prefix + plugin_message(t), code, cls);
}

void check(const devmesh_backend_v1_t& t, int rc, std::string_view what) {
  if (rc != DEVMESH_SUCCESS) throw plugin_error(t, rc, what);
}

[[noreturn]] void lacks(const devmesh_backend_v1_t& t, std::string_view what) {
  throw Error(Status::unsupported, std::string(what) + " is not supported by backend '" + std::string(t.name) + "'");
}

// A v2 operation, or Error(unsupported) naming the backend and why.
template <class Fn>
Fn v2_op(const devmesh_backend_v1_t& t, Fn devmesh_backend_v2_t::*member, std::string_view what) {
  const devmesh_backend_v2_t* v2 = v2_of(t);
  if (!v2)
    throw Error(Status::unsupported, std::string(what) + " is not supported by backend '" + std::string(t.name) +
                                         "': it was built for ABI v1 of the plugin interface, which has no " +
                                         std::string(what));
  if (!(v2->*member)) lacks(t, what);
  return v2->*member;
}

// Bytes per element; size_of's value, inline on the call path (size_of is
// exported, so a call to it from here goes through the PLT).
constexpr std::size_t element_bytes(DataType t) noexcept {
  constexpr std::size_t bytes[datatypes] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
  return bytes[static_cast<int>(t)];
}
static_assert(element_bytes(DataType::bfloat16) == 2 && element_bytes(DataType::float64) == 8);

// A refusal before any communication (the plugin lacks the operation or
// the argument): the communicator stays usable. Anything else may have left
// the members' traffic half done.
bool refusal(int rc) { return rc == DEVMESH_ERR_UNSUPPORTED || rc == DEVMESH_ERR_INVALID_ARGUMENT; }

// ---- the communicator: the one door of every collective ------------------

class PluginCommunicator final : public Communicator {
 public:
  // fault: the mesh's fault state (fault_tolerance), or null.
  // group: the dim's MPI communicator (the group's members, for asking MPI
  // which of them failed).
  PluginCommunicator(const devmesh_backend_v1_t& t, void* comm, int rank, int size, std::uint64_t reduce_mask,
                     Fault* fault, MPI_Comm group)
      : t_(t), comm_(comm), rank_(rank), size_(size), reduce_mask_(reduce_mask), fault_(fault), group_(group) {
    // A revoke of the mesh reaches the backend's communicator (from the
    // deadline's thread only where the backend allows it: Fault::revoke);
    // this rank's next call fails (member()) without reaching the plugin.
    const devmesh_backend_v3_t* v3 = v3_of(t_);
    if (fault_ && v3 && v3->revoke)
      fault_->add(
          [this, v3](int status) {
            if (!revoked_here_.exchange(true)) v3->revoke(comm_, status);
          },
          (capabilities(t_) & DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD) != 0,
          (capabilities(t_) & DEVMESH_BACKEND_CAP_REVOKE_SPREADS) != 0);
  }
  ~PluginCommunicator() override { t_.comm_destroy(comm_); }
  std::string_view backend() const noexcept override { return t_.name; }
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  void* native_handle() noexcept override {
    void* h = nullptr;
    return t_.comm_native && t_.comm_native(comm_, &h) == DEVMESH_SUCCESS ? h : nullptr;
  }

  void allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, void* stream) override {
    const auto fn = member(t_.allreduce, "allreduce");
    reduction(type, op, "allreduce");
    buffer(send, count, type, 1, "sendbuf");
    buffer(recv, count, type, 1, "recvbuf");
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), static_cast<int>(op), stream); },
         "allreduce");
  }
  void allgather(const void* send, void* recv, std::size_t count, DataType type, void* stream) override {
    const auto fn = member(t_.allgather, "allgather");
    datatype(type);
    buffer(send, count, type, 1, "sendbuf");
    buffer(recv, count, type, group_blocks(), "recvbuf");
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), stream); }, "allgather");
  }
  void reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                      void* stream) override {
    const auto fn = member(t_.reduce_scatter, "reduce_scatter");
    reduction(type, op, "reduce_scatter");
    buffer(send, count, type, group_blocks(), "sendbuf");
    buffer(recv, count, type, 1, "recvbuf");
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), static_cast<int>(op), stream); },
         "reduce_scatter");
  }
  void broadcast(void* buffer_, std::size_t count, DataType type, int root, void* stream) override {
    const auto fn = member(t_.broadcast, "broadcast");
    datatype(type);
    group_rank(root, "root");
    buffer(buffer_, count, type, 1, "buffer");
    call([&] { return fn(comm_, buffer_, count, static_cast<int>(type), root, stream); }, "broadcast");
  }
  void alltoall(const void* send, void* recv, std::size_t count, DataType type, void* stream) override {
    const auto fn = member(t_.alltoall, "alltoall");
    datatype(type);
    buffer(send, count, type, group_blocks(), "sendbuf");
    buffer(recv, count, type, group_blocks(), "recvbuf");
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), stream); }, "alltoall");
  }
  void barrier(void* stream) override {
    const auto fn = member(t_.barrier, "barrier");
    call([&] { return fn(comm_, stream); }, "barrier");
  }
  void send(const void* buf, std::size_t count, DataType type, int peer, void* stream) override {
    const auto fn = member(t_.send, "send");
    if (!point_to_point(buf, count, type, peer, "peer", "buffer")) return;
    call([&] { return fn(comm_, buf, count, static_cast<int>(type), peer, stream); }, "send");
  }
  void recv(void* buf, std::size_t count, DataType type, int peer, void* stream) override {
    const auto fn = member(t_.recv, "recv");
    if (!point_to_point(buf, count, type, peer, "peer", "buffer")) return;
    call([&] { return fn(comm_, buf, count, static_cast<int>(type), peer, stream); }, "recv");
  }
  Request isend(const void* buf, std::size_t count, DataType type, int peer, void* stream) override {
    const auto fn = member(v2_op(t_, &devmesh_backend_v2_t::isend, "isend"), "isend");
    if (!point_to_point(buf, count, type, peer, "peer", "buffer")) return {};
    void* request = nullptr;
    call([&] { return fn(comm_, buf, count, static_cast<int>(type), peer, stream, &request); }, "isend");
    return transfer(request);
  }
  Request irecv(void* buf, std::size_t count, DataType type, int peer, void* stream) override {
    const auto fn = member(v2_op(t_, &devmesh_backend_v2_t::irecv, "irecv"), "irecv");
    if (!point_to_point(buf, count, type, peer, "peer", "buffer")) return {};
    void* request = nullptr;
    call([&] { return fn(comm_, buf, count, static_cast<int>(type), peer, stream, &request); }, "irecv");
    return transfer(request);
  }
  void sendrecv(const void* sendbuf, std::size_t sendcount, DataType sendtype, int dest, void* recvbuf,
                std::size_t recvcount, DataType recvtype, int source, void* stream) override {
    const auto fn = member(v2_op(t_, &devmesh_backend_v2_t::sendrecv, "sendrecv"), "sendrecv");
    const bool to = point_to_point(sendbuf, sendcount, sendtype, dest, "dest", "sendbuf");
    const bool from = point_to_point(recvbuf, recvcount, recvtype, source, "source", "recvbuf");
    if (to && from)
      call(
          [&] {
            return fn(comm_, sendbuf, sendcount, static_cast<int>(sendtype), dest, recvbuf, recvcount,
                      static_cast<int>(recvtype), source, stream);
          },
          "sendrecv");
    else if (to)
      send(sendbuf, sendcount, sendtype, dest, stream);
    else if (from)
      recv(recvbuf, recvcount, recvtype, source, stream);
  }

 private:
  // The plugin's function for an operation: UNSUPPORTED when it has none,
  // REVOKED when an earlier operation failed here.
  template <class Fn>
  Fn member(Fn fn, std::string_view what) const {
    if (!fn || !broken_.empty() || (fault_ && fault_->revoked())) [[unlikely]]
      refuse_call(fn == nullptr, what);
    return fn;
  }
  [[noreturn, gnu::cold, gnu::noinline]] void refuse_call(bool lacking, std::string_view what) const {
    if (lacking) lacks(t_, what);
    if (broken_.empty()) fault_->fail("backend '" + std::string(t_.name) + "', " + std::string(what));
    throw Error(Status::revoked, "backend '" + std::string(t_.name) + "', " + std::string(what) +
                                     ": the communicator was revoked after an earlier failure (" + broken_ + ")");
  }
  // A failed operation of a backend that can revoke: the communicator is
  // revoked (once), so that the other members fail promptly instead of
  // waiting, and this rank's later operations fail with REVOKED without
  // reaching the plugin. A backend without revoke decides itself whether
  // its communicator survives a failure (MPI's does, for local errors).
  // Runs one operation of the plugin (a wait of the mesh, for its
  // deadline), then checks its status.
  template <class F>
  void call(F&& op, const char* what) {
    int rc;
    {
      Fault::Wait wait(fault_, what);
      rc = op();
    }
    if (rc != DEVMESH_SUCCESS) [[unlikely]]
      fail(rc, what);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void fail(int rc, std::string_view what) {
    Error e = plugin_error(t_, rc, what);
    const devmesh_backend_v3_t* v3 = v3_of(t_);
    if (refusal(rc)) throw e;
    if (v3 && v3->revoke) {
      broken_ = e.what();
      // Revoked already (the plugin says so): another member spread it.
      if (rc != DEVMESH_ERR_REVOKED && !revoked_here_.exchange(true) &&
          v3->revoke(comm_, static_cast<int>(e.status())) != DEVMESH_SUCCESS)
        log_line(t_.name, DEVMESH_LOG_WARN, "revoking a communicator after a failure failed: " + plugin_message(t_));
    } else if (!fault_) {
      log_line(t_.name, DEVMESH_LOG_INFO,
               std::string(what) +
                   " failed and the backend has no revoke: the other members learn of it only "
                   "through the backend's own errors or timeout");
    }
    // A failure revokes the whole mesh (fault_tolerance); the wait its
    // deadline cut is a timeout here.
    if (fault_) {
      if (e.status() == Status::backend) e = classify(std::move(e));
      fault_->revoke(e.status(), e.what());
      throw fault_->local(std::move(e));
    }
    throw e;
  }
  // The argument gate. On the path of every call: a few compares and one
  // multiplication checked for overflow, inline; every refusal is built in
  // a cold function out of line (refuse_*), so that it costs nothing until
  // it happens.
  void datatype(DataType type) const {
    const int t = static_cast<int>(type);
    if (t < 0 || t >= datatypes) [[unlikely]]
      refuse_datatype(t);
  }
  void reduction(DataType type, ReduceOp op, std::string_view what) const {
    datatype(type);
    const int o = static_cast<int>(op);
    if (o < 0 || o >= reductions) [[unlikely]]
      refuse_op(o);
    if (!(reduce_mask_ >> (static_cast<int>(type) * reductions + o) & 1)) [[unlikely]]
      refuse_reduction(type, o, what);
  }
  // A buffer of count elements, times blocks: NULL only when empty, and a
  // byte size that fits in size_t.
  void buffer(const void* p, std::size_t count, DataType type, std::size_t blocks, const char* what) const {
    if (count == 0) return;
    std::size_t bytes = 0;  // es * blocks cannot overflow: es <= 8, blocks a group size
    if (p == nullptr || __builtin_mul_overflow(count, element_bytes(type) * blocks, &bytes)) [[unlikely]]
      refuse_buffer(p, count, blocks, what);
  }
  std::size_t group_blocks() const { return static_cast<std::size_t>(size_); }
  void group_rank(int r, const char* what) const {
    if (r < 0 || r >= size_) [[unlikely]]
      refuse_rank(r, what, "");
  }
  // False for MPI_PROC_NULL (nothing to do, as in MPI); throws for a peer
  // outside the group or a bad buffer, which a plugin is never given.
  bool point_to_point(const void* p, std::size_t count, DataType type, int peer, const char* what,
                      const char* buffer_name) const {
    datatype(type);
    if (peer == MPI_PROC_NULL) return false;
    if (peer < 0 || peer >= size_) [[unlikely]]
      refuse_rank(peer, what, " (nor MPI_PROC_NULL)");
    buffer(p, count, type, 1, buffer_name);
    return true;
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void refuse_datatype(int t) {
    throw Error(Status::invalid_argument, "unknown datatype " + std::to_string(t));
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void refuse_op(int o) {
    throw Error(Status::invalid_argument, "unknown reduction op " + std::to_string(o));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void refuse_reduction(DataType type, int o, std::string_view what) const {
    static constexpr const char* type_names[datatypes] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
                                                          "uint64", "float16", "bfloat16", "float32", "float64"};
    static constexpr const char* op_names[reductions] = {"sum", "prod", "min", "max"};
    throw Error(Status::unsupported, "backend '" + std::string(t_.name) + "', " + std::string(what) +
                                         ": cannot reduce " + type_names[static_cast<int>(type)] + " data with " +
                                         op_names[o]);
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void refuse_buffer(const void* p, std::size_t count, std::size_t blocks,
                                                                   const char* what) {
    if (p == nullptr) throw Error(Status::invalid_argument, std::string(what) + " is NULL with count > 0");
    throw Error(Status::invalid_argument, "count " + std::to_string(count) + " x " + std::to_string(blocks) +
                                              " elements overflow the byte size of " + what);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void refuse_rank(int r, const char* what, const char* also) const {
    throw Error(Status::invalid_argument, std::string(what) + " " + std::to_string(r) + " is outside the group of " +
                                              std::to_string(size_) + " ranks" + also);
  }
  Request transfer(void* request) const { return request ? Request(&t_, request) : Request(); }
  // What a backend's failure on a fault-tolerant mesh means, where the
  // backend could not tell (a closed connection): PROC_FAILED when a member
  // of the group died, REVOKED when a peer revoked the mesh (and so closed
  // its connections), as MPI confirms; it may lag the backend by some
  // milliseconds, so it is asked for up to half a second.
  Error classify(Error e) const {
    return failure_meaning(std::move(e), group_, fault_, std::chrono::milliseconds(500));
  }

  const devmesh_backend_v1_t& t_;
  void* comm_;
  int rank_;
  int size_;
  std::uint64_t reduce_mask_;              // bit t*4+op: the backend reduces data type t with op
  std::string broken_;                     // why the communicator is revoked, or ""
  Fault* fault_;                           // the mesh's fault state, or null
  MPI_Comm group_;                         // the dim's MPI communicator
  std::atomic<bool> revoked_here_{false};  // this rank called the plugin's revoke
};

// The reductions a backend states it has on an instance, as a mask; every
// pair for a table without reduce_supported (it then answers per call).
std::uint64_t reduce_mask(const devmesh_backend_v1_t& t, void* instance) {
  const devmesh_backend_v3_t* v3 = v3_of(t);
  std::uint64_t mask = 0;
  for (int type = 0; type < datatypes; ++type)
    for (int op = 0; op < reductions; ++op)
      if (!v3 || !v3->reduce_supported || v3->reduce_supported(instance, type, op) == 1)
        mask |= std::uint64_t{1} << (type * reductions + op);
  return mask;
}

std::string initialise(const devmesh_backend_v1_t& t) {
  const devmesh_backend_v3_t* v3 = v3_of(t);
  int rc = DEVMESH_SUCCESS;
  if (v3)
    rc = v3->init_host ? v3->init_host(&backend_host()) : DEVMESH_SUCCESS;
  else if (t.init)
    rc = t.init();
  if (rc == DEVMESH_SUCCESS) return {};
  return plugin_message(t);
}

}  // namespace

unsigned long long capabilities(const devmesh_backend_v1_t& t) {
  if (const devmesh_backend_v3_t* v3 = v3_of(t)) return v3->capabilities;
  const devmesh_backend_v2_t* v2 = v2_of(t);
  return DEVMESH_BACKEND_CAP_HOST_LOCAL_RANK | (v2 && v2->isend ? DEVMESH_BACKEND_CAP_NONBLOCKING : 0);
}

const devmesh_backend_v1_t& load_backend(std::string_view name) {
  if (name == "mpi") return mpi_backend();
  check_name(name);
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (auto it = r.tables.find(name); it != r.tables.end()) return *it->second;
  if (auto it = r.broken.find(name); it != r.broken.end()) throw Error(Status::unsupported, it->second);
  std::string where;
  const devmesh_backend_v1_t* table = nullptr;
  try {
    table = open_plugin(name, &where);
    if (const std::string why = initialise(*table); !why.empty())
      unusable(name, where, "its initialisation failed: " + why);
  } catch (const Error& e) {
    // Found but unusable stays so for the process (init is not retried);
    // not found may be fixed by a later DEVMESH_BACKEND_PATH.
    if (e.status() == Status::unsupported) r.broken.emplace(std::string(name), e.what());
    throw;
  }
  r.tables.emplace(std::string(name), table);
  log_line(name, DEVMESH_LOG_INFO, "loaded " + where + " (ABI v" + std::to_string(table->abi_version) + ")");
  return *table;
}

std::vector<std::pair<std::string, std::string>> split_options(const std::vector<std::string>& items,
                                                               std::string_view what) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& item : items) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(Status::invalid_argument, std::string(what) + " '" + item + "' is not of the form key=value");
    std::string key = item.substr(0, eq);
    for (const auto& [k, v] : out)
      if (k == key) throw Error(Status::invalid_argument, std::string(what) + " '" + key + "' is given twice");
    out.emplace_back(std::move(key), item.substr(eq + 1));
  }
  return out;
}

std::string BackendSpec::key() const {
  std::vector<std::string> sorted = options;
  std::sort(sorted.begin(), sorted.end());
  std::string k = name;
  for (const std::string& o : sorted) k += '\n' + o;
  return k;
}

BackendInstance::BackendInstance(const BackendSpec& spec)
    : table_(&load_backend(spec.name)), options_(split_options(spec.options, "option of backend '" + spec.name + "'")) {
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : options_) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  void* instance = nullptr;
  check(*table_, table_->open(static_cast<int>(options_.size()), keys.data(), values.data(), &instance), "options");
  instance_ = instance;
}

BackendInstance::~BackendInstance() { table_->close(instance_); }

std::unique_ptr<Communicator> BackendInstance::create(const devmesh_backend_group_t& group, Fault* fault) {
  const devmesh_backend_v1_t& t = *table_;
  const devmesh_backend_v3_t* v3 = v3_of(t);
  int rank = 0, size = 0;
  DEVMESH_MPI(MPI_Comm_rank(group.group, &rank));
  DEVMESH_MPI(MPI_Comm_size(group.group, &size));
  // Without communication of its own, nothing to agree on: a failure is
  // this rank's alone, as for any local call.
  const bool agreed = !(capabilities(t) & DEVMESH_BACKEND_CAP_LOCAL_CREATE);
  const std::string call = "creating a backend '" + std::string(t.name) + "' communicator";
  // This rank's outcome of a step, agreed on over the group when needed;
  // `undo` releases what this rank made when another rank failed.
  auto settle = [&](const Error& mine, std::vector<Field> fields, auto&& undo) {
    if (!agreed) {
      if (mine.status() != Status::success) throw mine;
      return;
    }
    try {
      agree(group.group, call, fields, mine.status(), mine.what());
    } catch (...) {
      if (mine.status() == Status::success) undo();
      if (mine.status() != Status::success) throw mine;  // its own message, its MPI code
      throw;
    }
  };
  auto outcome = [&](int rc, void* made, std::string_view step) {
    if (rc != DEVMESH_SUCCESS) return plugin_error(t, rc, step);
    if (!made)
      return Error(Status::backend, "plugin '" + std::string(t.name) + "' returned success from " + std::string(step) +
                                        " with a NULL communicator");
    return Error(Status::success, "");
  };
  void* comm = nullptr;
  if (v3) {
    void* prepared = nullptr;
    const int rc = v3->comm_prepare(instance_, &group, &prepared);
    settle(rc == DEVMESH_SUCCESS ? Error(Status::success, "") : plugin_error(t, rc, "comm_prepare"), {},
           [&] { v3->comm_abandon(prepared); });
    const int rc2 = v3->comm_connect(prepared, &comm);
    const Error connected = outcome(rc2, comm, "comm_connect");
    const std::uint64_t mask = connected.status() == Status::success ? reduce_mask(t, instance_) : 0;
    settle(connected, {{"reductions the backend supports", mask}}, [&] { t.comm_destroy(comm); });
    try {
      return std::make_unique<PluginCommunicator>(t, comm, rank, size, mask, fault, group.group);
    } catch (...) {
      t.comm_destroy(comm);
      throw;
    }
  }
  const int rc = t.comm_create(instance_, &group, &comm);
  settle(outcome(rc, comm, "comm_create"), {}, [&] { t.comm_destroy(comm); });
  try {
    return std::make_unique<PluginCommunicator>(t, comm, rank, size, reduce_mask(t, instance_), fault, group.group);
  } catch (...) {
    t.comm_destroy(comm);
    throw;
  }
}

std::string agreed_options(const BackendSpec& spec, const devmesh_backend_v1_t* table) {
  std::vector<std::string> kept;
  for (const std::string& item : spec.options) {
    const std::string_view key = std::string_view(item).substr(0, item.find('='));
    bool per_rank = false;
    for (const char* const* p = table ? table->per_rank_keys : nullptr; p && *p; ++p)
      if (key == *p) per_rank = true;
    if (!per_rank) kept.push_back(item);
  }
  std::sort(kept.begin(), kept.end());
  std::string out = spec.name;
  for (const std::string& s : kept) out += '\n' + s;
  return out;
}

}  // namespace devmesh::detail

namespace devmesh {

void register_backend(const devmesh_backend_v1_t* table) {
  if (!table) throw Error(Status::invalid_argument, "the backend table is NULL");
  if (const std::string problem = detail::table_problem(
          *table, {DEVMESH_BACKEND_ABI_VERSION, DEVMESH_BACKEND_ABI_VERSION_2, DEVMESH_BACKEND_ABI_VERSION_3});
      !problem.empty())
    throw Error(Status::invalid_argument, "the backend table cannot be used: " + problem);
  const std::string_view name = table->name;
  detail::check_name(name);
  if (name == "mpi") throw Error(Status::invalid_argument, "the name 'mpi' is reserved for the built-in backend");
  detail::Registry& r = detail::registry();
  std::lock_guard lock(r.mutex);
  if (auto it = r.tables.find(name); it != r.tables.end()) {
    if (it->second == table) return;
    throw Error(Status::duplicate_name,
                "another backend is already registered or loaded as '" + std::string(name) + "'");
  }
  if (const std::string why = detail::initialise(*table); !why.empty())
    throw Error(Status::unsupported, "backend '" + std::string(name) + "' failed to initialise: " + why);
  r.broken.erase(std::string(name));
  r.tables.emplace(std::string(name), table);
}

Request::~Request() {
  if (!request_) return;
  try {
    wait();
  } catch (...) {
    // Documented: a destroyed pending Request waits and swallows a failure.
  }
}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    this->~Request();
    table_ = other.table_;
    request_ = std::exchange(other.request_, nullptr);
  }
  return *this;
}

// A Request exists only for a table with isend, irecv, test and wait all
// present (checked at loading and registration). Each of test and wait
// frees the request when it reports completion or fails: the Request is
// empty after either.
void Request::wait() {
  if (!request_) return;
  void* r = std::exchange(request_, nullptr);
  detail::check(*table_, detail::v2_of(*table_)->wait(r), "wait");
}

bool Request::test() {
  if (!request_) return true;
  int done = 0;
  const int rc = detail::v2_of(*table_)->test(request_, &done);
  if (rc != DEVMESH_SUCCESS || done) request_ = nullptr;
  detail::check(*table_, rc, "test");
  return done != 0;
}

void Request::wait_all(std::span<Request> requests) {
  std::exception_ptr first;
  for (Request& r : requests) {
    try {
      r.wait();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

std::size_t size_of(DataType t) noexcept {
  const int i = static_cast<int>(t);
  return i >= 0 && i < detail::datatypes ? detail::element_bytes(t) : 0;
}

}  // namespace devmesh
