// Catch2's main for the tests that run under mpirun: MPI is started before the tests and ended after.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tinygpt/train/distributed.h"

int main(int argc, char** argv) {
  tinygpt::train::MpiSession mpi(argc, argv);
  return Catch::Session().run(argc, argv);
}
