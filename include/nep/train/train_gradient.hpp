// Parameter gradients of the NEP loss, exact, without a second copy of the forces.
//
// The trainer's loss is L = sum_frames [ a_E E + sum_k (force terms) + sum_ab (virial terms) ]
// with E, F, W from the core (nep::Evaluator). Its parameter gradient needs dE/dtheta and the
// mixed second derivatives d/dtheta (dE/dr). For given residual weights
//   delta_k = dL/dF_k (per atom, 3 comps),  Delta_ab = dL/dW_ab,  wE = dL/dE,
// the force and virial parts combine into one directional derivative of E:
//   sum_k delta_k . dF_k/dtheta + sum_ab Delta_ab dW_ab/dtheta = -d/dtheta Phi,
//   Phi = d/dt E(pair vectors r_ij + t u_ij) at t = 0,   u_ij = delta_j - delta_i + Delta^T r_ij
// (F_k = -dE/dr_k, W_ab = -sum_ij r_ij^a dU_i/dr_ij^b). So
//   dL/dtheta = wE dE/dtheta - dPhi/dtheta,
// computed by running the reverse-mode parameter gradient of E in dual numbers (value, d/dt)
// whose tangent is seeded by u_ij: the value part is dE/dtheta, the tangent part dPhi/dtheta.
// ZBL has no parameters and is left out of the gradient; forward() adds the frame's ZBL totals
// cached in the PairBasis (computed by the core).
//
// Both passes read the frame's parameter-independent basis (pair_basis.hpp) instead of
// re-evaluating the Chebyshev basis and angular entries of every pair each epoch. forward() is a
// second implementation of the core's energy/force/virial for training; ctest holds it equal to
// nep::Evaluator to 1e-10 relative (tests/test_train_gradient.cpp), and the trainer's validation
// and outputs still come from the core.
//
// Trainable parameters theta = [model.ann without the shared b1 (solved analytically), model.c],
// in nep.txt order (see model.hpp). NEP3 and NEP4 are supported.
#pragma once
#include <vector>

#include "nep/model.hpp"
#include "nep/pair_basis.hpp"

namespace nep {

// theta <-> model (b1 and q_scaler are not part of theta)
int num_trainable_parameters(const Model& m);
void get_trainable_parameters(const Model& m, double* theta);
void set_trainable_parameters(Model& m, const double* theta);

class GradientKernel {
 public:
  explicit GradientKernel(const Model& m);  // copies the model's parameters

  // Per-thread scratch (allocate one per worker).
  struct Scratch {
    std::vector<double> Bd, sv, sd, Gv, Gd, pair_dd, pair_rd, pair_Yd, pair_g, gA, cF;
    std::vector<double> qv, qd, qsv, qsd, Fpv, Fpd;  // per descriptor component
    std::vector<double> z, zd, hv, hd, ha;            // per neuron
    std::vector<double> gwp;                          // first-layer gradient, rows padded
  };

  // Adds wE dE/dtheta - dPhi/dtheta of the local atoms i in [i0, i1) of the frame into grad
  // (size num_trainable_parameters). delta: 3*nlocal, indexed by owner; Delta: 9 (row-major
  // dL/dW_ab) or nullptr. e_nn and phi (if non-null) receive the network energy (no ZBL) of
  // those atoms and their share of Phi, for checks against the core.
  void accumulate(const PairBasis& pb, int i0, int i1, double wE, const double* delta, const double* Delta,
                  double* grad, Scratch& scratch, double* e_nn = nullptr, double* phi = nullptr) const;

  // Energy, virial (row-major, 9) and forces on the nlocal atoms (3*nlocal, overwritten) of the
  // whole frame, ZBL included: the core's results from the cached basis.
  void forward(const PairBasis& pb, double& energy, double* virial, double* force, Scratch& scratch) const;

  int num_parameters() const { return P_; }

 private:
  Model m_;
  int T_, D_, Dp_, H_, Hp_, n_nets_, NR_, NA_, NAp_, KR_, KA_, L3_, S_, P_, ann_stride_, n_ann_, n_cR_;
  bool q222_, q1111_;
  std::vector<double> rcR_, rcA_;  // per type pair
  std::vector<double> c3b_;
  std::vector<double> cAt_;      // angular c_nk(ti,tj) repacked [ti*T + tj][k][n], n padded to NAp_ (zeros)
  std::vector<double> w0t_;      // first-layer weights transposed per type [t][d*Hp + h], h padded to Hp_ (zeros)
  std::vector<double> w0p_;      // first-layer weights per type [t][h*Dp + d], d padded to Dp_ (zeros)
};

}  // namespace nep
