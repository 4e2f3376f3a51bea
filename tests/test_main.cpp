// GoogleTest main that owns the Kokkos session (2 OpenMP threads, so the threaded path is tested).
#include <gtest/gtest.h>

#include "nep/calculator.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  nep::KokkosSession kokkos(2);
  return RUN_ALL_TESTS();
}
