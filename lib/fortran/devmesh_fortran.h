/* The MPI_Fint twins of the devmesh.h functions that take or return MPI
 * handles, for the Fortran module only (not installed): Fortran programs
 * hold MPI handles as MPI_Fint (mpi_f08's MPI_VAL, or `use mpi` integers),
 * and MPI_Comm differs between MPI implementations. Each converts with
 * MPI_Comm_f2c/MPI_Group_f2c/MPI_Info_f2c (MPI_Comm_c2f on the way back) and calls the
 * public function of the name without _f, so status codes, collectiveness
 * and "outputs untouched on failure" are that function's; a failure's
 * devmesh_last_error() names the public function.
 * gen_fortran_interface.py reads this header with devmesh.h. */
#ifndef DEVMESH_FORTRAN_H
#define DEVMESH_FORTRAN_H

#include "devmesh/devmesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/* devmesh_create with a Fortran handle for parent.
 * Collective over parent. */
DEVMESH_C_API int devmesh_create_f(MPI_Fint parent, int ndim, const int shape[], const char *const names[],
                                   devmesh_t *mesh);

/* devmesh_create_ex with a Fortran handle for parent.
 * Collective over parent. */
DEVMESH_C_API int devmesh_create_ex_f(MPI_Fint parent, int ndim, const int shape[], const char *const names[],
                                      const devmesh_config_t *config, devmesh_t *mesh);

/* devmesh_create_from_comms with Fortran handles (ndim of them in comms).
 * Collective over parent. */
DEVMESH_C_API int devmesh_create_from_comms_f(MPI_Fint parent, int ndim, const MPI_Fint comms[],
                                              const char *const names[], const devmesh_config_t *config,
                                              devmesh_t *mesh);

/* devmesh_create_from_group with a Fortran group handle.
 * Collective over the group's members. */
DEVMESH_C_API int devmesh_create_from_group_f(MPI_Fint group, const char *tag, int ndim, const int shape[],
                                              const char *const names[], const devmesh_config_t *config,
                                              devmesh_t *mesh);

/* devmesh_create_hosts with a Fortran handle for parent.
 * Collective over parent. */
DEVMESH_C_API int devmesh_create_hosts_f(MPI_Fint parent, const char *host_dim, const char *local_dim, devmesh_t *mesh);

/* devmesh_comm returning a Fortran handle.
 * Collective over the caller's group along dim the first time any view of
 * the root asks for this layout; not collective afterwards. */
DEVMESH_C_API int devmesh_comm_f(devmesh_t m, const char *dim, MPI_Fint *comm);

/* devmesh_cart_comm returning a Fortran handle.
 * Collective over the caller's group of the flattened view the first time;
 * not collective afterwards. */
DEVMESH_C_API int devmesh_cart_comm_f(devmesh_t m, MPI_Fint *comm);

/* devmesh_cart_comm_periodic returning a Fortran handle.
 * Collective over the caller's group of the flattened view the first time;
 * not collective afterwards. */
DEVMESH_C_API int devmesh_cart_comm_periodic_f(devmesh_t m, int ndims, const int periodic[], MPI_Fint *comm);

/* devmesh_all_groups_comm returning a Fortran handle.
 * Collective over the caller's group along dim the first time any view of
 * the root asks for this layout; not collective afterwards. */
DEVMESH_C_API int devmesh_all_groups_comm_f(devmesh_t m, const char *dim, int maxranks, int ranks[], int *own,
                                            MPI_Fint *comm);

/* devmesh_repair_ex with a Fortran handle for info.
 * Collective over the surviving members of m's root, its spares in standby
 * and the processes the repair spawns. */
DEVMESH_C_API int devmesh_repair_ex_f(devmesh_t m, const char *command, char *argv[], MPI_Fint info,
                                      devmesh_t *repaired);

/* devmesh_standby with a Fortran handle for parent.
 * Collective over the spares' pool (the surviving members of the mesh made
 * over parent and its other spares). */
DEVMESH_C_API int devmesh_standby_f(MPI_Fint parent, devmesh_t *mesh);

#ifdef __cplusplus
}
#endif

#endif /* DEVMESH_FORTRAN_H */
