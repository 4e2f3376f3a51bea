// The core behind a plain-pointer interface (no Kokkos in this header), for callers that hold host
// arrays: the non-Kokkos LAMMPS pair styles. Data are copied to the chosen execution space when it
// is not the host; on the host, positions/forces/energies are used in place.
#pragma once
#include <memory>

#include "nep/energy_virial.hpp"
#include "nep/model.hpp"

namespace nep {

enum class HostCoreSpace { Host, Default };  // Host: OpenMP (or Serial); Default: Kokkos default space

class HostCore {
 public:
  HostCore(const Model& model, bool single_precision, HostCoreSpace space);
  ~HostCore();
  HostCore(const HostCore&) = delete;
  HostCore& operator=(const HostCore&) = delete;

  // Atoms ilist[0..inum) with LAMMPS-style ragged full neighbour lists (firstneigh[i][0..numneigh[i])).
  // x: nall*3 contiguous; model_type: nall (-1 = not handled). Adds forces into f (nall*3). If
  // eatom is non-null writes eatom[i]; if w9 is non-null adds per-atom virials (nall*9, row-major).
  EnergyVirial compute(int inum, const int* ilist, int nall, const double* x, const int* model_type,
                       const int* numneigh, int* const* firstneigh, double* f, double* eatom, double* w9);

  const char* space_name() const;
  double memory_bytes() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Initialise Kokkos if nobody has (LAMMPS without -k on); finalised at process exit.
void ensure_kokkos_initialized();

}  // namespace nep
