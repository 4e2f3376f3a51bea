/* -*- c++ -*- ----------------------------------------------------------
   lammps-nep: the internal fix NEP_CHARGE of pair_style nep with a charge model and a kspace style
   (pair_nep_charge.cpp). After the kspace solver has run and before the ghost forces are
   communicated (pre_reverse) it lets the pair style finish the step's forces, and it asks LAMMPS
   for per-atom energies on every step (an internal compute pe/atom scheduled one step ahead), so
   that the kspace solver's per-atom energies give dE/dq. Created and deleted by the pair style.
------------------------------------------------------------------------- */
#ifndef LMP_NEP_FIX_NEP_CHARGE_H
#define LMP_NEP_FIX_NEP_CHARGE_H

#include "fix.h"

namespace LAMMPS_NS {

class PairNEP;

class FixNEPCharge : public Fix {
 public:
  FixNEPCharge(class LAMMPS *, int, char **);
  int setmask() override;
  void attach(PairNEP *pair, class Compute *pe);
  void setup_pre_reverse(int, int) override;
  void pre_reverse(int, int) override;
  void min_pre_reverse(int, int) override;

 private:
  PairNEP *pair = nullptr;
  class Compute *pe = nullptr;
  void finish();
};

}    // namespace LAMMPS_NS

#endif
