#include "plugin_communicator.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <utility>

#include "fault.hpp"
#include "mpi_features.hpp"
#include "plugins.hpp"

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

// A refusal before any communication (the plugin lacks the operation or
// the argument): the communicator stays usable. Anything else may have left
// the members' traffic half done.
bool refusal(int rc) { return rc == DEVMESH_ERR_UNSUPPORTED || rc == DEVMESH_ERR_INVALID_ARGUMENT; }

// A communicator's one link to the mesh's fault state (fault_tolerance):
// every use of that state goes through here. Without one (a mesh without
// fault_tolerance) each call does nothing.
class FaultLink {
 public:
  explicit FaultLink(Fault* fault) noexcept : fault_(fault) {}
  bool present() const noexcept { return fault_ != nullptr; }
  bool revoked() const noexcept { return fault_ && fault_->revoked(); }
  // A revoke of the mesh calls `revoke` (Fault::add).
  void on_revoke(std::function<void(int)> revoke, bool any_thread, bool spreads) {
    if (fault_) fault_->add(std::move(revoke), any_thread, spreads);
  }
  // A wait of the mesh, for its deadline, while it lives.
  Fault::Wait wait(const char* what) const noexcept { return Fault::Wait(fault_, what); }
  // The error of an operation `what` of the revoked mesh.
  [[noreturn]] void refuse(std::string_view what) const { fault_->fail(what); }
  // A failure revokes the whole mesh; what the caller reports of it (the
  // wait its deadline cut is a timeout here). group: the dim's members, of
  // whom MPI tells what a failure the backend could not name means (a
  // closed connection), asked for up to half a second (failure_meaning).
  Error failed(Error e, MPI_Comm group) {
    e = failure_meaning(std::move(e), group, fault_, std::chrono::milliseconds(500));
    fault_->revoke(e.status(), e.what());
    return fault_->local(std::move(e));
  }

 private:
  Fault* fault_;
};

// The argument gate. On the path of every call: a few compares and one
// multiplication checked for overflow, inline; every refusal is built in a
// cold function out of line (refuse_*), so that it costs nothing until it
// happens.
class Gate {
 public:
  Gate(const PluginTable& t, int size, std::uint64_t reduce_mask) : t_(t), size_(size), reduce_mask_(reduce_mask) {}
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
  std::size_t blocks() const { return static_cast<std::size_t>(size_); }
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

 private:
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

  const PluginTable& t_;
  int size_;
  std::uint64_t reduce_mask_;  // bit t*4+op: the backend reduces data type t with op
};

