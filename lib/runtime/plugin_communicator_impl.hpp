// PluginCommunicator: a plugin's communicator as devmesh::Communicator,
// the one door of every collective and point-to-point call. Its members are
// defined here (version 1 and 2's operations, inline) and in
// plugin_collectives.cpp (version 4's).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "fault.hpp"
#include "mpi_features.hpp"
#include "plugin_gate.hpp"
#include "plugins.hpp"

namespace devmesh::detail {

// A refusal before any communication (the plugin lacks the operation or
// the argument): the communicator stays usable. Anything else may have left
// the members' traffic half done.
inline bool refusal(int rc) { return rc == DEVMESH_ERR_UNSUPPORTED || rc == DEVMESH_ERR_INVALID_ARGUMENT; }

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

class PluginCommunicator;

// What a communicator's Requests share with it (plugin_requests.cpp): the
// plugin requests pending on it, which it ends before it goes (the plugin
// contract: requests end before comm_destroy), and whether it is gone.
// Reference-counted: the communicator holds one reference and each pending
// Request one, so that a Request outliving its communicator finds the host
// closed rather than freed.
class RequestHost {
 public:
  explicit RequestHost(PluginCommunicator& owner) : owner_(&owner) { live_.reserve(8); }
  RequestHost(const RequestHost&) = delete;
  RequestHost& operator=(const RequestHost&) = delete;
  // The Request of the plugin's pending request r (not null).
  Request adopt(void* r);
  // Ends r as PluginCommunicator::end_request does (wait: blocking, else a
  // test); true when it ended, by completion or failure (the failure is
  // thrown). Once the communicator is gone: Error(invalid_argument), r
  // untouched (the communicator ended it).
  bool end(void* r, bool wait);
  // A wait of the mesh around several ends (wait_all); none once closed.
  Fault::Wait outer_wait(const char* what);
  // The communicator goes: every pending request is ended (waited for,
  // failures swallowed), then the host is closed.
  void close() noexcept;
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  void forget(void* r) noexcept;

  std::atomic<std::size_t> refs_{1};
  std::mutex mutex_;           // guards owner_ and live_, never held across a plugin call
  PluginCommunicator* owner_;  // null once closed
  std::vector<void*> live_;    // the plugin requests pending on owner_
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
  // Pending requests end first (a wait each, as a pending Request's
  // destructor does), then the plugin's communicator goes.
  ~PluginCommunicator() override {
    host_->close();
    host_->release();
    t_.comm_destroy(comm_);
  }
  PluginCommunicator(const PluginCommunicator&) = delete;
  PluginCommunicator& operator=(const PluginCommunicator&) = delete;
  std::string_view backend() const noexcept override { return t_.name; }
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  void* native_handle() noexcept override {
    void* h = nullptr;
    return t_.comm_native && t_.comm_native(comm_, &h) == DEVMESH_SUCCESS ? h : nullptr;
  }

