// bench_fault: what fault tolerance costs and how fast a shrink is, under
// an MPI with ULFM running with it on (Open MPI 5: mpirun --with-ft ulfm),
// at any number of ranks (8: an HSDP (P/2, 2) mesh). Three paired
// comparisons, each alternating its two methods sample by sample, so that
// the paired ratio (median over samples of A / the adjacent B) holds up on
// a shared machine:
//   1. revoke + shrink along replicate + both dims' communicators:
//      Mesh::revoke + Mesh::shrink against the ULFM sequence a program
//      writes by hand (MPIX_Comm_revoke of each of its mesh's
//      communicators, MPIX_Comm_shrink, one MPI_Comm_split per dim), no
//      rank dead (a death is one per job);
//   2. an 8-byte allreduce along shard through Communicator&: a
//      fault-tolerant mesh, and one with a deadline, against a mesh
//      without fault tolerance (batches of calls);
//   3. creation (Mesh::create + comm() per dim): with and without
//      fault_tolerance.
// Rank 0 prints a Markdown table. Times are the slowest rank's.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"

using devmesh::Mesh;

namespace {

double now() { return MPI_Wtime(); }

// The slowest rank's time of f (a barrier first).
double timed(const std::function<void()>& f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = now();
  f();
  double mine = now() - t0, slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Pair {
  std::vector<double> a, b, ratio;
};

// samples of a and b alternating (order flipped every sample).
Pair paired(int samples, const std::function<double()>& a, const std::function<double()>& b) {
  Pair p;
  for (int i = 0; i < samples; ++i) {
    double ta, tb;
    if (i % 2) {
      tb = b();
      ta = a();
    } else {
      ta = a();
      tb = b();
    }
    p.a.push_back(ta);
    p.b.push_back(tb);
    p.ratio.push_back(ta / tb);
  }
  return p;
}

devmesh::MeshOptions ft(double deadline = 0) {
  devmesh::MeshOptions o;
  o.fault_tolerance = true;
  o.deadline = deadline;
  return o;
}

void row(const char* what, const char* against, const Pair& p, double unit, const char* u) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf("| %s | %s | %.1f %s | %.1f %s | %.3f |\n", what, against, median(p.a) * unit, u, median(p.b) * unit, u,
                median(p.ratio));
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int samples = argc > 1 ? std::atoi(argv[1]) : 30;
  const std::vector<int> shape{size / 2, 2};
  const std::vector<std::string> names{"replicate", "shard"};
  if (rank == 0) {
    std::printf("| what | against | median | median (against) | paired ratio |\n|---|---|---|---|---|\n");
  }

  // 1. revoke + shrink.
  Pair shrink = paired(
      samples,
      [&] {
        Mesh m = Mesh::create(MPI_COMM_WORLD, shape, names, ft());
        Mesh s;
        const double t = timed([&] {
          m.revoke();
          s = m.shrink("replicate");
          s.comm("replicate");
          s.comm("shard");
        });
        return t;
      },
      [&] {
        // The program's communicators before the failure: its mesh's
        // (a duplicate of MPI_COMM_WORLD and one per dim), each revoked,
        // as devmesh revokes the mesh's, so that a rank waiting in any of
        // them wakes.
        MPI_Comm c = MPI_COMM_NULL, survivors = MPI_COMM_NULL, rep = MPI_COMM_NULL, sh = MPI_COMM_NULL;
        MPI_Comm old_rep = MPI_COMM_NULL, old_sh = MPI_COMM_NULL;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
        MPI_Comm_split(c, rank % 2, rank, &old_rep);
        MPI_Comm_split(c, rank / 2, rank, &old_sh);
        const double t = timed([&] {
          MPIX_Comm_revoke(c);
          MPIX_Comm_revoke(old_rep);
          MPIX_Comm_revoke(old_sh);
          MPIX_Comm_shrink(c, &survivors);
          int r = 0;
          MPI_Comm_rank(survivors, &r);
          MPI_Comm_split(survivors, r % 2, r, &rep);
          MPI_Comm_split(survivors, r / 2, r, &sh);
        });
        for (MPI_Comm* x : {&c, &old_rep, &old_sh, &survivors, &rep, &sh}) MPI_Comm_free(x);
        return t;
      });
  row("Mesh::revoke + Mesh::shrink(\"replicate\") + comm() per dim", "MPIX_Comm_revoke of the 3 communicators + MPIX_Comm_shrink + MPI_Comm_split per dim",
      shrink, 1e6, "µs");

  // 2. an 8-byte allreduce along shard.
  {
    Mesh plain = Mesh::create(MPI_COMM_WORLD, shape, names);
    Mesh tolerant = Mesh::create(MPI_COMM_WORLD, shape, names, ft());
    Mesh bounded = Mesh::create(MPI_COMM_WORLD, shape, names, ft(60));
    double x = 1, y = 0;
    const int calls = 2000;
    const auto batch = [&](const Mesh& m) {
      auto& c = m.communicator("shard");
      return timed([&] {
               for (int i = 0; i < calls; ++i)
                 c.allreduce(&x, &y, 1, devmesh::DataType::float64, devmesh::ReduceOp::sum);
             }) /
             calls;
    };
    batch(plain), batch(tolerant), batch(bounded);  // warm up
    row("allreduce 8 B along shard, fault_tolerance", "the same without fault_tolerance",
        paired(samples, [&] { return batch(tolerant); }, [&] { return batch(plain); }), 1e6, "µs");
    row("allreduce 8 B along shard, fault_tolerance + deadline 60 s", "the same without fault_tolerance",
        paired(samples, [&] { return batch(bounded); }, [&] { return batch(plain); }), 1e6, "µs");
  }

  // 3. creation.
  const auto create = [&](const devmesh::MeshOptions& o) {
    return timed([&] {
      Mesh m = Mesh::create(MPI_COMM_WORLD, shape, names, o);
      m.comm("replicate");
      m.comm("shard");
    });
  };
  row("Mesh::create + comm() per dim, fault_tolerance", "the same without",
      paired(samples, [&] { return create(ft()); }, [&] { return create({}); }), 1e6, "µs");
  MPI_Finalize();
  return 0;
}
