/* lammps-nep plugin entry point: registers pair styles nep, nep/gpu (and the Kokkos variants). */

#include "lammpsplugin.h"
#include "version.h"

#include "atom.h"
#include "atom_vec.h"
#include "error.h"
#include "info.h"
#include "lammps.h"
#include "library.h"
#include "compute_nep_tensor.h"
#include "fix_nep_charge.h"
#include "pair_ipi.h"
#include "pair_nep.h"
#include "utils.h"
#ifdef NEP_PLUGIN_TRAIN
#include <dlfcn.h>
#endif
#ifdef NEP_PLUGIN_KOKKOS
#include "pair_nep_kokkos.h"
#endif

#include <cstring>
#include <string>

using namespace LAMMPS_NS;

#ifdef NEP_PLUGIN_KOKKOS
// error->all unless the KOKKOS-package class can run: LAMMPS started with -k on (else Kokkos is not
// initialised and the first view fails with Kokkos's own message), and the KOKKOS package in double
// precision (from 10Sep2025 LAMMPS may be built with KOKKOS_PREC single or mixed; the plugin reads
// x and writes f as double). The "precision" query exists in every LAMMPS from 29Sep2021 on.
static void require_kokkos(LAMMPS *lmp, const char *style)
{
  if (!lmp->kokkos)
    lmp->error->all(FLERR, "Pair style {} needs LAMMPS's KOKKOS package enabled: run LAMMPS with -k on "
                    "(e.g. lmp -k on t 4 -sf kk), or use pair style nep without it", style);
  if (!Info::has_accelerator_feature("KOKKOS", "precision", "double"))
    lmp->error->all(FLERR, "Pair style {} needs LAMMPS's KOKKOS package in double precision; this LAMMPS "
                    "was built with KOKKOS_PREC single or mixed. Use pair style nep (without -sf kk)", style);
}
#endif

static Pair *ipi_creator(LAMMPS *lmp)
{
  return new PairIPI(lmp);
}

static Compute *nep_tensor_creator(LAMMPS *lmp, int argc, char **argv)
{
  return new ComputeNEPTensor(lmp, argc, argv);
}

static Fix *nep_charge_fix_creator(LAMMPS *lmp, int argc, char **argv)
{
  return new FixNEPCharge(lmp, argc, argv);
}

static Pair *nep_creator(LAMMPS *lmp)
{
  return new PairNEP(lmp, "nep");
}

// nep/gpu: with Kokkos enabled in LAMMPS (-k on) and a Kokkos atom style, the Kokkos class on
// LAMMPS's device data (the GPU in a CUDA build); otherwise the same host evaluation as nep
static Pair *nep_gpu_creator(LAMMPS *lmp)
{
#ifdef NEP_PLUGIN_KOKKOS
  if (lmp->kokkos && lmp->atom->avec && lmp->atom->avec->kokkosable) {
    require_kokkos(lmp, "nep/gpu");
    return new PairNEPKokkos<LMPDeviceType>(lmp);
  }
#endif
  return new PairNEP(lmp, "nep/gpu");
}

#ifdef NEP_PLUGIN_TRAIN
// fix nep/train lives in nepplugin_train.so beside this file, loaded on the first use of the fix:
// only decks that train pay for LibTorch and HDF5 (about 1.2 s and 150 MB per process to load).
// That library links this one, so it stays loaded (and this pointer valid) across `clear`.
using FixTrainFactory = Fix *(*) (LAMMPS *, int, char **);

static FixTrainFactory train_factory(LAMMPS *lmp)
{
  static FixTrainFactory factory = nullptr;
  if (factory) return factory;
  Dl_info self{};
  std::string path = "nepplugin_train.so";
  if (dladdr((void *) &train_factory, &self) && self.dli_fname) {
    const std::string here = self.dli_fname;
    const auto slash = here.rfind('/');
    if (slash != std::string::npos) path = here.substr(0, slash + 1) + path;
  }
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  const char *why = lib ? nullptr : dlerror();
  if (!lib)
    lmp->error->all(FLERR, "fix nep/train: cannot load {} (the trainer library that comes with "
                    "nepplugin.so): {}", path, why ? why : "unknown reason");
  auto found = (FixTrainFactory) dlsym(lib, "nep_fix_train_create");
  if (!found) lmp->error->all(FLERR, "fix nep/train: {} has no nep_fix_train_create", path);
  factory = found;
  return factory;
}

static Fix *nep_train_creator(LAMMPS *lmp, int argc, char **argv)
{
  return train_factory(lmp)(lmp, argc, argv);
}
#endif

