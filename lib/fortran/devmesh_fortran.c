/* The MPI_Fint twins of devmesh_fortran.h: convert the handles and call the
 * public C API, which checks the arguments, cross-checks failures across the
 * ranks of a collective call and writes outputs only on success. */
#include "devmesh_fortran.h"

#include <stdlib.h>

int devmesh_create_f(MPI_Fint parent, int ndim, const int shape[], const char *const names[], devmesh_t *mesh) {
  return devmesh_create(MPI_Comm_f2c(parent), ndim, shape, names, mesh);
}

int devmesh_create_ex_f(MPI_Fint parent, int ndim, const int shape[], const char *const names[],
                        const devmesh_config_t *config, devmesh_t *mesh) {
  return devmesh_create_ex(MPI_Comm_f2c(parent), ndim, shape, names, config, mesh);
}

int devmesh_create_from_comms_f(MPI_Fint parent, int ndim, const MPI_Fint comms[], const char *const names[],
                                const devmesh_config_t *config, devmesh_t *mesh) {
  /* NULL comms or ndim < 1 go through as they are, for devmesh_create_from_comms
   * to refuse on every rank. Out of memory here is this rank's alone, and
   * must not keep it from the collective: it passes NULL comms too, which
   * fails the call everywhere. */
  MPI_Comm *c = NULL;
  if (comms && ndim > 0) {
    c = malloc((size_t)ndim * sizeof *c);
    if (c)
      for (int i = 0; i < ndim; ++i) c[i] = MPI_Comm_f2c(comms[i]);
  }
  const int status = devmesh_create_from_comms(MPI_Comm_f2c(parent), ndim, c, names, config, mesh);
  free(c);
  return status;
}

int devmesh_create_from_group_f(MPI_Fint group, const char *tag, int ndim, const int shape[], const char *const names[],
                                const devmesh_config_t *config, devmesh_t *mesh) {
  return devmesh_create_from_group(MPI_Group_f2c(group), tag, ndim, shape, names, config, mesh);
}

int devmesh_create_hosts_f(MPI_Fint parent, const char *host_dim, const char *local_dim, devmesh_t *mesh) {
  return devmesh_create_hosts(MPI_Comm_f2c(parent), host_dim, local_dim, mesh);
}

/* The handle getters: a NULL output pointer goes through as NULL, so that
 * the public function reports it ("comm is NULL"). */

int devmesh_comm_f(devmesh_t m, const char *dim, MPI_Fint *comm) {
  MPI_Comm c = MPI_COMM_NULL;
  const int status = devmesh_comm(m, dim, comm ? &c : NULL);
  if (status == DEVMESH_SUCCESS) *comm = MPI_Comm_c2f(c);
  return status;
}

int devmesh_cart_comm_f(devmesh_t m, MPI_Fint *comm) {
  MPI_Comm c = MPI_COMM_NULL;
  const int status = devmesh_cart_comm(m, comm ? &c : NULL);
  if (status == DEVMESH_SUCCESS) *comm = MPI_Comm_c2f(c);
  return status;
}

int devmesh_cart_comm_periodic_f(devmesh_t m, int ndims, const int periodic[], MPI_Fint *comm) {
  MPI_Comm c = MPI_COMM_NULL;
  const int status = devmesh_cart_comm_periodic(m, ndims, periodic, comm ? &c : NULL);
  if (status == DEVMESH_SUCCESS) *comm = MPI_Comm_c2f(c);
  return status;
}

int devmesh_all_groups_comm_f(devmesh_t m, const char *dim, int maxranks, int ranks[], int *own, MPI_Fint *comm) {
  MPI_Comm c = MPI_COMM_NULL;
  const int status = devmesh_all_groups_comm(m, dim, maxranks, ranks, own, comm ? &c : NULL);
  if (status == DEVMESH_SUCCESS) *comm = MPI_Comm_c2f(c);
  return status;
}

int devmesh_repair_ex_f(devmesh_t m, const char *command, char *argv[], MPI_Fint info, devmesh_t *repaired) {
  return devmesh_repair_ex(m, command, argv, MPI_Info_f2c(info), repaired);
}

int devmesh_standby_f(MPI_Fint parent, devmesh_t *mesh) { return devmesh_standby(MPI_Comm_f2c(parent), mesh); }