  void allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, void* stream) override {
    const auto fn = member(t_.allreduce, "allreduce");
    check_allreduce(send, recv, count, type, op, "allreduce");
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), static_cast<int>(op), stream); },
         "allreduce");
  }
  void allgather(const void* send, void* recv, std::size_t count, DataType type, void* stream) override {
    const auto fn = member(t_.allgather, "allgather");
    check_allgather(send, recv, count, type);
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), stream); }, "allgather");
  }
  void reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                      void* stream) override {
    const auto fn = member(t_.reduce_scatter, "reduce_scatter");
    check_reduce_scatter(send, recv, count, type, op, "reduce_scatter");
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), static_cast<int>(op), stream); },
         "reduce_scatter");
  }
  void broadcast(void* buffer, std::size_t count, DataType type, int root, void* stream) override {
    const auto fn = member(t_.broadcast, "broadcast");
    check_broadcast(buffer, count, type, root);
    call([&] { return fn(comm_, buffer, count, static_cast<int>(type), root, stream); }, "broadcast");
  }
  void alltoall(const void* send, void* recv, std::size_t count, DataType type, void* stream) override {
    const auto fn = member(t_.alltoall, "alltoall");
    check_alltoall(send, recv, count, type);
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

  // Version 4 (plugin_collectives.cpp).
  void alltoallv(const void* send, std::span<const std::size_t> sendcounts, std::span<const std::size_t> sdispls,
                 void* recv, std::span<const std::size_t> recvcounts, std::span<const std::size_t> rdispls,
                 DataType type, void* stream) override;
  void allgatherv(const void* send, std::size_t sendcount, void* recv, std::span<const std::size_t> recvcounts,
                  std::span<const std::size_t> rdispls, DataType type, void* stream) override;
  void reduce_scatterv(const void* send, void* recv, std::span<const std::size_t> recvcounts, DataType type,
                       ReduceOp op, void* stream) override;
  void gather(const void* send, void* recv, std::size_t count, DataType type, int root, void* stream) override;
  void gatherv(const void* send, std::size_t sendcount, void* recv, std::span<const std::size_t> recvcounts,
               std::span<const std::size_t> rdispls, DataType type, int root, void* stream) override;
  void scatter(const void* send, void* recv, std::size_t count, DataType type, int root, void* stream) override;
  void scatterv(const void* send, std::span<const std::size_t> sendcounts, std::span<const std::size_t> sdispls,
                void* recv, std::size_t recvcount, DataType type, int root, void* stream) override;
  void reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root,
              void* stream) override;
  Request iallreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                     void* stream) override;
  Request iallgather(const void* send, void* recv, std::size_t count, DataType type, void* stream) override;
  Request ireduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                          void* stream) override;
  Request ibroadcast(void* buffer, std::size_t count, DataType type, int root, void* stream) override;
  Request ialltoall(const void* send, void* recv, std::size_t count, DataType type, void* stream) override;
  Request ibarrier(void* stream) override;
  Request ialltoallv(const void* send, std::span<const std::size_t> sendcounts, std::span<const std::size_t> sdispls,
                     void* recv, std::span<const std::size_t> recvcounts, std::span<const std::size_t> rdispls,
                     DataType type, void* stream) override;
  Request iallgatherv(const void* send, std::size_t sendcount, void* recv, std::span<const std::size_t> recvcounts,
                      std::span<const std::size_t> rdispls, DataType type, void* stream) override;
  Request ireduce_scatterv(const void* send, void* recv, std::span<const std::size_t> recvcounts, DataType type,
                           ReduceOp op, void* stream) override;
  Request igather(const void* send, void* recv, std::size_t count, DataType type, int root, void* stream) override;
  Request igatherv(const void* send, std::size_t sendcount, void* recv, std::span<const std::size_t> recvcounts,
                   std::span<const std::size_t> rdispls, DataType type, int root, void* stream) override;
  Request iscatter(const void* send, void* recv, std::size_t count, DataType type, int root, void* stream) override;
  Request iscatterv(const void* send, std::span<const std::size_t> sendcounts, std::span<const std::size_t> sdispls,
                    void* recv, std::size_t recvcount, DataType type, int root, void* stream) override;
  Request ireduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root,
                  void* stream) override;
  Request batch(std::span<const P2P> ops, void* stream) override;

 private:
  // The version 4 operations, blocking (request null) or started; `what`
  // names the operation as the caller called it. Inlined into both forms:
  // a call less on the path of every call.
  [[gnu::always_inline]] inline void alltoallv_(const void* send, std::span<const std::size_t> sendcounts,
                                                std::span<const std::size_t> sdispls, void* recv,
                                                std::span<const std::size_t> recvcounts,
                                                std::span<const std::size_t> rdispls, DataType type, void* stream,
                                                void** request, const char* what);
  [[gnu::always_inline]] inline void allgatherv_(const void* send, std::size_t sendcount, void* recv,
                                                 std::span<const std::size_t> recvcounts,
                                                 std::span<const std::size_t> rdispls, DataType type, void* stream,
                                                 void** request, const char* what);
  [[gnu::always_inline]] inline void reduce_scatterv_(const void* send, void* recv,
                                                      std::span<const std::size_t> recvcounts, DataType type,
                                                      ReduceOp op, void* stream, void** request, const char* what);
  [[gnu::always_inline]] inline void gather_(const void* send, void* recv, std::size_t count, DataType type, int root,
                                             void* stream, void** request, const char* what);
  [[gnu::always_inline]] inline void gatherv_(const void* send, std::size_t sendcount, void* recv,
                                              std::span<const std::size_t> recvcounts,
                                              std::span<const std::size_t> rdispls, DataType type, int root,
                                              void* stream, void** request, const char* what);
  [[gnu::always_inline]] inline void scatter_(const void* send, void* recv, std::size_t count, DataType type, int root,
                                              void* stream, void** request, const char* what);
  [[gnu::always_inline]] inline void scatterv_(const void* send, std::span<const std::size_t> sendcounts,
                                               std::span<const std::size_t> sdispls, void* recv, std::size_t recvcount,
                                               DataType type, int root, void* stream, void** request, const char* what);
  [[gnu::always_inline]] inline void reduce_(const void* send, void* recv, std::size_t count, DataType type,
                                             ReduceOp op, int root, void* stream, void** request, const char* what);
  // The checks of version 1's collectives, for their blocking and started
  // forms alike.
  void check_allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                       std::string_view what) const {
    gate_.reduction(type, op, what);
    gate_.buffer(send, count, type, 1, "sendbuf");
    gate_.buffer(recv, count, type, 1, "recvbuf");
  }
  void check_allgather(const void* send, void* recv, std::size_t count, DataType type) const {
    gate_.datatype(type);
    gate_.buffer(send, count, type, 1, "sendbuf");
    gate_.buffer(recv, count, type, gate_.blocks(), "recvbuf");
  }
  void check_reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                            std::string_view what) const {
    gate_.reduction(type, op, what);
    gate_.buffer(send, count, type, gate_.blocks(), "sendbuf");
    gate_.buffer(recv, count, type, 1, "recvbuf");
  }
  void check_broadcast(void* buffer, std::size_t count, DataType type, int root) const {
    gate_.datatype(type);
    gate_.group_rank(root, "root");
    gate_.buffer(buffer, count, type, 1, "buffer");
  }
  void check_alltoall(const void* send, void* recv, std::size_t count, DataType type) const {
    gate_.datatype(type);
    gate_.buffer(send, count, type, gate_.blocks(), "sendbuf");
    gate_.buffer(recv, count, type, gate_.blocks(), "recvbuf");
  }
  // A version 4 member for a blocking call (request null) or a started one,
  // which needs DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES too.
  template <class Fn>
  Fn member(Fn fn, void** request, const char* what) const {
    const bool started_ok = !request || (t_.capabilities & DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES);
    return member(started_ok ? fn : nullptr, what);
  }
  // Runs op(&request) and returns the Request it started.
  template <class F>
  Request started(F&& op) {
    void* request = nullptr;
    op(&request);
    return transfer(request);
  }
  // The plugin's function for an operation: UNSUPPORTED when it has none,
  // REVOKED when an earlier operation failed here.
  template <class Fn>
  Fn member(Fn fn, const char* what) const {
    if (!fn || !broken_.empty() || fault_.revoked()) [[unlikely]]
      refuse_call(fn == nullptr, what);
    return fn;
  }
  [[noreturn, gnu::cold, gnu::noinline]] void refuse_call(bool lacking, const char* what) const {
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
  Request transfer(void* request) { return request ? host_->adopt(request) : Request(); }
  // Ends the plugin's request r (block: its wait, else its test) as call()
  // runs an operation: a wait of the mesh, for its deadline; a failure
  // through fail(). On a revoked communicator the plugin's wait still ends
  // r (promptly: the revoke fails what is pending), then REVOKED. True when
  // r ended.
  bool end_request(void* r, bool block) {
    const char* what = block ? "wait" : "test";
    const bool revoked = !broken_.empty() || fault_.revoked();
    int done = 1, rc;
    if (block || revoked) {
      const Fault::Wait wait = fault_.wait("a request");
      rc = t_.wait(r);
    } else {
      rc = t_.test(r, &done);
    }
    if (revoked) [[unlikely]]
      refuse_call(false, what);
    if (rc != DEVMESH_SUCCESS) [[unlikely]]
      fail(rc, what);
    return done != 0;
  }
  friend class RequestHost;

  const PluginTable& t_;
  void* comm_;
  int rank_;
  int size_;
  Gate gate_;
  std::string broken_;                     // why the communicator is revoked, or ""
  FaultLink fault_;                        // the mesh's fault state
  MPI_Comm group_;                         // the dim's MPI communicator
  std::atomic<bool> revoked_here_{false};  // this rank called the plugin's revoke
  // The requests pending on it, which it holds one reference of.
  RequestHost* host_ = new RequestHost(*this);
};

}  // namespace devmesh::detail
