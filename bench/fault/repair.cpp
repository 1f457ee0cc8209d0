// bench_repair: how long a repair takes, devmesh's Mesh::repair against the
// same repair written by hand over ULFM, paired in one job (Open MPI 5,
// mpirun --with-ft ulfm). An HSDP (replicate=4, shard=2) mesh with
// fault_tolerance runs allreduces along both dims until one of its members
// dies (SIGKILL); the time measured on each survivor runs from its failed
// operation's return (PROC_FAILED or REVOKED) to the repaired mesh with both
// dims' communicators made and used (an allreduce of one int on each); the
// figure is the slowest survivor's. Each job repairs twice, once by each
// method (phase 1 and 2, ORDER 0: devmesh first, 1: by hand first):
//   spares (10 ranks: 8 members, 2 spares): devmesh: Mesh::create with
//     spares, Mesh::standby on the spares, Mesh::repair, release_spares;
//     by hand: a duplicate of the phase's communicator as the pool, on
//     which the spares wait in MPIX_Comm_shrink; the members' root and dim
//     communicators split from it; on the error MPIX_Comm_revoke of the
//     four, MPIX_Comm_shrink of the pool, an MPI_Allgather of who holds
//     which index, MPI_Comm_split keyed by the new index (spares take the
//     failed indices, lowest pool rank to lowest index, spares left over
//     after the members), one MPI_Comm_split per dim of it.
//   spawn (8 ranks): devmesh: Mesh::repair with a Spawn, Mesh::join in the
//     newcomer; by hand: revoke, shrink, the Allgather, MPI_Comm_spawn (the
//     failed indices on its command line), MPI_Intercomm_merge, the splits.
// Between phases (not timed) the live processes make a clean communicator:
// MPIX_Comm_shrink of a duplicate of MPI_COMM_WORLD (spares), or a
// duplicate of the repaired mesh's flattened root (spawn), split so that
// members come in index order and spares after them.
//
// Usage: bench_repair MODE JOB ORDER V1 V2 [STEP]
//   MODE spares|spawn; V1, V2: the root indices that die in phase 1 and 2
//   (before allreduce step STEP, default 4). Spawned: --join METHOD PHASE
//   followed by the same arguments.
// The first rank of the final communicator prints one tab-separated line
// per phase: "repair MODE JOB PHASE METHOD VICTIM SLOWEST_MS SPAN_MS", where
// SPAN is the last holder's end (newcomers and spares included) minus the
// first survivor's error (one machine: one monotonic clock), then "end".
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"

using devmesh::DataType;
using devmesh::Error;
using devmesh::Mesh;
using devmesh::ReduceOp;

namespace {

constexpr int members = 8;
const std::vector<int> shape{4, 2};
const std::vector<std::string> names{"replicate", "shard"};

double clock_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "bench_repair: %s\n", why.c_str());
  std::fflush(stderr);
  std::abort();
}

// DEVMESH_BENCH_TRACE=1: every process says on stderr where it is.
void trace(const char* what, int x) {
  static const bool on = std::getenv("DEVMESH_BENCH_TRACE") != nullptr;
  if (!on) return;
  int w = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &w);
  std::fprintf(stderr, "[w%d %.1f] %s %d\n", w, clock_ms(), what, x);
  std::fflush(stderr);
}

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) fail(std::string(what) + " failed");
}

struct Args {
  std::string mode, program;
  int job = 0, order = 0, victim[2] = {0, 1}, step = 4;
  bool spawn() const { return mode == "spawn"; }
  bool devmesh_in(int phase) const { return (phase == 1) == (order == 0); }
  std::vector<std::string> join_argv(const char* method, int phase) const {
    return {"--join",
            method,
            std::to_string(phase),
            mode,
            std::to_string(job),
            std::to_string(order),
            std::to_string(victim[0]),
            std::to_string(victim[1]),
            std::to_string(step)};
  }
};

// A phase's outcome on one process: its error's and its end's clock (-1:
// none), its index in the repaired mesh (-1: a spare left over) and the
// clean communicator for what follows (spawn mode only; spares mode
// shrinks a duplicate of MPI_COMM_WORLD instead).
struct Outcome {
  double t0 = -1, t1 = -1;
  int index = -1;
  MPI_Comm next = MPI_COMM_NULL;
};

// One allreduce step per dim until one fails; the victim dies before
// step `step`. Returns the clock of the failed call's return.
template <class Reduce>
double until_error(const Args& a, int phase, int index, Reduce&& reduce) {
  for (int s = 0; s < 1000000; ++s) {
    if (s == a.step && index == a.victim[phase - 1]) raise(SIGKILL);
    if (!reduce()) {
      trace("error at step", s);
      return clock_ms();
    }
  }
  fail("no member died");
}

