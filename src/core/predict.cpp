#include "nep/predict.hpp"

#include <cstdio>
#include <fstream>

#include "nep/core/text_util.hpp"
#include "nep/error.hpp"

namespace nep {

Structure structure_from_frame(const XyzFrame& fr, const Model& model, const std::string& file) {
  if (!fr.has_lattice) throw file_error(file, fr.line + 1, "frame has no Lattice=\"...\" (GPUMD requires it)");
  Structure s;
  for (int k = 0; k < 9; ++k) s.cell.h[k] = fr.lattice[k];
  for (int k = 0; k < 3; ++k) s.cell.pbc[k] = fr.pbc[k];
  const XyzColumn* sp = fr.column("species");
  if (!sp || sp->kind != 'S' || sp->width != 1) throw file_error(file, fr.line + 1, "Properties has no species:S:1 column");
  const XyzColumn* pos = fr.column("pos");
  if (!pos || pos->kind != 'R' || pos->width != 3) throw file_error(file, fr.line + 1, "Properties has no pos:R:3 column");
  s.x = pos->values;
  s.type.resize(fr.natoms);
  for (int i = 0; i < fr.natoms; ++i) {
    const int t = model.type_of(sp->text[i]);
    if (t < 0) {
      std::string els;
      for (const auto& e : model.elements) els += " " + e;
      throw file_error(file, fr.line + 2 + i, "element '" + sp->text[i] + "' is not in the model (model elements:" + els + ")");
    }
    s.type[i] = t;
  }
  return s;
}

int predict_xyz(Calculator& calc, const Model& model, const std::string& in_path, const std::string& out_path) {
  const auto frames = read_xyz(in_path);
  std::string out;
  char buf[128];
  auto put = [&](double v) {
    std::snprintf(buf, sizeof buf, " %.15e", v);
    out += buf;
  };
  for (const auto& fr : frames) {
    const Structure s = structure_from_frame(fr, model, in_path);
    const Prediction p = calc.compute(s, true);
    out += std::to_string(fr.natoms) + "\nLattice=\"";
    for (int k = 0; k < 9; ++k) {
      std::snprintf(buf, sizeof buf, k ? " %.15e" : "%.15e", fr.lattice[k]);
      out += buf;
    }
    out += "\" Properties=species:S:1:pos:R:3:energies:R:1:forces:R:3:virials:R:9 energy=";
    std::snprintf(buf, sizeof buf, "%.15e", p.energy);
    out += buf;
    out += " virial=\"";
    for (int k = 0; k < 9; ++k) {
      std::snprintf(buf, sizeof buf, k ? " %.15e" : "%.15e", p.virial[k]);
      out += buf;
    }
    out += std::string("\" pbc=\"") + (fr.pbc[0] ? "T" : "F") + (fr.pbc[1] ? " T" : " F") + (fr.pbc[2] ? " T" : " F") + "\"\n";
    const auto& sp = fr.column("species")->text;
    for (int i = 0; i < fr.natoms; ++i) {
      out += sp[i];
      for (int d = 0; d < 3; ++d) put(s.x[3 * i + d]);
      put(p.eatom[i]);
      for (int d = 0; d < 3; ++d) put(p.force[3 * i + d]);
      for (int c = 0; c < 9; ++c) put(p.vatom[9 * i + c]);
      out += "\n";
    }
  }
  detail::write_text_file_atomic(out_path, out);  // never a half-written result
  return static_cast<int>(frames.size());
}

}  // namespace nep
