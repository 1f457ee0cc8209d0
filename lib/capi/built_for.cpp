// The link-time half of devmesh/mpi_check.h: the one symbol of
// DEVMESH_MPI_LINK_SYMBOL's family that the mpi.h libdevmesh is compiled
// with names (devmesh_built_for_MPICH__..., devmesh_built_for_Open_MPI__...,
// devmesh_built_for_the_MPI_standard_ABI__...). A program whose mpi.h is of
// another family refers to another name, which no symbol here satisfies:
// its link stops with that name as the message. Not collective; nothing
// reads the value.
#include "devmesh/devmesh.h"

extern "C" DEVMESH_C_API const char DEVMESH_MPI_LINK_SYMBOL = 1;
