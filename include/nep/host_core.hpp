// The core on the host behind a plain-pointer interface (no Kokkos in this header), for callers
// that hold host arrays: the LAMMPS pair styles nep, and nep/gpu when LAMMPS runs without -k on.
// It runs on Kokkos's OpenMP backend (Serial in a build without OpenMP); positions, forces and
// energies are used in place. The GPU path is LAMMPS's KOKKOS package (pair_nep_kokkos).
#pragma once
#include <memory>

#include "nep/energy_virial.hpp"
#include "nep/model.hpp"

namespace nep {

class HostCore {
 public:
  HostCore(const Model& model, bool single_precision);
  ~HostCore();
  HostCore(const HostCore&) = delete;
  HostCore& operator=(const HostCore&) = delete;

  // Atoms ilist[0..inum) with LAMMPS-style ragged full neighbour lists (firstneigh[i][0..numneigh[i])).
  // x: nall*3 contiguous; model_type: nall (-1 = not handled). Adds forces into f (nall*3). If
  // eatom is non-null writes eatom[i]; if w9 is non-null adds per-atom virials (nall*9, row-major).
  EnergyVirial compute(int inum, const int* ilist, int nall, const double* x, const int* model_type,
                       const int* numneigh, int* const* firstneigh, double* f, double* eatom, double* w9);

  // ---- the other model kinds (docs/model_kinds.md), same list conventions ----
  ModelKind kind() const;
  // qNEP stage 1: short-range per-atom energy (eatom[i], if non-null) and the raw network charge
  // charge[i] (array of nall) of atoms ilist[0..inum); returns the short-range energy.
  double compute_charges(int inum, const int* ilist, int nall, const double* x, const int* model_type,
                         const int* numneigh, int* const* firstneigh, double* eatom, double* charge);
  // qNEP stage 2 on the lists and positions of the last compute_charges: adds the forces (nall*3)
  // and per-atom virials (w9, nall*9, if non-null) of sum_i U_i + phi[i] Q_i.
  EnergyVirial compute_charge_forces(const double* phi, double* f, double* w9);
  // Dipole / polarizability models: adds the per-atom tensors into t9 (nall*9, row-major; each
  // pair's term on the neighbour, to be folded from ghosts to owners; the polarizability's scalar on
  // the atom's own diagonal) and returns the totals in .virial (dipole: components 0..2).
  EnergyVirial compute_tensor(int inum, const int* ilist, int nall, const double* x, const int* model_type,
                              const int* numneigh, int* const* firstneigh, double* t9);

  const char* space_name() const;
  double memory_bytes() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Initialise Kokkos if nobody has (LAMMPS without -k on); finalised at process exit.
void ensure_kokkos_initialized();

}  // namespace nep
