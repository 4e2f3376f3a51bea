// LAMMPS plugin entry point: registers NEP_CPU's PairNEP (brucefan1983/NEP_CPU,
// interface/lammps/USER-NEP) under the pair style name "nep/cpu", so it can run next to
// lammps-nep's own "nep" in one lmp binary for side-by-side checks and timings.
#include "lammpsplugin.h"
#include "version.h"

#include "pair_NEP.h"

using namespace LAMMPS_NS;

static Pair *nepcpu_creator(LAMMPS *lmp)
{
  return new PairNEP(lmp);
}

// Built with -fvisibility=hidden (LAMMPS dlopens plugins RTLD_GLOBAL and lammps-nep's
// nepplugin.so also exports LAMMPS_NS::PairNEP symbols): only this entry point is exported.
extern "C" __attribute__((visibility("default"))) void lammpsplugin_init(void *lmp, void *handle,
                                                                         void *regfunc)
{
  lammpsplugin_t plugin;
  lammpsplugin_regfunc register_plugin = (lammpsplugin_regfunc) regfunc;

  plugin.version = LAMMPS_VERSION;
  plugin.style = "pair";
  plugin.name = "nep/cpu";
  plugin.info = "NEP_CPU PairNEP as pair style nep/cpu (benchmarks only)";
  plugin.author = "NEP_CPU authors; plugin wrapper for lammps-nep benchmarks";
  plugin.creator.v1 = (lammpsplugin_factory1 *) &nepcpu_creator;
  plugin.handle = handle;
  (*register_plugin)(&plugin, lmp);
}