// --- devmesh ------------------------------------------------------------------

void use_dims(const Mesh& m) {
  int x = 1, y = 0;
  m.communicator("replicate").allreduce(&x, &y, 1, DataType::int32, ReduceOp::sum);
  m.communicator("shard").allreduce(&x, &y, 1, DataType::int32, ReduceOp::sum);
}

MPI_Comm flat_dup(const Mesh& m) {
  MPI_Comm c = MPI_COMM_NULL;
  check(MPI_Comm_dup(m.flatten("all").comm("all"), &c), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  return c;
}

Outcome devmesh_phase(const Args& a, int phase, MPI_Comm base, int spares) {
  Outcome o;
  devmesh::MeshOptions opt;
  opt.fault_tolerance = true;
  opt.spares = spares;
  Mesh m = Mesh::create(base, shape, names, opt);
  Mesh r;
  if (!m) {
    r = Mesh::standby(base);
    trace("standby returned, index", r ? r.root_index() : -1);
    if (r) {
      use_dims(r);
      o.t1 = clock_ms();
      o.index = r.root_index();
      r.release_spares();
    }
    return o;  // a spare left over: released by the members
  }
  const int index = m.root_index();
  use_dims(m);
  o.t0 = until_error(a, phase, index, [&] {
    try {
      use_dims(m);
      return true;
    } catch (const Error&) {
      return false;
    }
  });
  std::optional<devmesh::Spawn> sp;
  if (a.spawn()) {
    const std::vector<std::string> argv = a.join_argv("devmesh", phase);
    sp = devmesh::Spawn{a.program, argv, MPI_INFO_NULL};
  }
  r = m.repair(sp);
  trace("repaired", r.root_index());
  use_dims(r);
  o.t1 = clock_ms();
  o.index = r.root_index();
  r.release_spares();
  if (a.spawn()) o.next = flat_dup(r);
  return o;
}

Outcome devmesh_join() {
  Outcome o;
  Mesh r = Mesh::join();
  use_dims(r);
  o.t1 = clock_ms();
  o.index = r.root_index();
  o.next = flat_dup(r);
  return o;
}

// --- by hand --------------------------------------------------------------------

MPI_Comm errors_return(MPI_Comm c) {
  if (c != MPI_COMM_NULL) MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  return c;
}

// The new root (members by index, spares left over after them) and its
// dims' communicators, split from `live`; an allreduce on each dim.
Outcome hand_finish(MPI_Comm live, int index, int key, Outcome o) {
  MPI_Comm root = MPI_COMM_NULL, rep = MPI_COMM_NULL, sh = MPI_COMM_NULL;
  check(MPI_Comm_split(live, 0, key, &root), "MPI_Comm_split");
  errors_return(root);
  check(MPI_Comm_split(root, index < 0 ? MPI_UNDEFINED : index % 2, index, &rep), "MPI_Comm_split");
  check(MPI_Comm_split(root, index < 0 ? MPI_UNDEFINED : index / 2, index, &sh), "MPI_Comm_split");
  if (index >= 0) {
    int x = 1, y = 0;
    check(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, errors_return(rep)), "MPI_Allreduce");
    check(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, errors_return(sh)), "MPI_Allreduce");
  }
  o.t1 = clock_ms();
  o.index = index;
  if (rep != MPI_COMM_NULL) MPI_Comm_free(&rep);
  if (sh != MPI_COMM_NULL) MPI_Comm_free(&sh);
  o.next = root;
  return o;
}

std::vector<int> failed_of(const std::vector<int>& held) {
  std::vector<int> failed;
  for (int x = 0; x < members; ++x)
    if (std::find(held.begin(), held.end(), x) == held.end()) failed.push_back(x);
  return failed;
}

