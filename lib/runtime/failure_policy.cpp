// The plain policy: nothing to revoke, and calls run as they are.
#include "failure_policy.hpp"

namespace devmesh::detail {
namespace {

class PlainPolicy final : public FailurePolicy {
 public:
  Fault* fault() noexcept override { return nullptr; }
  bool revoked() noexcept override { return false; }
  void check(std::string_view) override {}
  void run(CallRef call) override { call(); }
  bool dims_over_root() const noexcept override { return false; }
  bool returns_errors() const noexcept override { return false; }
  void made(MPI_Comm, bool) override {}
  void clear() noexcept override {}
};

}  // namespace

std::unique_ptr<FailurePolicy> plain_policy() { return std::make_unique<PlainPolicy>(); }

}  // namespace devmesh::detail
