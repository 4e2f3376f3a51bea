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

namespace {
// " %.15e" per value
void put_numbers(std::string& out, const double* v, int n, bool leading_space = true) {
  char buf[40];
  for (int k = 0; k < n; ++k) {
    std::snprintf(buf, sizeof buf, (k || leading_space) ? " %.15e" : "%.15e", v[k]);
    out += buf;
  }
}

std::string quoted(const char* key, const double* v, int n) {
  std::string s = std::string(" ") + key + "=\"";
  put_numbers(s, v, n, false);
  return s + "\"";
}
}  // namespace

// potentials: energies, forces, virials; charge models also charges and Born effective charges;
// dipole / polarizability models their totals (header dipole= / pol=, GPUMD's training-file keys)
// and per-atom tensors
int predict_xyz(Calculator& calc, const Model& model, const std::string& in_path, const std::string& out_path) {
  const auto frames = read_xyz(in_path);
  const bool tensor = model.kind == ModelKind::Dipole || model.kind == ModelKind::Polarizability;
  const bool dipole = model.kind == ModelKind::Dipole, charges = model.kind == ModelKind::Charge;
  if (charges) calc.set_charge_options(true);
  std::string out;
  for (const auto& fr : frames) {
    const Structure s = structure_from_frame(fr, model, in_path);
    Prediction p;
    TensorPrediction t;
    if (tensor) t = calc.compute_tensor(s);
    else p = calc.compute(s, true);
    out += std::to_string(fr.natoms) + "\nLattice=\"";
    put_numbers(out, fr.lattice, 9, false);
    out += "\" Properties=species:S:1:pos:R:3";
    if (tensor) {
      out += dipole ? ":atomic_dipole:R:3" : ":atomic_pol:R:9";
      out += dipole ? quoted("dipole", t.total, 3) : quoted("pol", t.total, 9);
    } else {
      out += ":energies:R:1:forces:R:3:virials:R:9";
      if (charges) out += ":charges:R:1:bec:R:9";
      char buf[40];
      std::snprintf(buf, sizeof buf, " energy=%.15e", p.energy);
      out += buf + quoted("virial", p.virial, 9);
    }
    out += std::string(" pbc=\"") + (fr.pbc[0] ? "T" : "F") + (fr.pbc[1] ? " T" : " F") + (fr.pbc[2] ? " T" : " F") + "\"\n";
    const auto& sp = fr.column("species")->text;
    for (int i = 0; i < fr.natoms; ++i) {
      out += sp[i];
      put_numbers(out, &s.x[3 * i], 3);
      if (tensor) {
        put_numbers(out, &t.per_atom[9 * i], dipole ? 3 : 9);
      } else {
        put_numbers(out, &p.eatom[i], 1);
        put_numbers(out, &p.force[3 * i], 3);
        put_numbers(out, &p.vatom[9 * i], 9);
        if (charges) {
          put_numbers(out, &p.charge[i], 1);
          put_numbers(out, &p.bec[9 * i], 9);
        }
      }
      out += "\n";
    }
  }
  detail::write_text_file_atomic(out_path, out);  // never a half-written result
  return static_cast<int>(frames.size());
}

}  // namespace nep
