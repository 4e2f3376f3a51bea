// Totals returned by one evaluation of the core.
#pragma once

namespace nep {

struct EnergyVirial {
  double energy = 0.0;
  double virial[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};  // row-major r^a f^b (LAMMPS sign), eV
};

}  // namespace nep