#ifdef NEP_PLUGIN_KOKKOS
static Pair *nep_kk_creator(LAMMPS *lmp)
{
  require_kokkos(lmp, "nep/kk");
  return new PairNEPKokkos<LMPDeviceType>(lmp);
}

static Pair *nep_kk_host_creator(LAMMPS *lmp)
{
  require_kokkos(lmp, "nep/kk/host");
#ifdef LMP_KOKKOS_GPU
  return new PairNEPKokkos<LMPHostType>(lmp);
#else
  return new PairNEPKokkos<LMPDeviceType>(lmp);
#endif
}
#endif

// true when the running LAMMPS is the release this plugin was compiled against; else a warning
// naming both. Only calls whose form is the same in every release are used here (the leading
// members of class LAMMPS, the C library interface, Error::warning with a ready string), so the
// check itself works in another LAMMPS, as far as that LAMMPS resolves the plugin's symbols at all.
static bool same_lammps(LAMMPS *lmp)
{
  const int running = utils::date2num(lmp->version);
  if (running == NEP_LAMMPS_VERSION) return true;
  if (lammps_extract_setting(lmp, "world_rank") == 0)
    lmp->error->warning(FLERR, std::string("nepplugin.so was built for LAMMPS ") + LAMMPS_VERSION + " (" +
                                   std::to_string(NEP_LAMMPS_VERSION) + ") but this is LAMMPS " + lmp->version +
                                   " (" + std::to_string(running) + "): its styles are not registered. Rebuild "
                                   "lammps-nep against this LAMMPS (cmake -DLAMMPS_DIR=<its prefix>/lib/cmake/LAMMPS)");
  return false;
}

extern "C" void lammpsplugin_init(void *lmp, void *handle, void *regfunc)
{
  if (!same_lammps((LAMMPS *) lmp)) return;
  auto register_plugin = (lammpsplugin_regfunc) regfunc;
  // one style: pair styles take a factory of LAMMPS* (v1), computes and fixes of (LAMMPS*, argc, argv) (v2)
  auto add = [&](const char *style, const char *name, const char *info, void *factory) {
    lammpsplugin_t plugin;
    plugin.version = LAMMPS_VERSION;
    plugin.style = style;
    plugin.name = name;
    plugin.info = info;
    plugin.author = "lammps-nep developers";
    plugin.handle = handle;
    if (strcmp(style, "pair") == 0) plugin.creator.v1 = (lammpsplugin_factory1 *) factory;
    else plugin.creator.v2 = (lammpsplugin_factory2 *) factory;
    (*register_plugin)(&plugin, lmp);
  };
  add("pair", "nep", "NEP (GPUMD nep.txt) pair style, lammps-nep core on the host", (void *) &nep_creator);
  add("pair", "ipi", "forces of an external code (QE, CP2K, ASE, ...) over the i-PI socket protocol, LAMMPS as server",
      (void *) &ipi_creator);
  add("pair", "nep/gpu", "NEP pair style: on LAMMPS's Kokkos data under -k on (GPU in a CUDA build), else as nep on the host",
      (void *) &nep_gpu_creator);
#ifdef NEP_PLUGIN_KOKKOS
  // KOKKOS-package styles (-sf kk / suffix kk); need LAMMPS started with -k on
  add("pair", "nep/kk", "NEP pair style on LAMMPS's Kokkos data (KOKKOS package)", (void *) &nep_kk_creator);
  add("pair", "nep/kk/device", "NEP pair style on LAMMPS's Kokkos data (KOKKOS package)", (void *) &nep_kk_creator);
  add("pair", "nep/kk/host", "NEP pair style on LAMMPS's Kokkos data (KOKKOS package)", (void *) &nep_kk_host_creator);
  add("pair", "nep/gpu/kk", "NEP pair style nep/gpu under -sf kk (same as nep/kk)", (void *) &nep_kk_creator);
#endif
  add("compute", "nep/dipole", "dipole of a NEP dipole model (GPUMD nep*_dipole), per atom and in total",
      (void *) &nep_tensor_creator);
  add("compute", "nep/polarizability",
      "polarizability of a NEP polarizability model (GPUMD nep*_polarizability), per atom and in total",
      (void *) &nep_tensor_creator);
  add("fix", "NEP_CHARGE", "internal to pair_style nep with a charge model and a kspace style",
      (void *) &nep_charge_fix_creator);
#ifdef NEP_PLUGIN_TRAIN
  add("fix", "nep/train", "on-the-fly NEP training from the running pair style", (void *) &nep_train_creator);
#endif
}
