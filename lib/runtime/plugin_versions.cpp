// The version adapters: every ABI version of the plugin interface
// (devmesh/backend_plugin.h) turned into the one table the core calls
// (PluginTable), at loading or registration. No other code knows the
// versions.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <new>
#include <tuple>

#include "plugin_table.hpp"
#include "plugins.hpp"

namespace devmesh::detail {
namespace {

// The version 2 (3) table t is the first member of, or nullptr for an older
// table (its version checked at loading or registration).
const devmesh_backend_v2_t* v2_of(const devmesh_backend_v1_t& t) {
  return t.abi_version >= DEVMESH_BACKEND_ABI_VERSION_2 ? reinterpret_cast<const devmesh_backend_v2_t*>(&t) : nullptr;
}
const devmesh_backend_v3_t* v3_of(const devmesh_backend_v1_t& t) {
  return t.abi_version >= DEVMESH_BACKEND_ABI_VERSION_3 ? reinterpret_cast<const devmesh_backend_v3_t*>(&t) : nullptr;
}
const devmesh_backend_v4_t* v4_of(const devmesh_backend_v1_t& t) {
  return t.abi_version >= DEVMESH_BACKEND_ABI_VERSION_4 ? reinterpret_cast<const devmesh_backend_v4_t*>(&t) : nullptr;
}

// Version 4's members: where each sits in the table, its name, and the
// capability bit that states it (one row each, so that the checks, the
// copy and the names of UNSUPPORTED cannot disagree).
template <class Fn>
struct V4Row {
  const char* name;
  unsigned long long cap;
  Fn devmesh_backend_v4_t::*from;
  Fn PluginTable::*to;
};
constexpr auto v4_rows() {
  return std::make_tuple(
      V4Row<decltype(devmesh_backend_v4_t::alltoallv)>{"alltoallv", DEVMESH_BACKEND_CAP_ALLTOALLV,
                                                       &devmesh_backend_v4_t::alltoallv, &PluginTable::alltoallv},
      V4Row<decltype(devmesh_backend_v4_t::allgatherv)>{"allgatherv", DEVMESH_BACKEND_CAP_ALLGATHERV,
                                                        &devmesh_backend_v4_t::allgatherv, &PluginTable::allgatherv},
      V4Row<decltype(devmesh_backend_v4_t::reduce_scatterv)>{"reduce_scatterv", DEVMESH_BACKEND_CAP_REDUCE_SCATTERV,
                                                             &devmesh_backend_v4_t::reduce_scatterv,
                                                             &PluginTable::reduce_scatterv},
      V4Row<decltype(devmesh_backend_v4_t::gather)>{"gather", DEVMESH_BACKEND_CAP_GATHER, &devmesh_backend_v4_t::gather,
                                                    &PluginTable::gather},
      V4Row<decltype(devmesh_backend_v4_t::gatherv)>{"gatherv", DEVMESH_BACKEND_CAP_GATHERV,
                                                     &devmesh_backend_v4_t::gatherv, &PluginTable::gatherv},
      V4Row<decltype(devmesh_backend_v4_t::scatter)>{"scatter", DEVMESH_BACKEND_CAP_SCATTER,
                                                     &devmesh_backend_v4_t::scatter, &PluginTable::scatter},
      V4Row<decltype(devmesh_backend_v4_t::scatterv)>{"scatterv", DEVMESH_BACKEND_CAP_SCATTERV,
                                                      &devmesh_backend_v4_t::scatterv, &PluginTable::scatterv},
      V4Row<decltype(devmesh_backend_v4_t::reduce)>{"reduce", DEVMESH_BACKEND_CAP_REDUCE, &devmesh_backend_v4_t::reduce,
                                                    &PluginTable::reduce},
      V4Row<decltype(devmesh_backend_v4_t::iallreduce)>{"iallreduce", DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES,
                                                        &devmesh_backend_v4_t::iallreduce, &PluginTable::iallreduce},
      V4Row<decltype(devmesh_backend_v4_t::iallgather)>{"iallgather", DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES,
                                                        &devmesh_backend_v4_t::iallgather, &PluginTable::iallgather},
      V4Row<decltype(devmesh_backend_v4_t::ireduce_scatter)>{
          "ireduce_scatter", DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES, &devmesh_backend_v4_t::ireduce_scatter,
          &PluginTable::ireduce_scatter},
      V4Row<decltype(devmesh_backend_v4_t::ibroadcast)>{"ibroadcast", DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES,
                                                        &devmesh_backend_v4_t::ibroadcast, &PluginTable::ibroadcast},
      V4Row<decltype(devmesh_backend_v4_t::ialltoall)>{"ialltoall", DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES,
                                                       &devmesh_backend_v4_t::ialltoall, &PluginTable::ialltoall},
      V4Row<decltype(devmesh_backend_v4_t::ibarrier)>{"ibarrier", DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES,
                                                      &devmesh_backend_v4_t::ibarrier, &PluginTable::ibarrier},
      V4Row<decltype(devmesh_backend_v4_t::batch)>{"batch", DEVMESH_BACKEND_CAP_BATCH, &devmesh_backend_v4_t::batch,
                                                   &PluginTable::batch},
      V4Row<decltype(devmesh_backend_v4_t::topology)>{"topology", DEVMESH_BACKEND_CAP_TOPOLOGY,
                                                      &devmesh_backend_v4_t::topology, &PluginTable::topology});
}

// Calls f(row) for each of version 4's members.
template <class F>
void each_v4(F&& f) {
  std::apply([&](const auto&... row) { (f(row), ...); }, v4_rows());
}

// The mandatory members t lacks, "" when none.
std::string missing_members(const devmesh_backend_v1_t& t) {
  const devmesh_backend_v3_t* v3 = v3_of(t);
  std::string missing;
  auto need = [&](bool present, const char* what) {
    if (!present) missing += std::string(missing.empty() ? "" : ", ") + what;
  };
  need(t.last_error != nullptr, "last_error");
  need(t.open != nullptr, "open");
  need(t.close != nullptr, "close");
  need(v3 || t.comm_create != nullptr, "comm_create");
  need(t.comm_destroy != nullptr, "comm_destroy");
  if (v3) {
    need(v3->comm_prepare != nullptr, "comm_prepare");
    need(v3->comm_connect != nullptr, "comm_connect");
    need(v3->comm_abandon != nullptr, "comm_abandon");
  }
  return missing;
}

// Non-blocking point to point comes whole: a request that nothing can end
// would otherwise reach the caller. "" when t is consistent.
std::string request_problem(const devmesh_backend_v1_t& t) {
  const devmesh_backend_v2_t* v2 = v2_of(t);
  const devmesh_backend_v3_t* v3 = v3_of(t);
  if (!v2) return {};
  const bool has[] = {v2->isend != nullptr, v2->irecv != nullptr, v2->test != nullptr, v2->wait != nullptr};
  const char* names[] = {"isend", "irecv", "test", "wait"};
  const bool any = std::count(std::begin(has), std::end(has), true) > 0;
  std::string missing;
  for (std::size_t i = 0; any && i < std::size(has); ++i)
    if (!has[i]) missing += std::string(missing.empty() ? "" : ", ") + names[i];
  if (!missing.empty())
    return "its table has non-blocking point to point without " + missing +
           " (isend, irecv, test and wait come all together or not at all)";
  if (v3 && any != ((v3->capabilities & DEVMESH_BACKEND_CAP_NONBLOCKING) != 0))
    return any ? "its table has isend, irecv, test and wait but not the capability DEVMESH_BACKEND_CAP_NONBLOCKING"
               : "it states DEVMESH_BACKEND_CAP_NONBLOCKING but has no isend, irecv, test and wait";
  return {};
}

// What a version 3 table states that the core cannot accept, "" when none.
std::string statement_problem(const devmesh_backend_v3_t* v3) {
  if (!v3) return {};
  if (!v3->revoke && (v3->capabilities & (DEVMESH_BACKEND_CAP_REVOKE_SPREADS | DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD)))
    return "it states DEVMESH_BACKEND_CAP_REVOKE_SPREADS or DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD but has no revoke";
  if (v3->mpi_family && std::strcmp(v3->mpi_family, DEVMESH_BACKEND_MPI) != 0)
    return std::string("it was compiled against ") + v3->mpi_family + "'s mpi.h, but this devmesh was built with " +
           DEVMESH_BACKEND_MPI + " (" + mpi_library() + ")";
  return {};
}

// Version 4's capability bits state its members exactly: a bit without its
// member, or a member without its bit, is refused. "" when consistent.
std::string v4_problem(const devmesh_backend_v4_t* v4) {
  if (!v4) return {};
  const unsigned long long caps = v4->v3.capabilities;
  std::string problem;
  each_v4([&](const auto& row) {
    const bool has = v4->*row.from != nullptr, states = (caps & row.cap) != 0;
    if (problem.empty() && has != states)
      problem = has ? std::string("its table has ") + row.name + " but does not state its capability bit"
                    : std::string("it states the capability bit of ") + row.name + " but its table has no " + row.name;
  });
  // Their requests are ended by test and wait, which come with NONBLOCKING.
  const bool nonblocking = (caps & DEVMESH_BACKEND_CAP_NONBLOCKING) != 0;
  if (problem.empty() && !nonblocking && (caps & DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES))
    problem =
        "it states DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES (iallreduce, iallgather, ireduce_scatter, "
        "ibroadcast, ialltoall, ibarrier) without DEVMESH_BACKEND_CAP_NONBLOCKING (test and wait)";
  if (problem.empty() && !nonblocking && (caps & DEVMESH_BACKEND_CAP_BATCH))
    problem = "it states DEVMESH_BACKEND_CAP_BATCH (batch) without DEVMESH_BACKEND_CAP_NONBLOCKING (test and wait)";
  return problem;
}

void copy_v4(const devmesh_backend_v4_t& t, PluginTable& n) {
  each_v4([&](const auto& row) { n.*row.to = t.*row.from; });
}

// --- creation: version 3's own steps --------------------------------------

int own_prepare(const PluginTable& t, void* instance, const devmesh_backend_group_t* group, void** prepared) {
  return v3_of(*t.source)->comm_prepare(instance, group, prepared);
}
int own_connect(const PluginTable& t, void* prepared, void** comm) {
  return v3_of(*t.source)->comm_connect(prepared, comm);
}
void own_abandon(const PluginTable& t, void* prepared) { v3_of(*t.source)->comm_abandon(prepared); }

// --- creation: versions 1 and 2, comm_create in the collective step --------

// The arguments of comm_create, kept from the local step to the collective
// one.
struct OneStep {
  void* instance;
  devmesh_backend_group_t group;
};

int keep_arguments(const PluginTable&, void* instance, const devmesh_backend_group_t* group, void** prepared) {
  auto* kept = new (std::nothrow) OneStep{instance, *group};
  if (!kept) return DEVMESH_ERR_INTERNAL;
  *prepared = kept;
  return DEVMESH_SUCCESS;
}
int create_whole(const PluginTable& t, void* prepared, void** comm) {
  auto* kept = static_cast<OneStep*>(prepared);
  const int rc = t.source->comm_create(kept->instance, &kept->group, comm);
  delete kept;
  return rc;
}
void forget_arguments(const PluginTable&, void* prepared) { delete static_cast<OneStep*>(prepared); }

void copy_v1(const devmesh_backend_v1_t& t, PluginTable& n) {
  n.name = t.name;
  n.per_rank_keys = t.per_rank_keys;
  n.last_error = t.last_error;
  n.last_mpi_error = t.last_mpi_error;
  n.open = t.open;
  n.close = t.close;
  n.comm_destroy = t.comm_destroy;
  n.comm_native = t.comm_native;
  n.allreduce = t.allreduce;
  n.allgather = t.allgather;
  n.reduce_scatter = t.reduce_scatter;
  n.broadcast = t.broadcast;
  n.alltoall = t.alltoall;
  n.barrier = t.barrier;
  n.send = t.send;
  n.recv = t.recv;
}

void copy_v2(const devmesh_backend_v2_t& t, PluginTable& n) {
  n.isend = t.isend;
  n.irecv = t.irecv;
  n.test = t.test;
  n.wait = t.wait;
  n.sendrecv = t.sendrecv;
}

void copy_v3(const devmesh_backend_v3_t& t, PluginTable& n) {
  n.mpi_family = t.mpi_family;
  n.capabilities = t.capabilities;
  n.init_host = t.init_host;
  n.reduce_supported = t.reduce_supported;
  n.revoke = t.revoke;
  n.prepares_locally = true;
  n.comm_prepare = own_prepare;
  n.comm_connect = own_connect;
  n.comm_abandon = own_abandon;
}

}  // namespace

std::string table_problem(const devmesh_backend_v1_t& t, std::initializer_list<unsigned> versions) {
  if (std::find(versions.begin(), versions.end(), t.abi_version) == versions.end()) {
    std::string known;
    for (unsigned v : versions) known += std::string(known.empty() ? "" : " or ") + std::to_string(v);
    return "its ABI version is " + std::to_string(t.abi_version) + " but this devmesh accepts " + known;
  }
  if (!t.name) return "its table has no name";
  if (const std::string missing = missing_members(t); !missing.empty())
    return "its table lacks the mandatory " + missing;
  if (std::string problem = request_problem(t); !problem.empty()) return problem;
  if (std::string problem = v4_problem(v4_of(t)); !problem.empty()) return problem;
  return statement_problem(v3_of(t));
}

PluginTable normalise(const devmesh_backend_v1_t& t) {
  PluginTable n;
  n.source = &t;
  n.abi_version = t.abi_version;
  copy_v1(t, n);
  if (const devmesh_backend_v2_t* v2 = v2_of(t)) copy_v2(*v2, n);
  if (const devmesh_backend_v3_t* v3 = v3_of(t)) {
    copy_v3(*v3, n);
    if (const devmesh_backend_v4_t* v4 = v4_of(t)) copy_v4(*v4, n);
    return n;
  }
  // Versions 1 and 2 state nothing: they may read the host-local rank (as
  // they always could), and make a communicator in one collective call.
  n.init = t.init;
  n.capabilities = DEVMESH_BACKEND_CAP_HOST_LOCAL_RANK | (n.isend ? DEVMESH_BACKEND_CAP_NONBLOCKING : 0);
  n.connect_name = "comm_create";
  n.comm_prepare = keep_arguments;
  n.comm_connect = create_whole;
  n.comm_abandon = forget_arguments;
  return n;
}

// The first interface version that has the member serving `what` (an
// i-form names itself as the C function does: "ialltoallv" is alltoallv's).
unsigned first_version(std::string_view what) {
  if (what == "isend" || what == "irecv" || what == "sendrecv") return DEVMESH_BACKEND_ABI_VERSION_2;
  unsigned v = DEVMESH_BACKEND_ABI_VERSION;
  each_v4([&](const auto& row) {
    const std::string_view name = row.name;
    if (what == name || (what.size() == name.size() + 1 && what[0] == 'i' && what.substr(1) == name))
      v = DEVMESH_BACKEND_ABI_VERSION_4;
  });
  return v;
}

void lacks(const PluginTable& t, std::string_view what) {
  const std::string head = std::string(what) + " is not supported by backend '" + std::string(t.name) + "'";
  if (const unsigned since = first_version(what); t.abi_version < since)
    throw Error(Status::unsupported, head + ": it was built for ABI v" + std::to_string(t.abi_version) +
                                         " of the plugin interface, which has no " + std::string(what));
  throw Error(Status::unsupported, head);
}

}  // namespace devmesh::detail
