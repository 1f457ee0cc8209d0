/* What the C test programs share: a count of failed checks, the caller's
 * rank, and CHECK(cond, format, ...), which counts a false condition and
 * prints it with the rank, the line and devmesh_last_error(). Each program
 * sets `me` after MPI_Init and ends by reducing `failures`. */
#ifndef DEVMESH_TEST_C_CHECK_H
#define DEVMESH_TEST_C_CHECK_H

#include <stdio.h>

#include "devmesh/devmesh.h"

static int failures = 0;
static int me = 0;

#define CHECK(cond, ...)                                       \
  do {                                                         \
    if (!(cond)) {                                             \
      ++failures;                                              \
      fprintf(stderr, "FAIL rank %d line %d: ", me, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                            \
      fprintf(stderr, " [%s]\n", devmesh_last_error());        \
    }                                                          \
  } while (0)

#endif /* DEVMESH_TEST_C_CHECK_H */
