// How a mesh's state treats failure: plainly (a failure is an error like
// any other), or under ULFM (fault_tolerance: a failure revokes the whole
// mesh, ulfm/mesh_policy.cpp). The state asks its policy and never tests
// the option itself.
#pragma once

#include <mpi.h>

#include <memory>
#include <string_view>

#include "fault.hpp"

namespace devmesh::detail {

// A call to run, by reference (no allocation).
class CallRef {
 public:
  template <class F>
  CallRef(F& f) noexcept : f_(&f), call_([](void* p) { (*static_cast<F*>(p))(); }) {}
  void operator()() const { call_(f_); }

 private:
  void* f_;
  void (*call_)(void*);
};

class FailurePolicy {
 public:
  virtual ~FailurePolicy() = default;
  // The fault state backend communicators report to, or null.
  virtual Fault* fault() noexcept = 0;
  // Whether the mesh is revoked (lock free).
  virtual bool revoked() noexcept = 0;
  // Throws the error an operation `what` of a revoked mesh fails with.
  virtual void check(std::string_view what) = 0;
  // Runs a call of the state that may make communicators: a failure it
  // sees revokes the mesh before it reaches the caller.
  virtual void run(CallRef call) = 0;
  // Whether dims' communicators are made over the root communicator (a
  // creation over all root members, which a revoke or a death interrupts).
  virtual bool dims_over_root() const noexcept = 0;
  // Whether handed-out communicators return errors whatever comm_errors says.
  virtual bool returns_errors() const noexcept = 0;
  // A communicator made for the mesh (root: the root communicator), which a
  // revoke must reach.
  virtual void made(MPI_Comm comm, bool root) = 0;
  // Forgets every communicator (the state frees them).
  virtual void clear() noexcept = 0;
};

std::unique_ptr<FailurePolicy> plain_policy();
// deadline: MeshOptions::deadline.
std::unique_ptr<FailurePolicy> ulfm_policy(double deadline);

}  // namespace devmesh::detail
