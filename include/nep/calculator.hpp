// Structure-level front end of the core (no Kokkos in this header): neighbour list with periodic
// images, one Evaluator call, ghost contributions folded back to their owners. Used by
// nep-predict, the tests and the benchmarks; pair styles call the Evaluator directly.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nep/model.hpp"
#include "nep/neighbor.hpp"

namespace nep {

enum class Precision { Double, Float };
// Device: Kokkos' default execution space (GPU in a CUDA build); Host: OpenMP when the build has
// it, else Serial (callable from any thread: the core never reduces through Serial's shared scratch)
enum class Backend { Serial, OpenMP, Device, Host };

Backend parse_backend(const std::string& s);  // "serial" | "openmp" | "device" | "host"

Precision parse_precision(const std::string& s);  // "double" | "float"

struct Structure {
  std::vector<int> type;   // model type index per atom
  std::vector<double> x;   // 3N positions (Angstrom)
  Cell cell;
};

struct Prediction {
  double energy = 0.0;
  double virial[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};  // row-major r^a f^b, LAMMPS sign (eV)
  std::vector<double> eatom;  // N
  std::vector<double> force;  // 3N
  std::vector<double> vatom;  // 9N, same component order as virial (empty if not requested)
  std::vector<double> descriptor;  // N x dim, raw (unscaled) q, only if requested
};

class Calculator {
 public:
  // Requires Kokkos to be initialised (see KokkosSession) for as long as the Calculator lives.
  explicit Calculator(const Model& model, Precision precision = Precision::Double,
                      Backend backend = Backend::Device);
  ~Calculator();
  Calculator(const Calculator&) = delete;
  Calculator& operator=(const Calculator&) = delete;

  Prediction compute(const Structure& s, bool per_atom_virial = true, bool descriptors = false);
  const NeighborList& last_neighbor_list() const;
  double cutoff() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// RAII Kokkos initialisation for programs (threads <= 0: Kokkos default).
class KokkosSession {
 public:
  explicit KokkosSession(int threads = 0);
  ~KokkosSession();
  KokkosSession(const KokkosSession&) = delete;
  KokkosSession& operator=(const KokkosSession&) = delete;

 private:
  bool owns_ = false;
};

}  // namespace nep
