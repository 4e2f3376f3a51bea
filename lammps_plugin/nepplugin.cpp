/* lammps-nep plugin entry point: registers pair styles nep, nep/gpu (and the Kokkos variants). */

#include "lammpsplugin.h"
#include "version.h"

#include "atom.h"
#include "atom_vec.h"
#include "lammps.h"
#include "pair_nep.h"
#ifdef NEP_PLUGIN_TRAIN
#include "fix_nep_train.h"
#endif
#ifdef NEP_PLUGIN_KOKKOS
#include "pair_nep_kokkos.h"
#endif

using namespace LAMMPS_NS;

static Pair *nep_creator(LAMMPS *lmp)
{
  return new PairNEP(lmp, "nep");
}

// nep/gpu: with Kokkos enabled in LAMMPS (-k on) and a Kokkos atom style, the Kokkos class on
// LAMMPS's device data (the GPU in a CUDA build); otherwise the same host evaluation as nep
static Pair *nep_gpu_creator(LAMMPS *lmp)
{
#ifdef NEP_PLUGIN_KOKKOS
  if (lmp->kokkos && lmp->atom->avec && lmp->atom->avec->kokkosable)
    return new PairNEPKokkos<LMPDeviceType>(lmp);
#endif
  return new PairNEP(lmp, "nep/gpu");
}

#ifdef NEP_PLUGIN_TRAIN
static Fix *nep_train_creator(LAMMPS *lmp, int argc, char **argv)
{
  return new FixNEPTrain(lmp, argc, argv);
}
#endif

#ifdef NEP_PLUGIN_KOKKOS
static Pair *nep_kk_creator(LAMMPS *lmp)
{
  return new PairNEPKokkos<LMPDeviceType>(lmp);
}

static Pair *nep_kk_host_creator(LAMMPS *lmp)
{
#ifdef LMP_KOKKOS_GPU
  return new PairNEPKokkos<LMPHostType>(lmp);
#else
  return new PairNEPKokkos<LMPDeviceType>(lmp);
#endif
}
#endif

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
  plugin.info = "NEP pair style: on LAMMPS's Kokkos data under -k on (GPU in a CUDA build), else as nep on the host";
  plugin.creator.v1 = (lammpsplugin_factory1 *) &nep_gpu_creator;
  (*register_plugin)(&plugin, lmp);

#ifdef NEP_PLUGIN_KOKKOS
  // KOKKOS-package styles (-sf kk / suffix kk); need LAMMPS started with -k on
  plugin.name = "nep/kk";
  plugin.info = "NEP pair style on LAMMPS's Kokkos data (KOKKOS package)";
  plugin.creator.v1 = (lammpsplugin_factory1 *) &nep_kk_creator;
  (*register_plugin)(&plugin, lmp);
  plugin.name = "nep/kk/device";
  (*register_plugin)(&plugin, lmp);
  plugin.name = "nep/kk/host";
  plugin.creator.v1 = (lammpsplugin_factory1 *) &nep_kk_host_creator;
  (*register_plugin)(&plugin, lmp);
  plugin.name = "nep/gpu/kk";
  plugin.info = "NEP pair style nep/gpu under -sf kk (same as nep/kk)";
  plugin.creator.v1 = (lammpsplugin_factory1 *) &nep_kk_creator;
  (*register_plugin)(&plugin, lmp);
#endif

#ifdef NEP_PLUGIN_TRAIN
  plugin.style = "fix";
  plugin.name = "nep/train";
  plugin.info = "on-the-fly NEP training from the running pair style";
  plugin.creator.v2 = (lammpsplugin_factory2 *) &nep_train_creator;
  (*register_plugin)(&plugin, lmp);
#endif
}
