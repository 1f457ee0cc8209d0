// The MPI backend's communicator: its interruptible wait, the duplicate its
// collectives run on, and how a version 4 member starts its operation.
#include "mpi_comm.hpp"

#include <string>

namespace devmesh::backends::mpi_backend {

Comm::Comm(MPI_Comm c, bool i) : comm(c), interruptible(i) {
  DEVMESH_PLUGIN_MPI(MPI_Comm_rank(comm, &rank));
  DEVMESH_PLUGIN_MPI(MPI_Comm_size(comm, &size));
}

Comm::~Comm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (own != MPI_COMM_NULL && !finalized && !abandoned) MPI_Comm_free(&own);
}

void refuse_count(std::size_t v, int digits, const char* array, std::size_t index) {
  std::string what = "takes at most 2^" + std::to_string(digits) + "-1 elements per call, got " + std::to_string(v);
  if (array) what += " (" + std::string(array) + "[" + std::to_string(index) + "])";
  throw Error(Status::unsupported, what);
}

namespace {

// Requests on `on` will never complete: own is never freed, and the mesh's
// communicator is left to the host (leave_unfreed), which then releases it
// without MPI_Comm_free.
void abandon(Comm& comm, MPI_Comm on) {
  if (on != MPI_COMM_NULL && on == comm.comm)
    plugin::host()->leave_unfreed(comm.comm);
  else
    comm.abandoned = true;
}

}  // namespace

bool poll_interruptible(Comm& comm, MPI_Request* r, int n, const char* name, MPI_Comm on) {
  bool all = true;
  for (int i = 0; i < n; ++i) {
    if (r[i] == MPI_REQUEST_NULL) continue;
    int done = 0;
    const int rc = MPI_Test(&r[i], &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) abandon(comm, on);  // the others may be pending
    plugin::check_mpi(rc, name);
    all = all && done;
  }
  if (all) return true;
  if (plugin::host()->comm_revoked(comm.comm)) {
    abandon(comm, on);
    throw Error(Status::revoked, std::string(name) + ": the communicator was revoked while this rank waited");
  }
  return false;
}

void wait_interruptible(Comm& comm, MPI_Request* r, int n, const char* name, MPI_Comm on) {
  while (!poll_interruptible(comm, r, n, name, on)) {
  }
}

// A revoke during the MPI_Comm_idup abandons it on comm, the mesh's
// communicator, which the mesh then leaves unfreed (the host's
// leave_unfreed).
MPI_Comm collective_comm(void* c) {
  Comm& comm = *static_cast<Comm*>(c);
  if (!comm.interruptible) return comm.comm;
  if (comm.own == MPI_COMM_NULL) {
    MPI_Comm own = MPI_COMM_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    plugin::check_mpi(MPI_Comm_idup(comm.comm, &own, &r), "MPI_Comm_idup");
    wait_interruptible(comm, &r, 1, "MPI_Comm_idup", comm.comm);
    comm.own = own;
  }
  return comm.own;
}

void Operation::start(void* c) { started_ = std::make_unique<Request>(comm_, collective_comm(c), name_); }

}  // namespace devmesh::backends::mpi_backend
