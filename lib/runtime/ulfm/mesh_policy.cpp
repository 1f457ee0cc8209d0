// The ULFM policy of a mesh's state (fault_tolerance, see mesh.hpp): every
// communicator made for the mesh is registered with its fault state, so
// that a failure any call sees revokes them all.
#include "../failure_policy.hpp"

namespace devmesh::detail {
namespace {

class UlfmPolicy final : public FailurePolicy {
 public:
  explicit UlfmPolicy(double deadline) : fault_(deadline) {}
  Fault* fault() noexcept override { return &fault_; }
  bool revoked() noexcept override { return fault_.revoked(); }
  void check(std::string_view what) override {
    if (fault_.revoked()) [[unlikely]]
      fault_.fail(what);
  }
  void run(CallRef call) override {
    try {
      Fault::Wait wait(&fault_, "making a communicator");
      call();
    } catch (const Error& e) {
      fault_.saw(e);
      throw fault_.local(e);
    }
  }
  bool dims_over_root() const noexcept override { return true; }
  bool returns_errors() const noexcept override { return true; }
  void made(MPI_Comm comm, bool root) override {
    if (root)
      fault_.set_root(comm);
    else
      fault_.add(comm);
  }
  void clear() noexcept override { fault_.clear(); }

 private:
  Fault fault_;
};

}  // namespace

std::unique_ptr<FailurePolicy> ulfm_policy(double deadline) { return std::make_unique<UlfmPolicy>(deadline); }

}  // namespace devmesh::detail