Outcome hand_phase(const Args& a, int phase, MPI_Comm base, int index) {
  Outcome o;
  MPI_Comm pool = MPI_COMM_NULL, root = MPI_COMM_NULL, rep = MPI_COMM_NULL, sh = MPI_COMM_NULL;
  MPI_Comm live = MPI_COMM_NULL;
  check(MPI_Comm_dup(base, &pool), "MPI_Comm_dup");
  errors_return(pool);
  check(MPI_Comm_split(pool, index < 0 ? MPI_UNDEFINED : 0, index, &root), "MPI_Comm_split");
  if (index >= 0) {
    errors_return(root);
    check(MPI_Comm_split(root, index % 2, index, &rep), "MPI_Comm_split");
    check(MPI_Comm_split(root, index / 2, index, &sh), "MPI_Comm_split");
    errors_return(rep);
    errors_return(sh);
    o.t0 = until_error(a, phase, index, [&] {
      int x = 1, y = 0;
      return MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, rep) == MPI_SUCCESS &&
             MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, sh) == MPI_SUCCESS;
    });
    for (MPI_Comm c : {pool, root, rep, sh}) MPIX_Comm_revoke(c);
  }
  check(MPIX_Comm_shrink(pool, &live), "MPIX_Comm_shrink");
  trace("shrunk", index);
  errors_return(live);
  int n = 0, me = 0;
  MPI_Comm_size(live, &n);
  MPI_Comm_rank(live, &me);
  std::vector<int> held(static_cast<std::size_t>(n));
  check(MPI_Allgather(&index, 1, MPI_INT, held.data(), 1, MPI_INT, live), "MPI_Allgather");
  const std::vector<int> failed = failed_of(held);
  int key = index, mine = index;
  MPI_Comm over = live;
  if (!a.spawn()) {
    // Spares (index -1, in pool order) take the failed indices.
    const int k = static_cast<int>(std::count(held.begin(), held.begin() + me, -1));
    if (index < 0) {
      mine = k < static_cast<int>(failed.size()) ? failed[static_cast<std::size_t>(k)] : -1;
      key = mine >= 0 ? mine : members + k;
    }
  } else {
    std::vector<std::string> args = a.join_argv("hand", phase);
    for (int f : failed) args.push_back(std::to_string(f));
    std::vector<char*> argv;
    for (std::string& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    MPI_Comm inter = MPI_COMM_NULL;
    check(MPI_Comm_spawn(a.program.c_str(), argv.data(), static_cast<int>(failed.size()), MPI_INFO_NULL, 0, live,
                         &inter, MPI_ERRCODES_IGNORE),
          "MPI_Comm_spawn");
    check(MPI_Intercomm_merge(inter, 0, &over), "MPI_Intercomm_merge");
    errors_return(over);
    MPI_Comm_free(&inter);
  }
  o = hand_finish(over, mine, key, o);
  if (over != live) MPI_Comm_free(&over);
  for (MPI_Comm* c : {&pool, &root, &rep, &sh, &live})
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
  return o;
}

Outcome hand_join(const std::vector<int>& failed) {
  MPI_Comm inter = MPI_COMM_NULL, merged = MPI_COMM_NULL;
  check(MPI_Comm_get_parent(&inter), "MPI_Comm_get_parent");
  errors_return(inter);
  check(MPI_Intercomm_merge(inter, 1, &merged), "MPI_Intercomm_merge");
  errors_return(merged);
  int me = 0, size = 0;
  MPI_Comm_rank(merged, &me);
  MPI_Comm_size(merged, &size);
  const int index = failed.at(static_cast<std::size_t>(me - (size - static_cast<int>(failed.size()))));
  Outcome o = hand_finish(merged, index, index, Outcome{});
  MPI_Comm_free(&merged);
  return o;
}

// --- the job ------------------------------------------------------------------

// DEVMESH_BENCH_PROFILE=DIR (run-repair --profile): each process appends
// "PHASE METHOD T0 T1" to DIR/<pid>.marks, beside the calls
// repair_profile.c times.
void mark(const Args& a, int phase, const Outcome& o) {
  const char* dir = std::getenv("DEVMESH_BENCH_PROFILE");
  if (!dir) return;
  const std::string path = std::string(dir) + "/" + std::to_string(getpid()) + ".marks";
  if (FILE* f = std::fopen(path.c_str(), "a")) {
    std::fprintf(f, "%d %s %.4f %.4f\n", phase, a.devmesh_in(phase) ? "devmesh" : "hand", o.t0, o.t1);
    std::fclose(f);
  }
}

