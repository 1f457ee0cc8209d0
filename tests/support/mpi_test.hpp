// Include this (after defining BOOST_TEST_MODULE) in Boost.Test programs run
// under mpiexec: main() comes from mpi_test_main.cpp, which initialises MPI.
#pragma once
#define BOOST_TEST_NO_MAIN
#define BOOST_TEST_ALTERNATIVE_INIT_API
#include <boost/test/unit_test.hpp>
