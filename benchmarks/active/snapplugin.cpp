/* Benchmark helper (not part of nepplugin.so): registers LAMMPS's own `pair_style snap` (the ML-SNAP
   package's PairSNAP, compiled from the LAMMPS source tree by snap_plugin.sh) as a plugin, so a
   LAMMPS built without ML-SNAP can use a SNAP model as an expensive teacher for fix nep/train. */

#include "lammpsplugin.h"
#include "version.h"

#include "pair_snap.h"

using namespace LAMMPS_NS;

static Pair *snap_creator(LAMMPS *lmp)
{
  return new PairSNAP(lmp);
}

extern "C" void lammpsplugin_init(void *lmp, void *handle, void *regfunc)
{
  lammpsplugin_t plugin;
  auto register_plugin = (lammpsplugin_regfunc) regfunc;
  plugin.version = LAMMPS_VERSION;
  plugin.style = "pair";
  plugin.name = "snap";
  plugin.info = "pair_style snap of LAMMPS's ML-SNAP package, loaded as a plugin (lammps-nep benchmarks)";
  plugin.author = "LAMMPS developers (ML-SNAP); plugin wrapper: lammps-nep";
  plugin.creator.v1 = (lammpsplugin_factory1 *) &snap_creator;
  plugin.handle = handle;
  (*register_plugin)(&plugin, lmp);
}