// Gathers the phase's outcome on `comm` (every holder of the next phase)
// and prints its line on rank 0.
void report(const Args& a, int phase, MPI_Comm comm, const Outcome& o) {
  int me = 0, n = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  double mine[2] = {o.t0, o.t1};
  std::vector<double> all(2 * static_cast<std::size_t>(n));
  check(MPI_Gather(mine, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, 0, comm), "MPI_Gather");
  if (me != 0) return;
  double slowest = 0, first = 1e300, last = 0;
  for (int i = 0; i < n; ++i) {
    const double t0 = all[2 * static_cast<std::size_t>(i)], t1 = all[2 * static_cast<std::size_t>(i) + 1];
    if (t0 >= 0) {
      slowest = std::max(slowest, t1 - t0);
      first = std::min(first, t0);
    }
    if (t1 >= 0) last = std::max(last, t1);
  }
  std::printf("repair\t%s\t%d\t%d\t%s\t%d\t%.3f\t%.3f\n", a.mode.c_str(), a.job, phase,
              a.devmesh_in(phase) ? "devmesh" : "hand", a.victim[phase - 1], slowest, last - first);
  std::fflush(stdout);
}

// The clean communicator after a phase of spares mode: every live process,
// members by index, spares after them in world order.
MPI_Comm clean_spares(MPI_Comm control, int index) {
  MPI_Comm live = MPI_COMM_NULL, out = MPI_COMM_NULL;
  check(MPIX_Comm_shrink(control, &live), "MPIX_Comm_shrink");
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  check(MPI_Comm_split(live, 0, index >= 0 ? index : members + world, &out), "MPI_Comm_split");
  MPI_Comm_free(&live);
  return errors_return(out);
}

// Phases `from`..2 on this process, which holds `index` (-1: a spare) of
// `base`; `control` (spares mode) is MPI_COMM_WORLD's duplicate.
void run(const Args& a, int from, MPI_Comm base, int index, MPI_Comm control, Outcome done) {
  if (from == 2) report(a, 1, base, done);
  for (int phase = from; phase <= 2; ++phase) {
    int n = 0;
    MPI_Comm_size(base, &n);
    const int spares = n - members;
    trace(a.devmesh_in(phase) ? "devmesh phase, index" : "hand phase, index", index);
    Outcome o = a.devmesh_in(phase) ? devmesh_phase(a, phase, base, spares) : hand_phase(a, phase, base, index);
    MPI_Comm_free(&base);
    if (a.spawn()) {
      base = o.next;
    } else {
      if (o.next != MPI_COMM_NULL) MPI_Comm_free(&o.next);
      base = clean_spares(control, o.index);
    }
    index = o.index;
    mark(a, phase, o);
    trace("clean, index", index);
    report(a, phase, base, o);
  }
  MPI_Barrier(base);
  int me = 0;
  MPI_Comm_rank(base, &me);
  if (me == 0) {
    std::printf("end\n");
    std::fflush(stdout);
  }
  MPI_Comm_free(&base);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const bool joined = argc > 1 && std::string(argv[1]) == "--join";
  const int at = joined ? 4 : 1;
  if (argc < at + 5) {
    std::fprintf(stderr, "usage: bench_repair spares|spawn JOB ORDER V1 V2 [STEP]\n");
    return 2;
  }
  Args a;
  a.program = argv[0];
  a.mode = argv[at];
  a.job = std::atoi(argv[at + 1]);
  a.order = std::atoi(argv[at + 2]);
  a.victim[0] = std::atoi(argv[at + 3]);
  a.victim[1] = std::atoi(argv[at + 4]);
  if (argc > at + 5) a.step = std::atoi(argv[at + 5]);
  try {
    if (joined) {
      const std::string method = argv[2];
      const int phase = std::atoi(argv[3]);
      std::vector<int> failed;
      for (int i = at + 6; i < argc; ++i) failed.push_back(std::atoi(argv[i]));
      Outcome o = method == "devmesh" ? devmesh_join() : hand_join(failed);
      mark(a, phase, o);
      if (phase == 2) {
        report(a, 2, o.next, o);
        MPI_Barrier(o.next);
        MPI_Comm_free(&o.next);
      } else {
        run(a, 2, o.next, o.index, MPI_COMM_NULL, o);
      }
    } else {
      int world = 0, size = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &world);
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      if (size < members || (a.spawn() && size != members))
        fail("spares mode needs 8 ranks and more, spawn mode exactly 8");
      MPI_Comm control = MPI_COMM_NULL, base = MPI_COMM_NULL;
      check(MPI_Comm_dup(MPI_COMM_WORLD, &control), "MPI_Comm_dup");
      check(MPI_Comm_dup(MPI_COMM_WORLD, &base), "MPI_Comm_dup");
      errors_return(control);
      errors_return(base);
      run(a, 1, base, world < members ? world : -1, control, Outcome{});
    }
  } catch (const Error& e) {
    fail(std::string(devmesh::status_name(e.status())) + ": " + e.what());
  }
  MPI_Finalize();
  return 0;
}
