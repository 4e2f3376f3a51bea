// Frame-store append throughput as the file grows (issue #7's load target, without LAMMPS):
//   bench_frame_store OUT.h5 [FRAMES=100000] [ATOMS=8] [BLOCK=10000]
// appends FRAMES synthetic frames of ATOMS atoms (each append flushed, as fix nep/train does) and
// prints frames/s and microseconds per append for every BLOCK frames.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "nep/data/frame_store.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_frame_store OUT.h5 [FRAMES] [ATOMS] [BLOCK]\n");
    return 2;
  }
  const std::string path = argv[1];
  const long frames = argc > 2 ? std::atol(argv[2]) : 100000;
  const int atoms = argc > 3 ? std::atoi(argv[3]) : 8;
  const long block = argc > 4 ? std::atol(argv[4]) : 10000;
  nep::TrainingFrame f;
  f.species.assign(atoms, "Si");
  f.pos.resize(3 * atoms);
  f.forces.resize(3 * atoms);
  f.cell[0] = f.cell[4] = f.cell[8] = 5.431;
  f.has_energy = f.has_forces = f.has_virial = true;
  auto store = nep::FrameStore::create(path);
  std::printf("%10s %12s %14s\n", "frames", "frames/s", "us/append");
  auto t0 = std::chrono::steady_clock::now();
  for (long k = 1; k <= frames; ++k) {
    for (int i = 0; i < 3 * atoms; ++i) {
      f.pos[i] = 0.001 * double((k * 31 + i * 7) % 5431);
      f.forces[i] = 1e-3 * double((k + i) % 17);
    }
    f.energy = -4.3 * atoms + 1e-6 * double(k % 1000);
    store.append(f);
    if (k % block == 0) {
      const auto t1 = std::chrono::steady_clock::now();
      const double s = std::chrono::duration<double>(t1 - t0).count();
      std::printf("%10ld %12.0f %14.1f\n", k, double(block) / s, 1e6 * s / double(block));
      std::fflush(stdout);
      t0 = t1;
    }
  }
  return 0;
}
