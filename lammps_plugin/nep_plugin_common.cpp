#include "nep_plugin_common.h"

#include "domain.h"
#include "error.h"
#include "lammps.h"
#include "update.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <cstring>

namespace nep_lmp {

std::string bcast_string(std::string s, MPI_Comm world)
{
  long long n = static_cast<long long>(s.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, world);
  s.resize(static_cast<size_t>(n));
  if (n) MPI_Bcast(&s[0], static_cast<int>(n), MPI_CHAR, 0, world);
  return s;
}

void wait_for_root(MPI_Comm world)
{
#ifndef MPI_STUBS
  int me = 0, nprocs = 1;
  MPI_Comm_rank(world, &me);
  MPI_Comm_size(world, &nprocs);
  int token = 0;
  constexpr int kTag = 7201;
  if (me == 0) {
    for (int r = 1; r < nprocs; ++r) MPI_Send(&token, 1, MPI_INT, r, kTag, world);
    return;
  }
  MPI_Request req;
  MPI_Irecv(&token, 1, MPI_INT, 0, kTag, world, &req);
  for (int done = 0;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
#else
  (void) world;
#endif
}

std::vector<double> gather_to_root(const std::vector<double> &mine, MPI_Comm world, std::vector<int> &counts,
                                   std::vector<int> &displs)
{
  int me = 0, nprocs = 1;
  MPI_Comm_rank(world, &me);
  MPI_Comm_size(world, &nprocs);
  int n = static_cast<int>(mine.size());
  counts.assign(nprocs, 0);
  displs.assign(nprocs, 0);
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, world);
  std::vector<double> all;
  if (me == 0) {
    int total = 0;
    for (int r = 0; r < nprocs; ++r) {
      displs[r] = total;
      total += counts[r];
    }
    all.resize(total);
  }
  // (a copy: LAMMPS's STUBS MPI takes a non-const send buffer)
  std::vector<double> send(mine);
  MPI_Gatherv(send.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, world);
  return all;
}

void cell_rows(const LAMMPS_NS::Domain *domain, double h[9], bool pbc[3])
{
  const double rows[9] = {domain->xprd, 0, 0, domain->xy, domain->yprd, 0, domain->xz, domain->yz, domain->zprd};
  std::copy(rows, rows + 9, h);
  pbc[0] = domain->xperiodic;
  pbc[1] = domain->yperiodic;
  pbc[2] = domain->zperiodic;
}

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
