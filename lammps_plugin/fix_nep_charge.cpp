/* ----------------------------------------------------------------------
   lammps-nep: internal fix NEP_CHARGE (fix_nep_charge.h)
------------------------------------------------------------------------- */

#include "fix_nep_charge.h"

#include "compute.h"
#include "error.h"
#include "pair_nep.h"
#include "update.h"

using namespace LAMMPS_NS;
using namespace FixConst;

FixNEPCharge::FixNEPCharge(LAMMPS *lmp, int narg, char **arg) : Fix(lmp, narg, arg)
{
  if (narg != 3) error->all(FLERR, "fix NEP_CHARGE is internal to pair_style nep (charge models); it takes no arguments");
}

int FixNEPCharge::setmask()
{
  return PRE_REVERSE | MIN_PRE_REVERSE;
}

void FixNEPCharge::attach(PairNEP *p, Compute *c)
{
  pair = p;
  pe = c;
}

// the pair style's stage 2, then per-atom energies again on the next step
void FixNEPCharge::finish()
{
  if (!pair) error->all(FLERR, "fix {} (NEP_CHARGE) has no pair style: it is internal to pair_style nep", id);
  pair->finish_charge_step();
  if (pe) pe->addstep(update->ntimestep + 1);
}

void FixNEPCharge::setup_pre_reverse(int, int)
{
  finish();
}

void FixNEPCharge::pre_reverse(int, int)
{
  finish();
}

void FixNEPCharge::min_pre_reverse(int, int)
{
  finish();
}