class PluginCommunicator final : public Communicator {
 public:
  PluginCommunicator(const PluginTable& t, void* comm, int rank, int size, std::uint64_t reduce_mask, Fault* fault,
                     MPI_Comm group)
      : t_(t), comm_(comm), rank_(rank), size_(size), gate_(t, size, reduce_mask), fault_(fault), group_(group) {
    // A revoke of the mesh reaches the backend's communicator (from the
    // deadline's thread only where the backend allows it: Fault::revoke);
    // this rank's next call fails (member()) without reaching the plugin.
    if (t_.revoke)
      fault_.on_revoke(
          [this](int status) {
            if (!revoked_here_.exchange(true)) t_.revoke(comm_, status);
          },
          (t_.capabilities & DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD) != 0,
          (t_.capabilities & DEVMESH_BACKEND_CAP_REVOKE_SPREADS) != 0);
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
    gate_.reduction(type, op, "allreduce");
    gate_.buffer(send, count, type, 1, "sendbuf");
    gate_.buffer(recv, count, type, 1, "recvbuf");
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), static_cast<int>(op), stream); },
         "allreduce");
  }
  void allgather(const void* send, void* recv, std::size_t count, DataType type, void* stream) override {
    const auto fn = member(t_.allgather, "allgather");
    gate_.datatype(type);
    gate_.buffer(send, count, type, 1, "sendbuf");
    gate_.buffer(recv, count, type, gate_.blocks(), "recvbuf");
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), stream); }, "allgather");
  }
  void reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                      void* stream) override {
    const auto fn = member(t_.reduce_scatter, "reduce_scatter");
    gate_.reduction(type, op, "reduce_scatter");
    gate_.buffer(send, count, type, gate_.blocks(), "sendbuf");
    gate_.buffer(recv, count, type, 1, "recvbuf");
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), static_cast<int>(op), stream); },
         "reduce_scatter");
  }
  void broadcast(void* buffer, std::size_t count, DataType type, int root, void* stream) override {
    const auto fn = member(t_.broadcast, "broadcast");
    gate_.datatype(type);
    gate_.group_rank(root, "root");
    gate_.buffer(buffer, count, type, 1, "buffer");
    call([&] { return fn(comm_, buffer, count, static_cast<int>(type), root, stream); }, "broadcast");
  }
  void alltoall(const void* send, void* recv, std::size_t count, DataType type, void* stream) override {
    const auto fn = member(t_.alltoall, "alltoall");
    gate_.datatype(type);
    gate_.buffer(send, count, type, gate_.blocks(), "sendbuf");
    gate_.buffer(recv, count, type, gate_.blocks(), "recvbuf");
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), stream); }, "alltoall");
  }
  void barrier(void* stream) override {
    const auto fn = member(t_.barrier, "barrier");
    call([&] { return fn(comm_, stream); }, "barrier");
  }
  void send(const void* buf, std::size_t count, DataType type, int peer, void* stream) override {
    const auto fn = member(t_.send, "send");
    if (!gate_.point_to_point(buf, count, type, peer, "peer", "buffer")) return;
    call([&] { return fn(comm_, buf, count, static_cast<int>(type), peer, stream); }, "send");
  }
  void recv(void* buf, std::size_t count, DataType type, int peer, void* stream) override {
    const auto fn = member(t_.recv, "recv");
    if (!gate_.point_to_point(buf, count, type, peer, "peer", "buffer")) return;
    call([&] { return fn(comm_, buf, count, static_cast<int>(type), peer, stream); }, "recv");
  }
  Request isend(const void* buf, std::size_t count, DataType type, int peer, void* stream) override {
    const auto fn = member(t_.isend, "isend");
    if (!gate_.point_to_point(buf, count, type, peer, "peer", "buffer")) return {};
    void* request = nullptr;
    call([&] { return fn(comm_, buf, count, static_cast<int>(type), peer, stream, &request); }, "isend");
    return transfer(request);
  }
  Request irecv(void* buf, std::size_t count, DataType type, int peer, void* stream) override {
    const auto fn = member(t_.irecv, "irecv");
    if (!gate_.point_to_point(buf, count, type, peer, "peer", "buffer")) return {};
    void* request = nullptr;
    call([&] { return fn(comm_, buf, count, static_cast<int>(type), peer, stream, &request); }, "irecv");
    return transfer(request);
  }
  void sendrecv(const void* sendbuf, std::size_t sendcount, DataType sendtype, int dest, void* recvbuf,
                std::size_t recvcount, DataType recvtype, int source, void* stream) override {
    const auto fn = member(t_.sendrecv, "sendrecv");
    const bool to = gate_.point_to_point(sendbuf, sendcount, sendtype, dest, "dest", "sendbuf");
    const bool from = gate_.point_to_point(recvbuf, recvcount, recvtype, source, "source", "recvbuf");
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
    if (!fn || !broken_.empty() || fault_.revoked()) [[unlikely]]
      refuse_call(fn == nullptr, what);
    return fn;
  }
  [[noreturn, gnu::cold, gnu::noinline]] void refuse_call(bool lacking, std::string_view what) const {
    if (lacking) lacks(t_, what);
    if (broken_.empty()) fault_.refuse("backend '" + std::string(t_.name) + "', " + std::string(what));
    throw Error(Status::revoked, "backend '" + std::string(t_.name) + "', " + std::string(what) +
                                     ": the communicator was revoked after an earlier failure (" + broken_ + ")");
  }
  // Runs one operation of the plugin (a wait of the mesh, for its
  // deadline), then checks its status.
  template <class F>
  void call(F&& op, const char* what) {
    int rc;
    {
      const Fault::Wait wait = fault_.wait(what);
      rc = op();
    }
    if (rc != DEVMESH_SUCCESS) [[unlikely]]
      fail(rc, what);
  }
  // A failed operation of a backend that can revoke: the communicator is
  // revoked (once), so that the other members fail promptly instead of
  // waiting, and this rank's later operations fail with REVOKED without
  // reaching the plugin. A backend without revoke decides itself whether
  // its communicator survives a failure (MPI's does, for local errors).
  [[noreturn, gnu::cold, gnu::noinline]] void fail(int rc, std::string_view what) {
    Error e = plugin_error(t_, rc, what);
    if (refusal(rc)) throw e;
    if (t_.revoke) {
      broken_ = e.what();
      // Revoked already (the plugin says so): another member spread it.
      if (rc != DEVMESH_ERR_REVOKED && !revoked_here_.exchange(true) &&
          t_.revoke(comm_, static_cast<int>(e.status())) != DEVMESH_SUCCESS)
        log_line(t_.name, DEVMESH_LOG_WARN, "revoking a communicator after a failure failed: " + plugin_message(t_));
    } else if (!fault_.present()) {
      log_line(t_.name, DEVMESH_LOG_INFO,
               std::string(what) +
                   " failed and the backend has no revoke: the other members learn of it only "
                   "through the backend's own errors or timeout");
    }
    if (fault_.present()) throw fault_.failed(std::move(e), group_);
    throw e;
  }
  Request transfer(void* request) const { return request ? Request(&t_, request) : Request(); }

  const PluginTable& t_;
  void* comm_;
  int rank_;
  int size_;
  Gate gate_;
  std::string broken_;                     // why the communicator is revoked, or ""
  FaultLink fault_;                        // the mesh's fault state
  MPI_Comm group_;                         // the dim's MPI communicator
  std::atomic<bool> revoked_here_{false};  // this rank called the plugin's revoke
};

}  // namespace

std::unique_ptr<Communicator> plugin_communicator(const PluginTable& t, void* comm, int rank, int size,
                                                  std::uint64_t reduce_mask, Fault* fault, MPI_Comm group) {
  return std::make_unique<PluginCommunicator>(t, comm, rank, size, reduce_mask, fault, group);
}

}  // namespace devmesh::detail
