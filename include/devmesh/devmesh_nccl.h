/* devmesh C API: NCCL communicators of mesh dims (needs nccl.h). */
#ifndef DEVMESH_DEVMESH_NCCL_H
#define DEVMESH_DEVMESH_NCCL_H

#include <nccl.h>

#include "devmesh/devmesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The caller's NCCL communicator along dim (NULL: the only dim of a 1-D
 * view), owned by the library, for meshes or dims configured with backend
 * "nccl" (devmesh_config_t.backend or .dim_backends). Created on first use
 * from the dim's MPI group, then reused by every view with that layout.
 * Collective over the caller's group along dim the first time, as
 * devmesh_comm; not collective afterwards.
 * Errors: the dim runs on another backend -> INVALID_ARGUMENT; no usable
 * CUDA device or a build without NCCL -> UNSUPPORTED; NCCL failure or an
 * NCCL creation past the config's init_timeout_seconds (aborted) ->
 * BACKEND. The deadline covers the NCCL part only: the dim's MPI
 * communicator, made first if devmesh_comm has not made it, waits as long
 * as MPI does (docs/ERRORS.md, "Waits: which are bounded"). */
DEVMESH_C_API int devmesh_nccl_comm(devmesh_t m, const char *dim, ncclComm_t *comm);

#ifdef __cplusplus
}
#endif

#endif /* DEVMESH_DEVMESH_NCCL_H */
