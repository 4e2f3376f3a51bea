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
  // charge models (qNEP): the per-atom charges after the mean is removed (e), and, if requested,
  // the Born effective charges (9 per atom, row-major, NEP_CPU's: sqrt(eps_inf) (q_i I + pair part))
  std::vector<double> charge;
  std::vector<double> bec;
};

// Dipole and polarizability models (docs/model_kinds.md): the model's raw output, no unit
// conversion (the units of its training labels).
struct TensorPrediction {
  bool dipole = true;              // false: polarizability
  double total[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};  // dipole: x y z; polarizability: row-major 3x3
  std::vector<double> per_atom;    // 9 per atom (dipole: x y z then zeros); pair terms on the neighbour
};

// How the forces of a charge model treat the charges' mean removal (docs/model_kinds.md):
// Exact: the gradient of the energy (GPUMD's forces); NepCpu: without the mean term's derivative,
// as NEP_CPU computes them (not the gradient of its own energy; for comparisons only).
enum class ChargeForces { Exact, NepCpu };

class Calculator {
 public:
  // Requires Kokkos to be initialised (see KokkosSession) for as long as the Calculator lives.
  explicit Calculator(const Model& model, Precision precision = Precision::Double,
                      Backend backend = Backend::Device);
  ~Calculator();
  Calculator(const Calculator&) = delete;
  Calculator& operator=(const Calculator&) = delete;

  // Potentials and charge models: energy, forces, virials (charge models: with the electrostatics
  // NEP_CPU and GPUMD define, and the charges). Throws for dipole/polarizability models.
  Prediction compute(const Structure& s, bool per_atom_virial = true, bool descriptors = false);
  // Dipole and polarizability models only.
  TensorPrediction compute_tensor(const Structure& s);
  // charge models: the Born effective charges too (compute), and which forces (default Exact)
  void set_charge_options(bool born_charges, ChargeForces forces = ChargeForces::Exact);
  // charge models: the reciprocal sum's k-sphere radius (in units of NEP_CPU's, 1) and 2 pi exact
  // instead of NEP_CPU's 6.2831853 (coulomb.hpp's ChargeSetup)
  void set_ewald(double kmax_factor, bool exact_two_pi);
  // the device kernels (two passes) on a host backend too, for tests (Evaluator::force_two_pass)
  void force_two_pass(bool on);
  const Model& model() const;
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
