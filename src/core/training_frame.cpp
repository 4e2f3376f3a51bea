#include "nep/training_frame.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "nep/core/text_util.hpp"
#include "nep/error.hpp"
#include "nep/xyz.hpp"

namespace nep {

double TrainingFrame::volume() const {
  const double* a = cell;
  const double* b = cell + 3;
  const double* c = cell + 6;
  return std::fabs(a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                   a[2] * (b[0] * c[1] - b[1] * c[0]));
}

namespace {

// n finite numbers from a key's value, or an error at the comment line
std::vector<double> numbers(const std::string& value, size_t n, const std::string& key, const std::string& file,
                            int line) {
  const auto tok = detail::split_whitespace(value);
  if (tok.size() != n)
    throw file_error(file, line, key + " needs " + std::to_string(n) + " number(s), got " + std::to_string(tok.size()));
  std::vector<double> v(n);
  for (size_t k = 0; k < n; ++k) {
    const char* s = tok[k].c_str();
    char* end = nullptr;
    v[k] = std::strtod(s, &end);
    if (end == s || *end != '\0') throw file_error(file, line, "bad number '" + tok[k] + "' in " + key);
    if (!std::isfinite(v[k])) throw file_error(file, line, "non-finite value '" + tok[k] + "' in " + key);
  }
  return v;
}

std::string num(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

std::vector<TrainingFrame> parse_training_xyz(const std::string& text, const std::string& file) {
  std::vector<TrainingFrame> out;
  for (const XyzFrame& fr : parse_xyz(text, file)) {
    const int info_line = fr.line + 1;
    TrainingFrame t;
    t.source_line = fr.line;
    if (!fr.has_lattice) throw file_error(file, info_line, "frame has no Lattice=\"...\" (GPUMD requires it)");
    std::copy(fr.lattice, fr.lattice + 9, t.cell);
    std::copy(fr.pbc, fr.pbc + 3, t.pbc);
    if (!(t.volume() > 0)) throw file_error(file, info_line, "Lattice has zero volume");
    const XyzColumn* sp = fr.column("species");
    if (!sp || sp->kind != 'S' || sp->width != 1) throw file_error(file, info_line, "Properties has no species:S:1 column");
    const XyzColumn* pos = fr.column("pos");
    if (!pos || pos->kind != 'R' || pos->width != 3) throw file_error(file, info_line, "Properties has no pos:R:3 column");
    t.species = sp->text;
    t.pos = pos->values;
    const XyzColumn* f = fr.column("force");
    const XyzColumn* f2 = fr.column("forces");
    if (f && f2) throw file_error(file, info_line, "Properties has both force and forces columns");
    if (!f) f = f2;
    if (f) {
      if (f->kind != 'R' || f->width != 3)
        throw file_error(file, info_line, "column '" + f->name + "' must be R:3, got " + std::string(1, f->kind) + ":" +
                                              std::to_string(f->width));
      t.has_forces = true;
      t.forces = f->values;
    }
    if (const XyzColumn* w = fr.column("force_weight")) {
      if (w->kind != 'R' || w->width != 1)
        throw file_error(file, info_line, "column '" + w->name + "' must be R:1, got " + std::string(1, w->kind) + ":" +
                                              std::to_string(w->width));
      if (!f) throw file_error(file, info_line, "column '" + w->name + "' needs a force column");
      for (size_t i = 0; i < w->values.size(); ++i)  // the reader has checked them finite
        if (!(w->values[i] >= 0))
          throw file_error(file, fr.line + 2 + static_cast<int>(i), "force_weight must be >= 0, got " + num(w->values[i]));
      t.force_weight = w->values;
    }
    auto it = fr.info.find("energy");
    if (it != fr.info.end()) {
      t.energy = numbers(it->second, 1, "energy", file, info_line)[0];
      t.has_energy = true;
    }
    it = fr.info.find("virial");
    if (it != fr.info.end()) {
      const auto v = numbers(it->second, 9, "virial", file, info_line);
      std::copy(v.begin(), v.end(), t.virial);
      t.has_virial = true;
    } else if ((it = fr.info.find("stress")) != fr.info.end()) {
      const auto s = numbers(it->second, 9, "stress", file, info_line);
      const double vol = t.volume();
      for (int k = 0; k < 9; ++k) t.virial[k] = -s[k] * vol;  // GPUMD: virial = -stress * volume
      t.has_virial = true;
    }
    it = fr.info.find("weight");
    if (it != fr.info.end()) {
      t.weight = numbers(it->second, 1, "weight", file, info_line)[0];
      if (!(t.weight > 0)) throw file_error(file, info_line, "weight must be positive, got " + it->second);
    }
    it = fr.info.find("config_type");
    if (it != fr.info.end()) t.config_type = it->second;
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<TrainingFrame> read_training_xyz(const std::string& path) {
  return parse_training_xyz(detail::read_text_file(path), path);
}

namespace {
// A comment-line value written so that the reader gives it back: bare when it has no whitespace
// and does not start with a quote; else quoted with a quote character it does not contain (a
// value the reader produced always lacks one of them). Found by tests/fuzz/fuzz_xyz: a quoted
// config_type with spaces was written bare and read back cut at the first space.
std::string info_value(const std::string& v) {
  bool bare = !v.empty() && v[0] != '"' && v[0] != '\'';
  for (char ch : v) bare = bare && !std::isspace(static_cast<unsigned char>(ch));
  if (bare) return v;
  if (v.find('"') == std::string::npos) return '"' + v + '"';
  if (v.find('\'') == std::string::npos) return "'" + v + "'";
  throw Error("config_type '" + v + "' holds both quote characters and spaces: it cannot be written to extended XYZ");
}
}  // namespace

std::string format_training_xyz(const std::vector<TrainingFrame>& frames) {
  std::string s;
  for (const auto& t : frames) {
    s += std::to_string(t.natoms()) + "\nLattice=\"";
    for (int k = 0; k < 9; ++k) s += (k ? " " : "") + num(t.cell[k]);
    s += "\" Properties=species:S:1:pos:R:3";
    if (t.has_forces) s += ":force:R:3";
    if (!t.force_weight.empty()) {
      if (!t.has_forces || t.force_weight.size() != size_t(t.natoms()))
        throw Error("a frame's force_weight needs forces and one weight an atom to be written to extended XYZ");
      s += ":force_weight:R:1";
    }
    if (t.has_energy) s += " energy=" + num(t.energy);
    if (t.has_virial) {
      s += " virial=\"";
      for (int k = 0; k < 9; ++k) s += (k ? " " : "") + num(t.virial[k]);
      s += "\"";
    }
    if (t.weight != 1.0) s += " weight=" + num(t.weight);
    if (!t.config_type.empty()) s += " config_type=" + info_value(t.config_type);
    s += std::string(" pbc=\"") + (t.pbc[0] ? "T" : "F") + (t.pbc[1] ? " T" : " F") + (t.pbc[2] ? " T" : " F") + "\"\n";
    for (int i = 0; i < t.natoms(); ++i) {
      s += t.species[i];
      for (int d = 0; d < 3; ++d) s += " " + num(t.pos[3 * i + d]);
      if (t.has_forces)
        for (int d = 0; d < 3; ++d) s += " " + num(t.forces[3 * i + d]);
      if (!t.force_weight.empty()) s += " " + num(t.force_weight[i]);
      s += "\n";
    }
  }
  return s;
}

void write_training_xyz(const std::string& path, const std::vector<TrainingFrame>& frames) {
  detail::write_text_file_atomic(path, format_training_xyz(frames));
}

}  // namespace nep
