#include "nep_plugin_common.h"

#include "error.h"
#include "lammps.h"
#include "update.h"

#include <cstring>

namespace nep_lmp {

std::string join(const std::vector<std::string> &words)
{
  std::string s;
  for (const auto &w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

void check_units(LAMMPS_NS::LAMMPS *lmp, const char *style)
{
  if (strcmp(lmp->update->unit_style, "metal") != 0)
    lmp->error->all(FLERR, "Pair style {} requires 'units metal' (NEP models are in eV and Angstrom), not '{}'",
                    style, lmp->update->unit_style);
}

void tally_totals(const nep::EnergyVirial &ev, double *eng_vdwl, double *virial)
{
  if (eng_vdwl) *eng_vdwl += ev.energy;
  if (virial) {
    const int from[6] = {0, 4, 8, 1, 2, 5};
    for (int k = 0; k < 6; ++k) virial[k] += ev.virial[from[k]];
  }
}

void store_peratom_virial(const double *w9, int n, double **vatom, double **cvatom)
{
  for (int i = 0; i < n; ++i) {
    const double *w = w9 + 9 * static_cast<long>(i);
    if (vatom) {
      vatom[i][0] += w[0];
      vatom[i][1] += w[4];
      vatom[i][2] += w[8];
      vatom[i][3] += w[1];
      vatom[i][4] += w[2];
      vatom[i][5] += w[5];
    }
    if (cvatom) {
      cvatom[i][0] += w[0];
      cvatom[i][1] += w[4];
      cvatom[i][2] += w[8];
      cvatom[i][3] += w[1];
      cvatom[i][4] += w[2];
      cvatom[i][5] += w[5];
      cvatom[i][6] += w[3];
      cvatom[i][7] += w[6];
      cvatom[i][8] += w[7];
    }
  }
}

}    // namespace nep_lmp
