/* -*- c++ -*- ----------------------------------------------------------
   lammps-nep: what pair_style nep keeps of a charge model's step (pair_nep_charge.cpp)
------------------------------------------------------------------------- */
#ifndef LMP_NEP_PAIR_NEP_CHARGE_H
#define LMP_NEP_PAIR_NEP_CHARGE_H

#include "pair_nep.h"

#include "nep/coulomb.hpp"

#include <string>
#include <vector>

namespace LAMMPS_NS {

struct PairNEP::ChargeState {
  nep::ChargeSetup setup;          // the model's electrostatics (alpha = pi / rc, exact 2 pi in LAMMPS)
  std::string fix_id, compute_id;  // the internal fix NEP_CHARGE and compute pe/atom (modes 1, 2)
  bool kspace = false;             // a kspace style gives the reciprocal part (else the built-in sum)
  double g_ewald = 0.0;            // the splitting parameter of the real-space and self terms
  std::vector<double> raw, phi;    // per atom (all): network charge Q, dE/dq
  std::vector<int> model_atoms;    // local atoms of the model (ilist order)
  bool pending = false;            // stage 2 waits for finish_charge_step()
  bool reinit_kspace = false;      // the solver was sized for zero charges: again with the model's
  bool want_w9 = false;
};

}    // namespace LAMMPS_NS

#endif
