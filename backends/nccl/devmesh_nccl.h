/* devmesh C API: NCCL communicators of mesh dims (needs nccl.h; installed
 * with the NCCL backend plugin). */
#ifndef DEVMESH_DEVMESH_NCCL_H
#define DEVMESH_DEVMESH_NCCL_H

#include <nccl.h>

#include "devmesh/devmesh.h"

/* The caller's NCCL communicator along dim (NULL: the only dim of a 1-D
 * view), owned by the library, for dims whose backend is "nccl"
 * (devmesh_config_t.backend or .dim_backends). Created on first use from
 * the dim's MPI group, then reused by every view with that layout.
 * Collective over the caller's group along dim the first time, as
 * devmesh_comm; not collective afterwards.
 * Errors: as devmesh_backend_comm (the dim on another backend ->
 * INVALID_ARGUMENT). */
static inline int devmesh_nccl_comm(devmesh_t m, const char *dim, ncclComm_t *comm) {
  void *handle = NULL;
  int rc;
  if (!comm) return devmesh_backend_comm(m, dim, "nccl", NULL);
  rc = devmesh_backend_comm(m, dim, "nccl", &handle);
  if (rc == DEVMESH_SUCCESS) *comm = *(ncclComm_t *)handle;
  return rc;
}

#endif /* DEVMESH_DEVMESH_NCCL_H */
