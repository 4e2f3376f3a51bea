#include "nep_plugin_common.h"

#include "error.h"
#include "fix.h"
#include "lammps.h"
#include "neigh_request.h"
#include "neighbor.h"
#include "update.h"

#include <cstdio>
#include <cstring>

namespace nep_lmp {

std::string join(const std::vector<std::string> &words)
{
  std::string s;
  for (const auto &w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

std::string json_escape(const std::string &s)
{
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

void error_one(LAMMPS_NS::LAMMPS *lmp, const char *file, int line, const std::string &msg)
{
  int me = 0;
  MPI_Comm_rank(lmp->world, &me);
  fprintf(stderr, "ERROR on proc %d: %s\n", me, msg.c_str());
  lmp->error->one(file, line, msg);
}

void request_full_list(LAMMPS_NS::LAMMPS *lmp, LAMMPS_NS::Fix *fix, int instance_me)
{
#if defined(NEP_LAMMPS_VERSION) && NEP_LAMMPS_VERSION >= 20220324    // NeighRequest fields protected
  lmp->neighbor->add_request(fix, LAMMPS_NS::NeighConst::REQ_FULL);
#else
  const int irequest = lmp->neighbor->request(fix, instance_me);
  lmp->neighbor->requests[irequest]->pair = 0;
  lmp->neighbor->requests[irequest]->fix = 1;
  lmp->neighbor->requests[irequest]->half = 0;
  lmp->neighbor->requests[irequest]->full = 1;
#endif
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
  // LAMMPS order: vatom xx yy zz xy xz yz; cvatom adds yx zx zy (w9 is row-major r^a f^b)
  static const int from[9] = {0, 4, 8, 1, 2, 5, 3, 6, 7};
  for (int i = 0; i < n; ++i) {
    const double *w = w9 + 9 * static_cast<long>(i);
    if (vatom)
      for (int k = 0; k < 6; ++k) vatom[i][k] += w[from[k]];
    if (cvatom)
      for (int k = 0; k < 9; ++k) cvatom[i][k] += w[from[k]];
  }
}

}    // namespace nep_lmp
