// Frames carved out of a large system around chosen centre atoms (fix nep/train ... carve).
//
// The NEP force on atom i depends on the descriptors of i and of its neighbours j (r_ij < rc),
// and those on the neighbours of j: on every atom within 2 rc of i. A region that holds every atom
// within core + 2 rc of its centre therefore gives each atom within `core` of the centre the same
// NEP force as the whole system does. Those atoms' forces are the labels (weight 1); the others
// are there for their environment only (weight 0); the region has no energy or virial label.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nep/training_frame.hpp"

namespace nep {

// Radius of the region carved around a centre: core + 2 cutoff (cutoff: the model's largest)
double carve_outer_radius(double core, double cutoff);

// d -> its minimum image under the cell (rows a, b, c) along the periodic directions (fractional
// rounding; the cell's inverse computed once). Unique for |d| < carve_fits's bound.
class MinimumImage {
 public:
  MinimumImage(const double cell[9], const bool pbc[3]);
  void apply(double d[3]) const;

 private:
  double h_[9] = {0}, inv_[9] = {0};
  bool pbc_[3];
};
void minimum_image(const double cell[9], const bool pbc[3], double d[3]);

// Whether a sphere of `radius` holds at most one image of each atom: radius below half the
// cell's thickness along every periodic direction
bool carve_fits(const double cell[9], const bool pbc[3], double radius);

// One atom of a carved region: its displacement from the centre (minimum image), element, the
// teacher's force, and an order key (LAMMPS atom ID, or the index in the frame)
struct CarvedAtom {
  int64_t key = 0;
  std::string species;
  double d[3] = {0, 0, 0};
  double f[3] = {0, 0, 0};
};

// The region as a frame: atoms in key order, open boundaries (a box 2 outer + 1 A wide, the
// centre in its middle), force weight 1 within `core` of the centre and 0 beyond, forces only.
TrainingFrame carved_frame(std::vector<CarvedAtom> atoms, double core, double outer);

// Serial carving of a frame with forces around its atom `centre` (tests, tools). Throws when the
// region does not fit the cell (carve_fits).
TrainingFrame carve_frame(const TrainingFrame& full, int centre, double core, double cutoff);

}  // namespace nep
