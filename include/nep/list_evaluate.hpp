// The core on a standalone neighbour list (nep/neighbor.hpp), in place on the host: the list's
// arrays are wrapped, not copied, and forces on images are folded onto their nlocal owners.
// Used where host code holds a NeighborList (the trainer's validation and descriptors, the ZBL
// part of a pair basis); Calculator copies to any backend instead.
#pragma once
#include <Kokkos_Core.hpp>
#include <vector>

#include "nep/energy_virial.hpp"
#include "nep/evaluator.hpp"
#include "nep/neighbor.hpp"

namespace nep {

using SerialEvaluator = Evaluator<Kokkos::Serial, double>;

// Energy and virial of the list's local atoms; force_owners (resized to 3*nlocal) receives the
// forces folded onto owners; q (nlocal x dim, if non-null) the raw descriptors.
EnergyVirial evaluate_list(SerialEvaluator& ev, const NeighborList& nl, std::vector<double>& force_owners,
                           double* q = nullptr);

}  // namespace nep
