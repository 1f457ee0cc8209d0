#include "mpi_features.hpp"

#if DEVMESH_HAVE_ULFM && defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace devmesh::detail::mpi {

#if DEVMESH_HAVE_ULFM

std::string ulfm_unavailable() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return "fault tolerance needs MPI_Init (MPI_COMM_WORLD tells whether it is on)";
#if defined(MPIX_FT)
  void* value = nullptr;
  int flag = 0;
  if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &value, &flag) != MPI_SUCCESS || !flag || !value ||
      !*static_cast<int*>(value))
    return "this MPI (" + version_text() +
           ") runs without its fault tolerance: start the job with "
           "`mpirun --with-ft ulfm` (Open MPI 5)";
#endif
  return {};
}

Status status_of_class(int cls) noexcept {
  if (cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_PROC_FAILED_PENDING) return Status::proc_failed;
  if (cls == MPIX_ERR_REVOKED) return Status::revoked;
  return Status::backend;
}

int comm_revoke(MPI_Comm comm) noexcept { return MPIX_Comm_revoke(comm); }
bool comm_is_revoked(MPI_Comm comm) noexcept {
  int flag = 0;
  return MPIX_Comm_is_revoked(comm, &flag) == MPI_SUCCESS && flag;
}
int comm_shrink(MPI_Comm comm, MPI_Comm* survivors) noexcept { return MPIX_Comm_shrink(comm, survivors); }
int comm_agree(MPI_Comm comm, int* flag) noexcept { return MPIX_Comm_agree(comm, flag); }
int comm_get_failed(MPI_Comm comm, MPI_Group* failed) noexcept { return MPIX_Comm_get_failed(comm, failed); }
int comm_ack_failed(MPI_Comm comm) noexcept {
  MPI_Group failed = MPI_GROUP_NULL;
  int rc = MPIX_Comm_get_failed(comm, &failed);
  int n = 0;
  if (rc == MPI_SUCCESS) rc = MPI_Group_size(failed, &n);
  if (failed != MPI_GROUP_NULL) MPI_Group_free(&failed);
  int acked = 0;
  return rc == MPI_SUCCESS ? MPIX_Comm_ack_failed(comm, n, &acked) : rc;
}

#else

std::string ulfm_unavailable() {
  return "this MPI (" + version_text() + ") has no ULFM fault tolerance (it lacks " DEVMESH_ULFM_MISSING ")";
}
Status status_of_class(int cls) noexcept {
#if defined(MPIX_ERR_PROC_FAILED) && defined(MPIX_ERR_PROC_FAILED_PENDING) && defined(MPIX_ERR_REVOKED)
  if (cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_PROC_FAILED_PENDING) return Status::proc_failed;
  if (cls == MPIX_ERR_REVOKED) return Status::revoked;
#endif
  (void)cls;
  return Status::backend;
}
int comm_revoke(MPI_Comm) noexcept { return MPI_ERR_OTHER; }
bool comm_is_revoked(MPI_Comm) noexcept { return false; }
int comm_shrink(MPI_Comm, MPI_Comm*) noexcept { return MPI_ERR_OTHER; }
int comm_agree(MPI_Comm, int*) noexcept { return MPI_ERR_OTHER; }
int comm_get_failed(MPI_Comm, MPI_Group*) noexcept { return MPI_ERR_OTHER; }
int comm_ack_failed(MPI_Comm) noexcept { return MPI_ERR_OTHER; }

#endif

bool free_comm(MPI_Comm& comm) noexcept {
  if (comm == MPI_COMM_NULL) return false;
  if (comm_is_revoked(comm)) {
    comm = MPI_COMM_NULL;
    return false;
  }
  MPI_Comm_free(&comm);
  return true;
}

std::string version_text() {
  int version = 0, subversion = 0;
  if (MPI_Get_version(&version, &subversion) != MPI_SUCCESS) return "unknown version";
  return std::to_string(version) + "." + std::to_string(subversion);
}

}  // namespace devmesh::detail::mpi
