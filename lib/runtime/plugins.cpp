#include "plugins.hpp"

#include <dlfcn.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <initializer_list>
#include <utility>
#include <cstdlib>
#include <map>
#include <mutex>

#include "mpi_check.hpp"

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

constexpr std::size_t max_name = 64;

void check_name(std::string_view name) {
  const bool ok = !name.empty() && name.size() <= max_name &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
                  });
  if (!ok)
    throw Error(Status::invalid_argument,
                "unknown backend '" + std::string(name) +
                    "': a backend name is 1 to 64 of a-z, 0-9, '_', '-' (\"mpi\" is built in; a backend X is "
                    "the plugin libdevmesh-backend-X.so)");
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
  std::string missing;
  auto need = [&](bool present, const char* what) {
    if (!present) missing += std::string(missing.empty() ? "" : ", ") + what;
  };
  need(t.last_error != nullptr, "last_error");
  need(t.open != nullptr, "open");
  need(t.close != nullptr, "close");
  need(t.comm_create != nullptr, "comm_create");
  need(t.comm_destroy != nullptr, "comm_destroy");
  if (!missing.empty()) return "its table lacks the mandatory " + missing;
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
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      unusable(name, path, std::string("the loader says: ") + (e ? e : "unknown error"));
    }
    break;
  }
  if (!handle) {
    *where = file + " through the dynamic loader";
    handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
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
  unsigned version = DEVMESH_BACKEND_ABI_VERSION_2;
  if (const auto* v2 = static_cast<const devmesh_backend_v2_t*>(dlsym(handle, DEVMESH_BACKEND_SYMBOL_V2))) {
    table = &v2->v1;
  } else {
    table = static_cast<const devmesh_backend_v1_t*>(dlsym(handle, DEVMESH_BACKEND_SYMBOL_V1));
    version = DEVMESH_BACKEND_ABI_VERSION;
  }
  if (!table) {
    dlclose(handle);
    unusable(name, *where,
             "it exports neither " DEVMESH_BACKEND_SYMBOL_V2 " nor " DEVMESH_BACKEND_SYMBOL_V1
             " (not a devmesh backend plugin)");
  }
  std::string problem = table_problem(*table, {version});
  if (problem.empty() && name != table->name)
    problem = "it calls itself '" + std::string(table->name) + "'";
  if (!problem.empty()) {
    dlclose(handle);
    unusable(name, *where, problem);
  }
  return table;
}

std::string plugin_message(const devmesh_backend_v1_t& t) {
  const char* m = t.last_error ? t.last_error() : nullptr;
  return m && *m ? m : "no detail given";
}

// A plugin status as an exception, with the MPI error behind it if any.
[[noreturn]] void fail(const devmesh_backend_v1_t& t, int rc, std::string_view what) {
  const Status s = rc > 0 && rc <= static_cast<int>(Status::internal) ? static_cast<Status>(rc) : Status::internal;
  std::string text = "backend '" + std::string(t.name) + "', " + std::string(what) + ": " + plugin_message(t);
  const int code = t.last_mpi_error ? t.last_mpi_error() : 0;
  int cls = 0;
  if (code != 0 && MPI_Error_class(code, &cls) != MPI_SUCCESS) cls = code;
  throw Error(s, text, code, cls);
}

void check(const devmesh_backend_v1_t& t, int rc, std::string_view what) {
  if (rc != DEVMESH_SUCCESS) fail(t, rc, what);
}

[[noreturn]] void lacks(const devmesh_backend_v1_t& t, std::string_view what) {
  throw Error(Status::unsupported,
              std::string(what) + " is not supported by backend '" + std::string(t.name) + "'");
}

