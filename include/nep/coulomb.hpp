// Electrostatics of NEP charge models (qNEP, docs/model_kinds.md): the real-space pair sums, the
// self term and the Ewald reciprocal sum as NEP_CPU and GPUMD define them, on plain host arrays.
//
// Every routine adds to its per-atom outputs and also returns phi_i = dE/dq_i (the electrostatic
// potential times K), which the caller feeds back into the network's charge derivative: the
// forces of E(x, q(x)) need sum_i phi_i dq_i/dx. Units: Angstrom, e, eV; K = 14.399645 eV A / e^2.
// Per-atom virials are row-major (xx xy xz yx yy yz zx zy zz), LAMMPS sign (sum of -r f).
#pragma once
#include <vector>

#include "nep/energy_virial.hpp"
#include "nep/model.hpp"
#include "nep/neighbor.hpp"

namespace nep {

constexpr double kCoulombK = 14.399645;  // e^2 / (4 pi eps0) in eV A, NEP_CPU's and GPUMD's value

// A charge model's electrostatics as NEP_CPU sets it up from the model alone (NEP_CPU
// src/nep.cpp: alpha = pi / rc_R,max; charge3's shift so that the pair function and its slope
// vanish at rc).
struct ChargeSetup {
  int mode = 0;       // Model::charge_mode
  double rc = 0.0;    // real-space cutoff: the largest radial cutoff
  double alpha = 0.0; // Ewald splitting parameter pi / rc (1/A)
  double A = 0.0, B = 0.0;  // charge3: erfc(alpha r)/r + A r + B
  // NEP_CPU's and GPUMD's Ewald sums write 2 pi as 6.2831853 (in the reciprocal vectors, the
  // k-vector bounds and the prefactor); exact_two_pi() switches to the exact value
  double two_pi = 6.2831853;
  void exact_two_pi();
  // radius of the k-sphere in units of two_pi alpha (NEP_CPU: 1, where exp(-k^2/4 alpha^2) is
  // exp(-pi^2) = 5e-5); larger values converge the reciprocal sum (comparisons with LAMMPS's kspace)
  double kmax_factor = 1.0;
};
ChargeSetup charge_setup(const Model& m);

// Real-space pair sum over a full neighbour list of local atoms i (indices into all atoms, as
// LAMMPS's), pairs with r < rc: mode 1 (and LAMMPS kspace): K q_i q_j erfc(alpha r)/r;
// mode 3: K q_i q_j (erfc(alpha r)/r + A r + B). Each (i, j) visit adds half the pair energy to
// eatom[i], the pair's whole force on i to f[i] (so no ghost forces: j's own visit gives j its
// force) and half the pair virial to vatom[i] (NEP_CPU's split); phi[i] += K q_j phi(r).
// q, x: all atoms; eatom, phi: indexed by i; f, vatom: by i (3 and 9 per atom); either may be null.
EnergyVirial coulomb_real_space(int mode, double alpha, double rc, double A, double B, int inum, const int* ilist,
                                const double* x, const double* q, const int* numneigh, const int* const* firstneigh,
                                double* f, double* eatom, double* vatom, double* phi);

// Self energy -K alpha/sqrt(pi) q_i^2 times `scale` (Ewald's self term: scale 1; to take it back
// out of a solver that includes it: -1) for atoms ilist[0..inum).
double coulomb_self(double alpha, double scale, int inum, const int* ilist, const double* q, double* eatom, double* phi);

// Ewald reciprocal sum (NEP_CPU's k-set: n1 >= 0 half space, |k| < two_pi alpha, weight
// G_k = 2 (two_pi / V) exp(-k^2 / 4 alpha^2) / k^2, E = K sum_k G_k |S(k)|^2).
struct EwaldKVectors {
  std::vector<double> k;  // 3 per vector
  std::vector<double> G;
  double alpha = 0.0;
  int size() const { return static_cast<int>(G.size()); }
};
EwaldKVectors ewald_kvectors(const ChargeSetup& s, const Cell& cell);
// S(k) = sum_j q_j exp(-i k.x_j) of n atoms: re, im (added to; sum across MPI ranks before the next call)
void ewald_structure_factor(const EwaldKVectors& kv, int n, const double* x, const double* q, double* re, double* im);
// Energies, potentials, forces and virials of n atoms from the total S(k); per-atom terms on the
// atom itself.
EnergyVirial ewald_reciprocal(const EwaldKVectors& kv, const double* re, const double* im, int n, const double* x,
                              const double* q, double* f, double* eatom, double* vatom, double* phi);

// The whole electrostatics of a charge model for one periodic structure with its neighbour list
// (images as ghosts), NEP_CPU's way: q are the local atoms' (mean-free) charges; x_local the
// positions as given (not re-wrapped: the k-sum with NEP_CPU's 2 pi is not exactly periodic).
// Per-atom outputs (n = nl.nlocal) are assigned.
struct Electrostatics {
  EnergyVirial total;
  std::vector<double> eatom, force, vatom, phi;
};
Electrostatics charge_model_electrostatics(const ChargeSetup& s, const NeighborList& nl, const Cell& cell,
                                           const std::vector<double>& x_local, const std::vector<double>& q);

}  // namespace nep
