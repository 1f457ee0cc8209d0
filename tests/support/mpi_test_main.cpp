// main() for Boost.Test suites run under mpiexec.
//
// * MPI is initialised with MPI_THREAD_MULTIPLE before the tests and
//   finalised after them; the argument --thread-serialized (taken out
//   before Boost.Test reads the rest) asks for MPI_THREAD_SERIALIZED
//   instead (for what devmesh refuses below MPI_THREAD_MULTIPLE).
// * Only rank 0 prints the log and report; other ranks print failures only.
// * A fatal assertion on one rank would leave the others waiting in a
//   collective forever: an observer turns an aborted test unit into
//   MPI_Abort, so the job ends at once with a non-zero status.
// * Every rank exits with the worst result of all ranks.
#define BOOST_TEST_NO_MAIN
#define BOOST_TEST_ALTERNATIVE_INIT_API
#include <mpi.h>

#include <boost/test/results_reporter.hpp>
#include <boost/test/tree/observer.hpp>
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <cstring>

namespace {

struct AbortOnFatal : boost::unit_test::test_observer {
  void test_unit_aborted(const boost::unit_test::test_unit& tu) override {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "rank %d: fatal failure in %s, aborting the job\n", rank,
                 tu.p_name.get().c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
};

AbortOnFatal observer;

bool init() {
  boost::unit_test::framework::register_observer(observer);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    boost::unit_test::unit_test_log.set_threshold_level(boost::unit_test::log_all_errors);
    boost::unit_test::results_reporter::set_level(boost::unit_test::NO_REPORT);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  bool serialized = false;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--thread-serialized") == 0) {
      serialized = true;
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      argv[--argc] = nullptr;
      break;
    }
  MPI_Init_thread(&argc, &argv, serialized ? MPI_THREAD_SERIALIZED : MPI_THREAD_MULTIPLE, &provided);
  int rc = boost::unit_test::unit_test_main(&init, argc, argv);
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
