/* Stops a compile against another MPI than the one devmesh was built with.
 *
 * A program compiled with one MPI's mpi.h and linked to a devmesh built
 * with another links both MPI libraries and crashes in its first MPI call
 * (MPI_Comm is an int in MPICH, a pointer in Open MPI): with MPICH and
 * Open MPI installed side by side, the unsuffixed mpicc may well be the
 * other one. devmesh/mpi_family.h, generated when devmesh is configured,
 * records the family of the MPI it was built with; this header compares it
 * with the mpi.h the program included (MPICH and its derivatives define
 * MPICH_VERSION, Open MPI OMPI_MAJOR_VERSION, an mpi.h for the MPI 5
 * standard ABI MPI_ABI_VERSION) and stops the compile with one #error
 * naming both. A devmesh built for the standard ABI (family "abi") accepts
 * any mpi.h for the standard ABI, whichever MPI ships it.
 *
 * The same comparison is made again at link time, where the #error cannot
 * see: every translation unit that includes this header refers to a
 * symbol named after the family of its mpi.h (DEVMESH_MPI_LINK_SYMBOL
 * below), and libdevmesh defines only the one of the mpi.h it was compiled
 * with. A program compiled for Open MPI and linked to a libdevmesh built
 * for MPICH (headers of one install, library of another; an object built
 * before devmesh was rebuilt for another MPI) stops at link time with
 * "undefined reference to `devmesh_built_for_Open_MPI__...'", or, with an
 * executable already linked, at start with "undefined symbol".
 *
 * Compile with the MPI's wrapper that devmesh names:
 *   $(pkg-config --variable=mpicc devmesh), --variable=mpicxx (C++).
 * devmesh.pc carries no MPI include directory (the wrapper's mpi.h must be
 * the one the program sees: a wrapper puts its own -I after the program's).
 *
 * devmesh.h, mesh.hpp and hosts.hpp include this header after <mpi.h>.
 * Without devmesh/mpi_family.h (devmesh's sources compiled outside its
 * build, as bench/traffic/build-with does against other MPIs) nothing is
 * checked. */
#ifndef DEVMESH_MPI_CHECK_H
#define DEVMESH_MPI_CHECK_H

#include <mpi.h>

#if defined(__has_include)
#if __has_include("devmesh/mpi_family.h")
#include "devmesh/mpi_family.h"
#endif
#endif

/* The family of the mpi.h included, by name: the standard ABI first
 * (MPICH's mpi.h under -DMPI_ABI is the ABI's). Backend plugins state it
 * (devmesh_backend_v3_t.mpi_family = DEVMESH_BACKEND_MPI, which is this),
 * and the core refuses a plugin compiled against another family than its
 * own at load. */
#if defined(MPI_ABI_VERSION)
#define DEVMESH_MPI_INCLUDED_NAME "MPI ABI"
#elif defined(OMPI_MAJOR_VERSION)
#define DEVMESH_MPI_INCLUDED_NAME "Open MPI"
#elif defined(MPICH_VERSION)
#define DEVMESH_MPI_INCLUDED_NAME "MPICH"
#else
#define DEVMESH_MPI_INCLUDED_NAME "unknown MPI"
#endif

/* The link-time check's symbol for the family of the mpi.h included: a
 * const char that libdevmesh defines for the mpi.h it was compiled with
 * (lib/capi/built_for.cpp) and no other. Undefined, the linker's message
 * is the name, so the name says what is missing and what to do. */
#if defined(MPI_ABI_VERSION)
#define DEVMESH_MPI_LINK_SYMBOL \
  devmesh_built_for_the_MPI_standard_ABI__needed_by_this_program_compiled_for_it__build_it_with_pkg_config_variable_mpicc_of_devmesh
#elif defined(OMPI_MAJOR_VERSION)
#define DEVMESH_MPI_LINK_SYMBOL \
  devmesh_built_for_Open_MPI__needed_by_this_program_compiled_with_Open_MPI_mpi_h__build_it_with_pkg_config_variable_mpicc_of_devmesh
#elif defined(MPICH_VERSION)
#define DEVMESH_MPI_LINK_SYMBOL \
  devmesh_built_for_MPICH__needed_by_this_program_compiled_with_MPICH_mpi_h__build_it_with_pkg_config_variable_mpicc_of_devmesh
#else
#define DEVMESH_MPI_LINK_SYMBOL \
  devmesh_built_for_an_MPI_neither_MPICH_nor_Open_MPI__needed_by_this_program__build_it_with_pkg_config_variable_mpicc_of_devmesh
#endif

/* DEVMESH_ALLOW_OTHER_MPI, defined before including devmesh's headers,
 * turns both checks off (the #error below and the link-time reference at
 * the end): for a test that must build such a program, or an MPI whose
 * mpi.h is none of these but whose ABI is devmesh's.
 * DEVMESH_MPI_CHECK_NO_LINK_REFERENCE turns the reference off alone:
 * devmesh/backend_plugin.h defines it, since a plugin does not link
 * libdevmesh and is checked at load instead. */
#if defined(DEVMESH_MPI_FAMILY) && !defined(DEVMESH_ALLOW_OTHER_MPI)

/* The family of the mpi.h included, as a number of mpi_family.h. 0:
 * neither MPICH nor Open MPI. */
