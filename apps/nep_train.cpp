// nep-train [DIR] [--seed S] [--threads N] [--device cpu|cuda|kokkos] [--resume] [--stop-after EPOCHS]
#include <Kokkos_Core.hpp>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "nep/calculator.hpp"
#include "nep/error.hpp"
#include "nep/train/trainer.hpp"

#ifdef NEP_WITH_MPI
#include <mpi.h>
#endif

namespace {
void usage() {
  std::cerr << "usage: nep-train [DIR] [--seed S] [--threads N] [--device cpu|cuda|kokkos] [--resume] [--stop-after EPOCHS]\n"
               "  DIR holds nep.in, train.xyz (or train.h5) and optionally test.xyz (or test.h5); default '.'\n"
               "  --device cuda: training forward/gradient on the GPU (CUDA build); kokkos: the same kernels on\n"
               "  this build's Kokkos default execution space; cpu (default): the host kernel\n";
}
}  // namespace

// MPI for the lifetime of the program (a no-op in a build without MPI)
struct MpiSession {
  MpiSession(int* argc, char*** argv) {
#ifdef NEP_WITH_MPI
    MPI_Init(argc, argv);
#else
    (void)argc;
    (void)argv;
#endif
  }
  ~MpiSession() {
#ifdef NEP_WITH_MPI
    MPI_Finalize();
#endif
  }
  void abort() {
#ifdef NEP_WITH_MPI
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) MPI_Abort(MPI_COMM_WORLD, 1);  // a rank-local error must not leave the others waiting
#endif
  }
};

int main(int argc, char** argv) {
  MpiSession mpi(&argc, &argv);
  nep::TrainOptions o;
  bool dir_set = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw nep::Error(a + " needs a value");
        return argv[++i];
      };
      if (a == "--seed") {
        o.seed = std::stoull(value());
        o.seed_given = true;
      } else if (a == "--threads") {
        o.threads = std::stoi(value());
        if (o.threads < 1) throw nep::Error("--threads must be >= 1");
      } else if (a == "--device") {
        o.device = value();
      } else if (a == "--resume") {
        o.resume = true;
      } else if (a == "--stop-after") {
        o.stop_after = std::stoi(value());
      } else if (a == "-h" || a == "--help") {
        usage();
        return 0;
      } else if (!a.empty() && a[0] != '-' && !dir_set) {
        o.dir = a;
        dir_set = true;
      } else {
        usage();
        return 2;
      }
    }
    nep::KokkosSession kokkos(o.threads);
    nep::run_training(o, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "nep-train: error: " << e.what() << "\n";
    mpi.abort();
    return 1;
  }
  return 0;
}
