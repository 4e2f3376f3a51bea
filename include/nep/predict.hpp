// nep-predict's pipeline as a library call: extended XYZ in, extended XYZ with NEP results out.
#pragma once
#include <string>

#include "nep/calculator.hpp"
#include "nep/xyz.hpp"

namespace nep {

// Map a frame's species to model types and fill a Structure (Lattice is mandatory, as in GPUMD).
Structure structure_from_frame(const XyzFrame& frame, const Model& model, const std::string& file);

// Evaluate every frame of in_path and write out_path with per-atom energies:R:1, forces:R:3,
// virials:R:9 (xx xy xz yx yy yz zx zy zz) and header energy= / virial="9 values"; charge models
// add charges:R:1 and bec:R:9 (Born effective charges); dipole models write header dipole="x y z"
// and atomic_dipole:R:3, polarizability models pol="9 values, row-major" and atomic_pol:R:9 instead.
// Returns the number of frames written.
int predict_xyz(Calculator& calc, const Model& model, const std::string& in_path, const std::string& out_path);

}  // namespace nep
