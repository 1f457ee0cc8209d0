/* devmesh.h is plain C99 and C11: this file is compiled with -std=c99 and
 * with -std=c11, -Wpedantic
 * -Werror (a compile-only check; the behaviour is tested in test_capi.cpp). */
#include "devmesh/devmesh.h"

#include <stddef.h>

int devmesh_header_check(void);

int devmesh_header_check(void) {
  devmesh_t mesh = NULL;
  enum devmesh_status status = DEVMESH_SUCCESS;
  enum devmesh_comm_path path = DEVMESH_COMM_PATH_AUTOMATIC;
  int (*create)(MPI_Comm, int, const int[], const char *const[], devmesh_t *) = devmesh_create;
  int (*comm)(devmesh_t, const char *, MPI_Comm *) = devmesh_comm;
  const char *(*last)(void) = devmesh_last_error;
  (void)create;
  (void)comm;
  (void)last;
  return (int)status + (int)path + (mesh == NULL) + DEVMESH_VERSION_MAJOR;
}
