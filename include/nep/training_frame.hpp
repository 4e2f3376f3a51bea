// A labelled structure as GPUMD's train.xyz holds it, and its strict extended-XYZ reader/writer.
//
// GPUMD conventions (main_nep/structure.cu): Lattice is mandatory; energy = total energy (eV);
// virial = 9 components of the total virial (eV, LAMMPS sign: W = -dE/dstrain); stress (eV/A^3)
// gives virial = -stress * volume; when both are present virial wins; weight (default 1) and
// config_type are optional; per-atom species, pos and force (or forces) columns, and an optional
// force_weight:R:1 column (lammps-nep's, with a force column only; finite, >= 0). Keys are
// case-insensitive.
#pragma once
#include <string>
#include <vector>

namespace nep {

struct TrainingFrame {
  std::vector<std::string> species;  // N
  std::vector<double> pos;           // 3N
  double cell[9] = {0};              // rows a, b, c
  bool pbc[3] = {true, true, true};
  bool has_energy = false;
  double energy = 0.0;
  bool has_virial = false;
  double virial[9] = {0};            // row-major, LAMMPS/GPUMD sign
  bool has_forces = false;
  std::vector<double> forces;        // 3N
  // per-atom weights of the force labels (N; empty: every atom 1). 0 masks an atom's force: a
  // frame carved around uncertain atoms labels only its core (fix nep/train carve)
  std::vector<double> force_weight;
  double weight = 1.0;
  std::string config_type;
  int source_line = 0;               // line of the atom-count line in the file read

  int natoms() const { return static_cast<int>(species.size()); }
  double force_weight_of(int i) const { return force_weight.empty() ? 1.0 : force_weight[static_cast<size_t>(i)]; }
  // atoms whose force is a label (weight > 0): the force RMSE and the loss average over these
  int force_labelled_atoms() const {
    if (!has_forces) return 0;
    if (force_weight.empty()) return natoms();
    int n = 0;
    for (double w : force_weight) n += w > 0.0 ? 1 : 0;
    return n;
  }
  double volume() const;
};

// Strict: a missing Lattice, malformed label, force column of the wrong width, non-positive or
// non-finite weight, or bad number is an error naming file and line.
std::vector<TrainingFrame> read_training_xyz(const std::string& path);
std::vector<TrainingFrame> parse_training_xyz(const std::string& text, const std::string& name);
// Writes energy=, virial="..." (never stress), weight= (when != 1), config_type=, force columns
// when present (force_weight when non-empty); numbers in shortest exact form, so read(write(frames)) == frames.
std::string format_training_xyz(const std::vector<TrainingFrame>& frames);
void write_training_xyz(const std::string& path, const std::vector<TrainingFrame>& frames);

}  // namespace nep