#if defined(MPI_ABI_VERSION)
#define DEVMESH_MPI_INCLUDED DEVMESH_MPI_FAMILY_ABI
#elif defined(OMPI_MAJOR_VERSION)
#define DEVMESH_MPI_INCLUDED DEVMESH_MPI_FAMILY_OPENMPI
#elif defined(MPICH_VERSION)
#define DEVMESH_MPI_INCLUDED DEVMESH_MPI_FAMILY_MPICH
#else
#define DEVMESH_MPI_INCLUDED 0
#endif

/* One #error per pair (#error cannot expand a macro into its message). */
#if DEVMESH_MPI_INCLUDED == DEVMESH_MPI_FAMILY
/* the MPI devmesh was built with */
#elif DEVMESH_MPI_FAMILY == DEVMESH_MPI_FAMILY_MPICH && DEVMESH_MPI_INCLUDED == DEVMESH_MPI_FAMILY_OPENMPI
#error \
    "devmesh was built with MPICH, but this program includes Open MPI's mpi.h: compile it with $(pkg-config --variable=mpicc devmesh) (C) or --variable=mpicxx (C++), the MPI devmesh was built with"
#elif DEVMESH_MPI_FAMILY == DEVMESH_MPI_FAMILY_MPICH && DEVMESH_MPI_INCLUDED == DEVMESH_MPI_FAMILY_ABI
#error \
    "devmesh was built with MPICH, but this program includes an mpi.h for the MPI standard ABI (MPI_ABI_VERSION): compile it with $(pkg-config --variable=mpicc devmesh) (C) or --variable=mpicxx (C++), the MPI devmesh was built with"
#elif DEVMESH_MPI_FAMILY == DEVMESH_MPI_FAMILY_MPICH
#error \
    "devmesh was built with MPICH, but this program includes the mpi.h of another MPI (neither MPICH nor Open MPI): compile it with $(pkg-config --variable=mpicc devmesh) (C) or --variable=mpicxx (C++), the MPI devmesh was built with"
#elif DEVMESH_MPI_FAMILY == DEVMESH_MPI_FAMILY_OPENMPI && DEVMESH_MPI_INCLUDED == DEVMESH_MPI_FAMILY_MPICH
#error \
    "devmesh was built with Open MPI, but this program includes MPICH's mpi.h: compile it with $(pkg-config --variable=mpicc devmesh) (C) or --variable=mpicxx (C++), the MPI devmesh was built with"
#elif DEVMESH_MPI_FAMILY == DEVMESH_MPI_FAMILY_OPENMPI && DEVMESH_MPI_INCLUDED == DEVMESH_MPI_FAMILY_ABI
#error \
    "devmesh was built with Open MPI, but this program includes an mpi.h for the MPI standard ABI (MPI_ABI_VERSION): compile it with $(pkg-config --variable=mpicc devmesh) (C) or --variable=mpicxx (C++), the MPI devmesh was built with"
#elif DEVMESH_MPI_FAMILY == DEVMESH_MPI_FAMILY_OPENMPI
#error \
    "devmesh was built with Open MPI, but this program includes the mpi.h of another MPI (neither MPICH nor Open MPI): compile it with $(pkg-config --variable=mpicc devmesh) (C) or --variable=mpicxx (C++), the MPI devmesh was built with"
#elif DEVMESH_MPI_FAMILY == DEVMESH_MPI_FAMILY_ABI && DEVMESH_MPI_INCLUDED == DEVMESH_MPI_FAMILY_MPICH
#error \
    "devmesh was built for the MPI standard ABI, but this program includes MPICH's own mpi.h: compile it for the standard ABI ($(pkg-config --variable=mpicc devmesh), e.g. mpicc_abi)"
#elif DEVMESH_MPI_FAMILY == DEVMESH_MPI_FAMILY_ABI && DEVMESH_MPI_INCLUDED == DEVMESH_MPI_FAMILY_OPENMPI
#error \
    "devmesh was built for the MPI standard ABI, but this program includes Open MPI's own mpi.h: compile it for the standard ABI ($(pkg-config --variable=mpicc devmesh), e.g. mpicc_abi)"
#else
#error \
    "devmesh was built for the MPI standard ABI, but this program includes an mpi.h that is not for the standard ABI: compile it for the standard ABI ($(pkg-config --variable=mpicc devmesh), e.g. mpicc_abi)"
#endif

#endif /* DEVMESH_MPI_FAMILY && !DEVMESH_ALLOW_OTHER_MPI */

/* The link-time reference: one pointer per translation unit, kept by the
 * compiler (used) though nothing reads it, to the family's symbol, and
 * kept by the linker under --gc-sections where the compiler knows retain.
 * GCC and Clang only (the attributes). libdevmesh's own sources refer to
 * it like any program, and lib/capi/built_for.cpp defines it. */
#if !defined(DEVMESH_ALLOW_OTHER_MPI) && !defined(DEVMESH_MPI_CHECK_NO_LINK_REFERENCE) && \
    (defined(__GNUC__) || defined(__clang__))
#if defined(__has_attribute)
#if __has_attribute(retain)
#define DEVMESH_MPI_LINK_RETAIN __attribute__((retain))
#endif
#endif
#ifndef DEVMESH_MPI_LINK_RETAIN
#define DEVMESH_MPI_LINK_RETAIN
#endif
#ifdef __cplusplus
extern "C" {
#endif
extern __attribute__((visibility("default"))) const char DEVMESH_MPI_LINK_SYMBOL;
#ifdef __cplusplus
}
#endif
static const char *const devmesh_mpi_link_check __attribute__((used, unused)) DEVMESH_MPI_LINK_RETAIN =
    &DEVMESH_MPI_LINK_SYMBOL;
#endif

#endif /* DEVMESH_MPI_CHECK_H */
