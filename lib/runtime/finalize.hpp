// Meshes alive when MPI_Finalize runs: their communicators are released
// then (their handles stay valid but hold no communicators afterwards).
#pragma once

namespace devmesh::detail {

class MeshState;

// Enters a state into, and takes it out of, the set released at
// MPI_Finalize. Not collective; thread-safe.
void register_live(MeshState* state);
void unregister_live(MeshState* state) noexcept;

// Installs the MPI_Finalize hook (a delete callback of an attribute on
// MPI_COMM_SELF, which MPI runs first thing in MPI_Finalize) once MPI_Init
// has run. Under the Sessions model alone (no MPI_Init) MPI_COMM_SELF may
// not be used and MPI_Finalize never runs: the hook is left out, and the
// program destroys its meshes before MPI_Session_finalize.
void install_finalize_hook();

// Whether MPI calls may still be made (MPI_Finalize has not run).
bool mpi_alive() noexcept;

}  // namespace devmesh::detail
