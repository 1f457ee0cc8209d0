// A backend's table as the core calls it (devmesh/backend_plugin.h): the
// members of the current interface, whatever version the plugin was built
// for. Made once per backend, at loading or registration, by the version
// adapters (plugin_versions.cpp), the only code that knows the versions.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "devmesh/backend_plugin.h"
#include "devmesh/status.hpp"

namespace devmesh::detail {

struct PluginTable {
  const devmesh_backend_v1_t* source = nullptr;  // the table as exported or registered
  const char* name = nullptr;
  const char* const* per_rank_keys = nullptr;
  const char* mpi_family = nullptr;  // null: the plugin states none
  // DEVMESH_BACKEND_CAP_* bits: the plugin's own, or what its version
  // implies (a table that states none reads the host-local rank).
  unsigned long long capabilities = 0;
  // comm_prepare is the plugin's own local step, whose outcome the core
  // cross-checks before comm_connect; false where it only keeps its arguments
  // for comm_connect, which then makes the whole communicator.
  bool prepares_locally = false;
  // open() without options always succeeds and makes nothing, so that a
  // creation need not open it to check it (the built-in backend).
  bool opens_without_check = false;
  // The plugin's name for the collective step, in messages.
  const char* connect_name = "comm_connect";
  // The interface version, for the log line of a loaded plugin.
  unsigned abi_version = 0;

  int (*init)(void) = nullptr;  // at most one of init and init_host is set
  int (*init_host)(const devmesh_backend_host_t* host) = nullptr;
  const char* (*last_error)(void) = nullptr;
  int (*last_mpi_error)(void) = nullptr;
  int (*open)(int n, const char* const keys[], const char* const values[], void** instance) = nullptr;
  void (*close)(void* instance) = nullptr;
  int (*reduce_supported)(void* instance, int datatype, int op) = nullptr;
  // Creation, in two steps (backend_plugin.h, version 3); `t` is this table.
  int (*comm_prepare)(const PluginTable& t, void* instance, const devmesh_backend_group_t* group,
                      void** prepared) = nullptr;
  int (*comm_connect)(const PluginTable& t, void* prepared, void** comm) = nullptr;
  void (*comm_abandon)(const PluginTable& t, void* prepared) = nullptr;
  void (*comm_destroy)(void* comm) = nullptr;
  int (*comm_native)(void* comm, void** handle) = nullptr;
  int (*revoke)(void* comm, int status) = nullptr;

  int (*allreduce)(void* comm, const void* send, void* recv, size_t count, int datatype, int op,
                   void* stream) = nullptr;
  int (*allgather)(void* comm, const void* send, void* recv, size_t count, int datatype, void* stream) = nullptr;
  int (*reduce_scatter)(void* comm, const void* send, void* recv, size_t count, int datatype, int op,
                        void* stream) = nullptr;
  int (*broadcast)(void* comm, void* buffer, size_t count, int datatype, int root, void* stream) = nullptr;
  int (*alltoall)(void* comm, const void* send, void* recv, size_t count, int datatype, void* stream) = nullptr;
  int (*barrier)(void* comm, void* stream) = nullptr;
  int (*send)(void* comm, const void* buffer, size_t count, int datatype, int peer, void* stream) = nullptr;
  int (*recv)(void* comm, void* buffer, size_t count, int datatype, int peer, void* stream) = nullptr;
  int (*isend)(void* comm, const void* buffer, size_t count, int datatype, int peer, void* stream,
               void** request) = nullptr;
  int (*irecv)(void* comm, void* buffer, size_t count, int datatype, int peer, void* stream, void** request) = nullptr;
  int (*test)(void* request, int* done) = nullptr;
  int (*wait)(void* request) = nullptr;
  int (*sendrecv)(void* comm, const void* sendbuf, size_t sendcount, int sendtype, int dest, void* recvbuf,
                  size_t recvcount, int recvtype, int source, void* stream) = nullptr;

  // Version 4: each ends with `void** request` (nullptr: blocking).
  decltype(devmesh_backend_v4_t::alltoallv) alltoallv = nullptr;
  decltype(devmesh_backend_v4_t::allgatherv) allgatherv = nullptr;
  decltype(devmesh_backend_v4_t::reduce_scatterv) reduce_scatterv = nullptr;
  decltype(devmesh_backend_v4_t::gather) gather = nullptr;
  decltype(devmesh_backend_v4_t::gatherv) gatherv = nullptr;
  decltype(devmesh_backend_v4_t::scatter) scatter = nullptr;
  decltype(devmesh_backend_v4_t::scatterv) scatterv = nullptr;
  decltype(devmesh_backend_v4_t::reduce) reduce = nullptr;
  decltype(devmesh_backend_v4_t::iallreduce) iallreduce = nullptr;
  decltype(devmesh_backend_v4_t::iallgather) iallgather = nullptr;
  decltype(devmesh_backend_v4_t::ireduce_scatter) ireduce_scatter = nullptr;
  decltype(devmesh_backend_v4_t::ibroadcast) ibroadcast = nullptr;
  decltype(devmesh_backend_v4_t::ialltoall) ialltoall = nullptr;
  decltype(devmesh_backend_v4_t::ibarrier) ibarrier = nullptr;
  decltype(devmesh_backend_v4_t::batch) batch = nullptr;
  // Not an operation: the levels around the process's device (no request).
  decltype(devmesh_backend_v4_t::topology) topology = nullptr;
};

// --- the version adapters (plugin_versions.cpp) ----------------------------

// Why a table cannot be used, or "" when it can. `versions` are the ABI
// versions accepted where it was found (its symbol's, or any this core
// knows for a registered table).
std::string table_problem(const devmesh_backend_v1_t& t, std::initializer_list<unsigned> versions);

// The table of a plugin, in the current shape (t passed table_problem).
PluginTable normalise(const devmesh_backend_v1_t& t);

// Error(unsupported) for an operation the table has no function for,
// naming the backend and, where the plugin's version has no such member,
// that version.
[[noreturn]] void lacks(const PluginTable& t, std::string_view what);

// --- statuses and messages from a plugin (plugin_errors.cpp) ----------------

// The plugin's last_error(), cut at 4 KiB, without a leading "backend
// '<name>'" (the core puts that in front, once).
std::string plugin_message(const PluginTable& t);

// A plugin's status as an Error: the plugin's message, the MPI error behind
// it when MPI knows the code, a status outside the enum as BACKEND.
Error plugin_error(const PluginTable& t, int rc, std::string_view what);

inline void check(const PluginTable& t, int rc, std::string_view what) {
  if (rc != DEVMESH_SUCCESS) throw plugin_error(t, rc, what);
}

}  // namespace devmesh::detail
