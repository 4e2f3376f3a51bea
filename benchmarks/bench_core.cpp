// Core throughput: atom-steps/s of one energy+force+virial evaluation including the neighbour
// build (what nep-predict and an MD step without neighbour reuse pay), for ~4000-atom boxes.
// usage: bench_core DATA_DIR [steps] [double|float] [model name] [openmp|serial|device] [cells]
// (threads: OMP_NUM_THREADS)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include <Kokkos_Core.hpp>

#include "nep/calculator.hpp"

namespace {

// Periodic supercell of an fcc-based crystal (n^3 conventional cells), rattled by +-0.05 A.
nep::Structure crystal(const char* kind, double a, int n, int seed) {
  nep::Structure s;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-0.05, 0.05);
  const double fcc[4][3] = {{0, 0, 0}, {0, .5, .5}, {.5, 0, .5}, {.5, .5, 0}};
  const std::string k = kind;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int l = 0; l < n; ++l)
        for (const auto& b : fcc) {
          auto add = [&](double dx, double dy, double dz, int t) {
            s.x.push_back((i + b[0] + dx) * a + u(rng));
            s.x.push_back((j + b[1] + dy) * a + u(rng));
            s.x.push_back((l + b[2] + dz) * a + u(rng));
            s.type.push_back(t);
          };
          if (k == "rocksalt") {
            add(0, 0, 0, 1);   // Pb (type 1 in PbTe models)
            add(.5, 0, 0, 0);  // Te
          } else {             // diamond
            add(0, 0, 0, 0);
            add(.25, .25, .25, 0);
          }
        }
  s.cell.h[0] = s.cell.h[4] = s.cell.h[8] = n * a;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_core DATA_DIR [steps] [double|float]\n");
    return 2;
  }
  const std::string data = argv[1];
  const int steps = argc > 2 ? std::atoi(argv[2]) : 10;
  const std::string prec = argc > 3 ? argv[3] : "double";
  const std::string only = argc > 4 && std::string(argv[4]) != "all" ? argv[4] : "";
  const nep::Backend backend = nep::parse_backend(argc > 5 ? argv[5] : "openmp");
  const int cells = argc > 6 ? std::atoi(argv[6]) : 8;  // 8: 4096 atoms
  const char* env_threads = std::getenv("OMP_NUM_THREADS");
  nep::KokkosSession kokkos(env_threads ? std::atoi(env_threads) : 0);
  struct Case {
    const char* name;
    const char* model;
    const char* kind;
    double a;
    int n;
  } cases[] = {{"PbTe_NEP4", "PbTe_NEP4.txt", "rocksalt", 6.46, cells},
               {"Si_5body", "Si_2022_NEP4_5body.txt", "diamond", 5.431, cells},
               {"C_2022_NEP4", "C_2022_NEP4.txt", "diamond", 3.567, cells}};  // 8 * cells^3 atoms
  std::printf("%-12s %8s %8s %7s %14s   backend %s\n", "model", "atoms", "precision", "threads", "atom-steps/s",
              argc > 5 ? argv[5] : "openmp");
  for (const auto& c : cases) {
    if (!only.empty() && only != c.name) continue;
    const nep::Model m = nep::read_model(data + "/potentials/" + c.model);
    const nep::Structure s = crystal(c.kind, c.a, c.n, 1);
    nep::Calculator calc(m, nep::parse_precision(prec), backend);
    calc.compute(s, false);  // warm-up
    const auto t0 = std::chrono::steady_clock::now();
    double e = 0;
    for (int k = 0; k < steps; ++k) e += calc.compute(s, false).energy;
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-12s %8zu %8s %7d %14.0f   (E/atom %.6f eV)\n", c.name, s.type.size(), prec.c_str(),
                backend == nep::Backend::Serial ? 1 : Kokkos::DefaultHostExecutionSpace::concurrency(), s.type.size() * steps / sec, e / steps / s.type.size());
  }
  return 0;
}
