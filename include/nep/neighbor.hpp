// Standalone full neighbour list for a (possibly triclinic, possibly thin) periodic cell.
//
// Periodic images are materialised as ghost atoms appended after the N local atoms, exactly as
// LAMMPS does, so the evaluator sees one convention everywhere: neighbours index "all atoms"
// (local + ghost), r_ij = x[j] - x[i], and forces/virials on ghosts are folded back to their
// owners afterwards. Cells thinner than twice the cutoff simply get several image shells, and
// an atom can see images of itself.
#pragma once
#include <vector>

namespace nep {

struct Cell {
  double h[9] = {0};             // rows: lattice vectors a, b, c (Angstrom)
  bool pbc[3] = {true, true, true};
};

struct NeighborList {
  int nlocal = 0;
  int nall = 0;                  // local + ghost
  int max_neighbors = 0;         // row length of `neighbors`
  std::vector<double> x;         // nall * 3; locals wrapped into the cell, then ghosts
  std::vector<int> type;         // nall
  std::vector<int> owner;        // nall: local index each atom is an image of
  std::vector<int> num_neighbors;  // nlocal
  std::vector<int> neighbors;    // nlocal * max_neighbors, row-major, indices into all atoms
};

// Build the full list of all pairs (i local, j any) with |r_ij| < cutoff, j != i.
// Throws nep::Error for a singular cell or non-finite positions.
NeighborList build_neighbor_list(const std::vector<double>& x, const std::vector<int>& type,
                                 const Cell& cell, double cutoff);

}  // namespace nep
