// Periodic-table facts used by NEP models: symbols H..Pu (the 94 elements GPUMD accepts) and the
// covalent radii GPUMD uses for the typewise ZBL cutoff.
#pragma once
#include <string>

namespace nep {

constexpr int kNumElements = 94;

// Atomic number (1..94) of an element symbol, or 0 if unknown.
int atomic_number(const std::string& symbol);
// Symbol of atomic number z (1..94).
const char* element_symbol(int z);
// Covalent radius (Angstrom) of atomic number z, as tabulated by GPUMD for typewise ZBL.
double covalent_radius(int z);

}  // namespace nep