// The version 2 table t is the first member of, or nullptr for a version 1
// table (checked at loading or registration).
const devmesh_backend_v2_t* v2_of(const devmesh_backend_v1_t& t) {
  return t.abi_version >= DEVMESH_BACKEND_ABI_VERSION_2 ? reinterpret_cast<const devmesh_backend_v2_t*>(&t)
                                                        : nullptr;
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

class PluginCommunicator final : public Communicator {
 public:
  PluginCommunicator(const devmesh_backend_v1_t& t, void* comm, int rank, int size)
      : t_(t), comm_(comm), rank_(rank), size_(size) {}
  ~PluginCommunicator() override { t_.comm_destroy(comm_); }
  std::string_view backend() const noexcept override { return t_.name; }
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  void* native_handle() noexcept override {
    void* h = nullptr;
    return t_.comm_native && t_.comm_native(comm_, &h) == DEVMESH_SUCCESS ? h : nullptr;
  }
  void allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                 void* stream) override {
    if (!t_.allreduce) lacks(t_, "allreduce");
    check(t_, t_.allreduce(comm_, send, recv, count, static_cast<int>(type), static_cast<int>(op), stream),
          "allreduce");
  }
  void allgather(const void* send, void* recv, std::size_t count, DataType type, void* stream) override {
    if (!t_.allgather) lacks(t_, "allgather");
    check(t_, t_.allgather(comm_, send, recv, count, static_cast<int>(type), stream), "allgather");
  }
  void reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                      void* stream) override {
    if (!t_.reduce_scatter) lacks(t_, "reduce_scatter");
    check(t_, t_.reduce_scatter(comm_, send, recv, count, static_cast<int>(type), static_cast<int>(op), stream),
          "reduce_scatter");
  }
  void broadcast(void* buffer, std::size_t count, DataType type, int root, void* stream) override {
    if (!t_.broadcast) lacks(t_, "broadcast");
    check(t_, t_.broadcast(comm_, buffer, count, static_cast<int>(type), root, stream), "broadcast");
  }
  void alltoall(const void* send, void* recv, std::size_t count, DataType type, void* stream) override {
    if (!t_.alltoall) lacks(t_, "alltoall");
    check(t_, t_.alltoall(comm_, send, recv, count, static_cast<int>(type), stream), "alltoall");
  }
  void barrier(void* stream) override {
    if (!t_.barrier) lacks(t_, "barrier");
    check(t_, t_.barrier(comm_, stream), "barrier");
  }
  void send(const void* buffer, std::size_t count, DataType type, int peer, void* stream) override {
    if (!t_.send) lacks(t_, "send");
    if (peer == MPI_PROC_NULL) return;  // as MPI_Send; other bad peers are the backend's to report
    check(t_, t_.send(comm_, buffer, count, static_cast<int>(type), peer, stream), "send");
  }
  void recv(void* buffer, std::size_t count, DataType type, int peer, void* stream) override {
    if (!t_.recv) lacks(t_, "recv");
    if (peer == MPI_PROC_NULL) return;
    check(t_, t_.recv(comm_, buffer, count, static_cast<int>(type), peer, stream), "recv");
  }
  Request isend(const void* buffer, std::size_t count, DataType type, int peer, void* stream) override {
    const auto op = v2_op(t_, &devmesh_backend_v2_t::isend, "isend");
    if (!peer_arg(peer, "isend")) return {};
    void* request = nullptr;
    check(t_, op(comm_, buffer, count, static_cast<int>(type), peer, stream, &request), "isend");
    return transfer(request);
  }
  Request irecv(void* buffer, std::size_t count, DataType type, int peer, void* stream) override {
    const auto op = v2_op(t_, &devmesh_backend_v2_t::irecv, "irecv");
    if (!peer_arg(peer, "irecv")) return {};
    void* request = nullptr;
    check(t_, op(comm_, buffer, count, static_cast<int>(type), peer, stream, &request), "irecv");
    return transfer(request);
  }
  void sendrecv(const void* sendbuf, std::size_t sendcount, DataType sendtype, int dest, void* recvbuf,
                std::size_t recvcount, DataType recvtype, int source, void* stream) override {
    const auto op = v2_op(t_, &devmesh_backend_v2_t::sendrecv, "sendrecv");
    const bool to = peer_arg(dest, "sendrecv to"), from = peer_arg(source, "sendrecv from");
    if (to && from)
      check(t_, op(comm_, sendbuf, sendcount, static_cast<int>(sendtype), dest, recvbuf, recvcount,
                   static_cast<int>(recvtype), source, stream),
            "sendrecv");
    else if (to)
      send(sendbuf, sendcount, sendtype, dest, stream);
    else if (from)
      recv(recvbuf, recvcount, recvtype, source, stream);
  }

 private:
  // False for MPI_PROC_NULL (nothing to do, as in MPI); throws for a peer
  // outside the group, which a plugin is never given.
  bool peer_arg(int peer, const char* what) const {
    if (peer == MPI_PROC_NULL) return false;
    if (peer < 0 || peer >= size_)
      throw Error(Status::invalid_argument, std::string(what) + " peer " + std::to_string(peer) +
                                                " is outside the group of " + std::to_string(size_) +
                                                " ranks (nor MPI_PROC_NULL)");
    return true;
  }
  Request transfer(void* request) const { return request ? Request(&t_, request) : Request(); }

  const devmesh_backend_v1_t& t_;
  void* comm_;
  int rank_;
  int size_;
};

}  // namespace

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
    if (table->init) {
      if (const int rc = table->init(); rc != DEVMESH_SUCCESS)
        unusable(name, where, "its initialisation failed: " + plugin_message(*table));
    }
  } catch (const Error& e) {
    // Found but unusable stays so for the process (init is not retried);
    // not found may be fixed by a later DEVMESH_BACKEND_PATH.
    if (e.status() == Status::unsupported) r.broken.emplace(std::string(name), e.what());
    throw;
  }
  r.tables.emplace(std::string(name), table);
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
  check(*table_, table_->open(static_cast<int>(options_.size()), keys.data(), values.data(), &instance),
        "options");
  instance_ = instance;
}

