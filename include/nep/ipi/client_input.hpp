// The structure a client program of pair_style ipi was started from, read from its input file, so
// that the atom order and species, which the i-PI protocol does not carry, can be checked against
// LAMMPS's before the first frame is used: a Quantum ESPRESSO pw.x input (ATOMIC_SPECIES,
// ATOMIC_POSITIONS, CELL_PARAMETERS with ibrav = 0) or an extended XYZ file (species, pos).
#pragma once
#include <array>
#include <string>
#include <vector>

namespace nep {
namespace ipi {

struct ClientInput {
  std::string file;
  std::vector<std::string> species;   // element of each atom, in the file's order
  std::vector<int> lines;             // the line each atom is given on
  bool has_positions = false;         // positions and cell could be converted to Angstrom
  std::vector<double> positions;      // 3 per atom, Angstrom
  std::array<double, 9> cell{};       // rows a, b, c (Angstrom), when has_positions
  // a pw.x input without nosym = .true.: pw.x finds the symmetry of its input's positions once and
  // symmetrizes the density and forces of every later call with it (wrong when the atoms move off it)
  bool pw_uses_symmetry = false;
};

// Throws nep::Error "file:line: message" for what it cannot read
ClientInput read_client_input(const std::string& path);
ClientInput parse_pw_input(const std::string& text, const std::string& name);

// The element a QE species label stands for ("Si", "Si1", "si_a" -> "Si"); "" when none
std::string element_of_label(const std::string& label);

}  // namespace ipi
}  // namespace nep
