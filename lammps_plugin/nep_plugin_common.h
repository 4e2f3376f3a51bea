/* lammps-nep: small helpers shared by the NEP pair styles (LAMMPS side only). */
#ifndef LMP_NEP_PLUGIN_COMMON_H
#define LMP_NEP_PLUGIN_COMMON_H

namespace LAMMPS_NS {
class LAMMPS;
class Fix;
class Domain;
}

#include <mpi.h>
#include <string>
#include <vector>

#include "nep/energy_virial.hpp"

namespace nep_lmp {

// error->one whose message survives: with LAMMPS_EXCEPTIONS (Debian's build) the abort that
// follows error->one does not flush a redirected screen or log, so the message is also written
// to stderr (unbuffered) first. For per-rank failures that the other ranks cannot know about.
[[noreturn]] void error_one(LAMMPS_NS::LAMMPS *lmp, const char *file, int line, const std::string &msg);

// rank 0's string (e.g. an error message, empty = fine) on every rank
std::string bcast_string(std::string s, MPI_Comm world);

// Every rank's `mine` concatenated in rank order on rank 0 (returned there; empty elsewhere);
// counts and displs (per rank, in doubles) are filled on rank 0. Collective.
std::vector<double> gather_to_root(const std::vector<double> &mine, MPI_Comm world, std::vector<int> &counts,
                                   std::vector<int> &displs);

// A barrier at which the other ranks sleep (1 ms polls) instead of spinning in MPI while rank 0 is
// busy (e.g. pair_style ipi waiting for a DFT code that may share their cores). Collective.
void wait_for_root(MPI_Comm world);

// The periodic cell as rows a, b, c (LAMMPS's h; the frames' and nep::MinimumImage's convention)
// and its periodic directions
void cell_rows(const LAMMPS_NS::Domain *domain, double h[9], bool pbc[3]);

// words joined by single spaces
std::string join(const std::vector<std::string> &words);

// s with JSON string escapes (quotes, backslashes, control characters), without the quotes
std::string json_escape(const std::string &s);

// error->all unless "units metal"
void check_units(LAMMPS_NS::LAMMPS *lmp, const char *style);

// Core per-atom virial w9 (row-major r^a f^b) -> LAMMPS vatom (xx yy zz xy xz yz) and
// cvatom (xx yy zz xy xz yz yx zx zy); either output may be null. Adds (LAMMPS zeroes them).
void store_peratom_virial(const double *w9, int n, double **vatom, double **cvatom);

// Add the core's totals to the pair's energy and 6-component virial (xx yy zz xy xz yz); null skips.
void tally_totals(const nep::EnergyVirial &ev, double *eng_vdwl, double *virial);

}    // namespace nep_lmp

#endif