BackendInstance::~BackendInstance() { table_->close(instance_); }

std::unique_ptr<Communicator> BackendInstance::create(const devmesh_backend_group_t& group) {
  int rank = 0, size = 0;
  DEVMESH_MPI(MPI_Comm_rank(group.group, &rank));
  DEVMESH_MPI(MPI_Comm_size(group.group, &size));
  void* comm = nullptr;
  check(*table_, table_->comm_create(instance_, &group, &comm), "creating a communicator");
  try {
    return std::make_unique<PluginCommunicator>(*table_, comm, rank, size);
  } catch (...) {
    table_->comm_destroy(comm);
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
  if (const std::string problem =
          detail::table_problem(*table, {DEVMESH_BACKEND_ABI_VERSION, DEVMESH_BACKEND_ABI_VERSION_2});
      !problem.empty())
    throw Error(Status::invalid_argument, "the backend table cannot be used: " + problem);
  const std::string_view name = table->name;
  detail::check_name(name);
  if (name == "mpi") throw Error(Status::invalid_argument, "the name 'mpi' is reserved for the built-in backend");
  detail::Registry& r = detail::registry();
  std::lock_guard lock(r.mutex);
  if (auto it = r.tables.find(name); it != r.tables.end()) {
    if (it->second == table) return;
    throw Error(Status::duplicate_name, "another backend is already registered or loaded as '" +
                                            std::string(name) + "'");
  }
  if (table->init) {
    if (const int rc = table->init(); rc != DEVMESH_SUCCESS)
      throw Error(Status::unsupported, "backend '" + std::string(name) +
                                           "' failed to initialise: " + detail::plugin_message(*table));
  }
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

// Each of the table's test and wait frees the request when it reports
// completion or fails: the Request is empty after either.
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
  switch (t) {
    case DataType::int8:
    case DataType::uint8: return 1;
    case DataType::float16:
    case DataType::bfloat16: return 2;
    case DataType::int32:
    case DataType::uint32:
    case DataType::float32: return 4;
    case DataType::int64:
    case DataType::uint64:
    case DataType::float64: return 8;
  }
  return 0;
}

}  // namespace devmesh
