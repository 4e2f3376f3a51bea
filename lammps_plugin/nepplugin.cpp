/* lammps-nep plugin entry point: registers pair styles nep, nep/gpu (and the Kokkos variants). */

#include "lammpsplugin.h"
#include "version.h"

#include "atom.h"
#include "atom_vec.h"
#include "lammps.h"
#include "pair_nep.h"

using namespace LAMMPS_NS;

static Pair *nep_creator(LAMMPS *lmp)
{
  return new PairNEP(lmp, false);
}

// nep/gpu without Kokkos enabled in LAMMPS: the core on its own (default) Kokkos execution space
static Pair *nep_gpu_creator(LAMMPS *lmp)
{
  return new PairNEP(lmp, true);
}

extern "C" void lammpsplugin_init(void *lmp, void *handle, void *regfunc)
{
  lammpsplugin_t plugin;
  auto register_plugin = (lammpsplugin_regfunc) regfunc;
  plugin.version = LAMMPS_VERSION;
  plugin.style = "pair";
  plugin.author = "lammps-nep developers";
  plugin.handle = handle;

  plugin.name = "nep";
  plugin.info = "NEP (GPUMD nep.txt) pair style, lammps-nep core on the host";
  plugin.creator.v1 = (lammpsplugin_factory1 *) &nep_creator;
  (*register_plugin)(&plugin, lmp);

  plugin.name = "nep/gpu";
  plugin.info = "NEP pair style, lammps-nep core on the Kokkos default execution space";
  plugin.creator.v1 = (lammpsplugin_factory1 *) &nep_gpu_creator;
  (*register_plugin)(&plugin, lmp);
}
