// nep.txt reader and writer (GPUMD grammar; see docs/nep_format.md for what is accepted/rejected).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nep/core/text_util.hpp"
#include "nep/elements.hpp"
#include "nep/error.hpp"
#include "nep/model.hpp"

namespace nep {

int Model::num_l() const {
  int n = l_max;
  for (bool f : flags) n += f ? 1 : 0;
  return n;
}

ModelSizes Model::sizes() const {
  ModelSizes z;
  z.T = num_types();
  z.D = dim();
  z.H = num_neurons;
  z.NR = n_max_radial + 1;
  z.NA = n_max_angular + 1;
  z.KR = basis_size_radial + 1;
  z.KA = basis_size_angular + 1;
  z.L3 = l_max;
  z.S = (l_max + 1) * (l_max + 1) - 1;
  z.q222 = flags[kQ222];
  z.q1111 = flags[kQ1111];
  z.zbl = zbl != ZblMode::None;
  z.ann_stride = ann_stride();
  return z;
}

int Model::type_of(const std::string& element) const {
  for (int k = 0; k < num_types(); ++k)
    if (elements[k] == element) return k;
  return -1;
}

std::vector<int> map_types(const Model& m, const std::vector<std::string>& names, int* missing) {
  std::vector<int> map(names.size() + 1, -1);
  if (missing) *missing = -1;
  for (size_t t = 0; t < names.size(); ++t) {
    if (names[t] == "NULL") continue;
    map[t + 1] = m.type_of(names[t]);
    if (map[t + 1] < 0 && missing && *missing < 0) *missing = static_cast<int>(t);
  }
  return map;
}

int Model::ann_block_size() const {
  if (kind == ModelKind::Charge) return (dim() + 3) * num_neurons;  // w0 b0 w1 wq
  return (dim() + 2) * num_neurons + (version == 5 ? 1 : 0);
}

const char* kind_name(ModelKind k) {
  switch (k) {
    case ModelKind::Dipole: return "dipole";
    case ModelKind::Polarizability: return "polarizability";
    case ModelKind::Charge: return "charge";
    default: return "potential";
  }
}

std::string Model::tag() const {
  std::string t = "nep" + std::to_string(version) + (zbl != ZblMode::None ? "_zbl" : "");
  if (kind == ModelKind::Dipole || kind == ModelKind::Polarizability) t += std::string("_") + kind_name(kind);
  if (kind == ModelKind::Charge) t += "_charge" + std::to_string(charge_mode);
  return t;
}

Model polarizability_diagonal_model(const Model& m) {
  if (m.kind != ModelKind::Polarizability) throw Error("polarizability_diagonal_model: not a polarizability model");
  Model second = m;
  second.kind = ModelKind::Potential;
  second.ann = m.ann_pol;
  second.ann_pol.clear();
  return second;
}

// the blocks, then sqrt(eps_inf) (qNEP only), then b1
int Model::num_ann_parameters() const {
  return ann_block_size() * (version == 3 ? 1 : num_types()) + (kind == ModelKind::Charge ? 2 : 1);
}

int Model::num_c_radial() const {
  const int T = num_types();
  return T * T * (n_max_radial + 1) * (basis_size_radial + 1);
}

int Model::num_c_angular() const {
  const int T = num_types();
  return T * T * (n_max_angular + 1) * (basis_size_angular + 1);
}

double Model::rc_radial_max() const { return *std::max_element(rc_radial.begin(), rc_radial.end()); }
double Model::rc_angular_max() const {
  return *std::max_element(rc_angular.begin(), rc_angular.end());
}
double Model::cutoff_max() const {
  double rc = std::max(rc_radial_max(), rc_angular_max());
  if (zbl == ZblMode::Universal || zbl == ZblMode::Typewise) rc = std::max(rc, zbl_rc_outer);
  if (zbl == ZblMode::Flexible)
    for (size_t p = 0; p + 1 < zbl_flexible.size(); p += 10) rc = std::max(rc, zbl_flexible[p + 1]);
  return rc;
}

namespace {

class LineReader {
 public:
  LineReader(const std::string& text, const std::string& name) : is_(text), name_(name) {}
  // Next line's tokens; false at end of input.
  bool next(std::vector<std::string>& tokens) {
    std::string line;
    if (!std::getline(is_, line)) return false;
    ++line_;
    tokens = detail::split_whitespace(line);
    return true;
  }
  Error error(const std::string& msg) const { return file_error(name_, line_, msg); }
  Error error_at_end(const std::string& msg) const {
    return file_error(name_, line_, "file ends early: " + msg);
  }

 private:
  std::istringstream is_;
  std::string name_;
  int line_ = 0;
};

double to_double(const std::string& tok, const LineReader& r, const char* what) {
  const char* s = tok.c_str();
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end == s || *end != '\0') throw r.error(std::string("expected a number for ") + what + ", got '" + tok + "'");
  if (!std::isfinite(v)) throw r.error(std::string("non-finite value '") + tok + "' for " + what);
  return v;
}

int to_int(const std::string& tok, const LineReader& r, const char* what, int lo, int hi) {
  const char* s = tok.c_str();
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0') throw r.error(std::string("expected an integer for ") + what + ", got '" + tok + "'");
  if (v < lo || v > hi)
    throw r.error(std::string(what) + " = " + tok + " is outside [" + std::to_string(lo) + ", " +
                  std::to_string(hi) + "]");
  return static_cast<int>(v);
}

void expect_header(const std::vector<std::string>& tok, const LineReader& r, const char* key,
                   size_t min_tokens, size_t max_tokens) {
  if (tok.empty() || tok[0] != key)
    throw r.error(std::string("expected a '") + key + "' line" +
                  (tok.empty() ? std::string(", got an empty line") : ", got '" + tok[0] + "'"));
  if (tok.size() < min_tokens || tok.size() > max_tokens)
    throw r.error(std::string("'") + key + "' line has " + std::to_string(tok.size()) + " tokens, expected " +
                  (min_tokens == max_tokens ? std::to_string(min_tokens)
                                            : std::to_string(min_tokens) + ".." + std::to_string(max_tokens)));
}

// Tag -> kind, version and zbl: the tags GPUMD and NEP_CPU read (docs/nep_format.md); every
// other kind (temperature, vdw, ...) is rejected.
void parse_tag(const std::string& tag, const LineReader& r, Model& m) {
  static const struct {
    const char* tag;
    int version;
    bool zbl;
    ModelKind kind;
    int charge_mode;
  } known[] = {{"nep3", 3, false, ModelKind::Potential, 0},
               {"nep3_zbl", 3, true, ModelKind::Potential, 0},
               {"nep4", 4, false, ModelKind::Potential, 0},
               {"nep4_zbl", 4, true, ModelKind::Potential, 0},
               {"nep5", 5, false, ModelKind::Potential, 0},
               {"nep5_zbl", 5, true, ModelKind::Potential, 0},
               {"nep3_dipole", 3, false, ModelKind::Dipole, 0},
               {"nep4_dipole", 4, false, ModelKind::Dipole, 0},
               {"nep3_polarizability", 3, false, ModelKind::Polarizability, 0},
               {"nep4_polarizability", 4, false, ModelKind::Polarizability, 0},
               {"nep4_charge1", 4, false, ModelKind::Charge, 1},
               {"nep4_charge2", 4, false, ModelKind::Charge, 2},
               {"nep4_charge3", 4, false, ModelKind::Charge, 3},
               {"nep4_zbl_charge1", 4, true, ModelKind::Charge, 1},
               {"nep4_zbl_charge2", 4, true, ModelKind::Charge, 2},
               {"nep4_zbl_charge3", 4, true, ModelKind::Charge, 3}};
  for (const auto& k : known)
    if (tag == k.tag) {
      m.version = k.version;
      m.zbl = k.zbl ? ZblMode::Universal : ZblMode::None;
      m.kind = k.kind;
      m.charge_mode = k.charge_mode;
      return;
    }
  for (const char* kind : {"dipole", "polarizability", "charge", "temperature", "vdw"})
    if (tag.find(kind) != std::string::npos)
      throw r.error("'" + tag + "' is a " + kind + " model of a form this reader does not know (it reads nep3/nep4/" +
                    "nep5[_zbl], nep3/nep4_dipole, nep3/nep4_polarizability and nep4[_zbl]_charge1/2/3)");
  throw r.error("unknown model tag '" + tag +
                "' (expected nep3, nep4 or nep5, optionally with _zbl; or nep3/nep4_dipole, "
                "nep3/nep4_polarizability, nep4[_zbl]_charge1/2/3)");
}

}  // namespace

Model parse_model(const std::string& text, const std::string& name) {
  Model m;
  LineReader r(text, name);
  std::vector<std::string> tok;
  auto need = [&](const char* what) {
    if (!r.next(tok)) throw r.error_at_end(std::string("expected ") + what);
  };

  // line 1: tag, number of types, element symbols
  need("the model tag line");
  if (tok.size() < 3) throw r.error("first line must be '<tag> <num_types> <element> ...'");
  parse_tag(tok[0], r, m);
  const int T = to_int(tok[1], r, "number of types", 1, limits::kMaxTypes);
  if (static_cast<int>(tok.size()) != 2 + T)
    throw r.error("first line declares " + std::to_string(T) + " types but lists " +
                  std::to_string(tok.size() - 2) + " elements");
  for (int t = 0; t < T; ++t) {
    const int z = atomic_number(tok[2 + t]);
    if (z == 0) throw r.error("unknown element '" + tok[2 + t] + "'");
    if (std::find(m.elements.begin(), m.elements.end(), tok[2 + t]) != m.elements.end())
      throw r.error("element '" + tok[2 + t] + "' listed twice");
    m.elements.push_back(tok[2 + t]);
    m.atomic_numbers.push_back(z);
  }

  // optional zbl line
  if (m.zbl != ZblMode::None) {
    need("a 'zbl' line");
    expect_header(tok, r, "zbl", 3, 4);
    m.zbl_rc_inner = to_double(tok[1], r, "zbl inner cutoff");
    m.zbl_rc_outer = to_double(tok[2], r, "zbl outer cutoff");
    // NEP_CPU and GPUMD test "zbl 0 0" first: flexible ZBL, a 4th token then ignored
    if (m.zbl_rc_inner == 0.0 && m.zbl_rc_outer == 0.0) {
      m.zbl = ZblMode::Flexible;
      if (tok.size() == 4) to_double(tok[3], r, "typewise zbl factor");  // still must be a number
    } else if (tok.size() == 4) {
      m.zbl = ZblMode::Typewise;
      m.zbl_typewise_factor = to_double(tok[3], r, "typewise zbl factor");
      if (m.zbl_typewise_factor <= 0.0) throw r.error("typewise zbl factor must be positive");
    }
    if (m.zbl != ZblMode::Flexible && !(m.zbl_rc_outer > 0.0 && m.zbl_rc_inner >= 0.0 &&
                                        m.zbl_rc_inner <= m.zbl_rc_outer))
      throw r.error("zbl cutoffs must satisfy 0 <= inner <= outer, outer > 0");
  }

  // cutoff line: global (5 tokens) or per type (2T+3 tokens)
  need("a 'cutoff' line");
  expect_header(tok, r, "cutoff", 1, 1000);
  const size_t n_global = 5, n_typed = 2 * T + 3;
  if (tok.size() != n_global && tok.size() != n_typed) {
    if (tok.size() == 3) throw r.error("pre-2022 'cutoff rc_R rc_A' line (no neighbour counts) is not supported");
    if (tok.size() == 8) throw r.error("2024-era 'cutoff ... factor' line (8 tokens) is not supported; the typewise factor now belongs on the zbl line");
    throw r.error("'cutoff' line has " + std::to_string(tok.size()) + " tokens, expected 5 or " +
                  std::to_string(n_typed));
  }
  m.per_type_cutoff = (tok.size() == n_typed && T > 1);
  for (int t = 0; t < T; ++t) {
    const size_t k = m.per_type_cutoff ? 1 + 2 * t : 1;
    m.rc_radial.push_back(to_double(tok[k], r, "radial cutoff"));
    m.rc_angular.push_back(to_double(tok[k + 1], r, "angular cutoff"));
    if (!(m.rc_radial.back() > 0.0) || !(m.rc_angular.back() > 0.0))
      throw r.error("cutoffs must be positive");
  }
  m.max_neighbors_radial = to_int(tok[tok.size() - 2], r, "radial neighbour count", 0, 1 << 30);
  m.max_neighbors_angular = to_int(tok[tok.size() - 1], r, "angular neighbour count", 0, 1 << 30);

  need("an 'n_max' line");
  expect_header(tok, r, "n_max", 3, 3);
  m.n_max_radial = to_int(tok[1], r, "n_max radial", 0, limits::kMaxNMax);
  m.n_max_angular = to_int(tok[2], r, "n_max angular", 0, limits::kMaxNMax);

  need("a 'basis_size' line");
  expect_header(tok, r, "basis_size", 3, 3);
  m.basis_size_radial = to_int(tok[1], r, "basis_size radial", 0, limits::kMaxBasisSize);
  m.basis_size_angular = to_int(tok[2], r, "basis_size angular", 0, limits::kMaxBasisSize);

  // l_max L3 [f222 [f1111 [f112 [f123 [f233 [f134]]]]]]: GPUMD semantics, nonzero = on
  need("an 'l_max' line");
  expect_header(tok, r, "l_max", 2, 2 + kNumAngularFlags);
  m.l_max = to_int(tok[1], r, "l_max", 0, kMaxL);
  for (size_t k = 2; k < tok.size(); ++k)
    m.flags[k - 2] = to_int(tok[k], r, "l_max flag", 0, 1000) != 0;
  if (m.flags[kQ222] && m.l_max < 2) throw r.error("4-body q_222 needs l_max >= 2");
  if (m.flags[kQ1111] && m.l_max < 1) throw r.error("5-body q_1111 needs l_max >= 1");

  need("an 'ANN' line");
  expect_header(tok, r, "ANN", 2, 3);
  m.num_neurons = to_int(tok[1], r, "number of neurons", 1, limits::kMaxNeurons);
  if (tok.size() == 3 && to_int(tok[2], r, "second hidden layer", 0, limits::kMaxNeurons) != 0)
    throw r.error("two-hidden-layer networks ('ANN " + tok[1] + " " + tok[2] + "') are not supported");

  // parameters: one number per line
  auto read_numbers = [&](std::vector<double>& out, int count, const char* what) {
    out.resize(count);
    for (int i = 0; i < count; ++i) {
      if (!r.next(tok))
        throw r.error_at_end("expected " + std::to_string(count) + " " + what + ", got " + std::to_string(i));
      if (tok.size() != 1)
        throw r.error(std::string("expected one number per line in the ") + what + " block, got " +
                      std::to_string(tok.size()) + " tokens");
      out[i] = to_double(tok[0], r, what);
    }
  };
  read_numbers(m.ann, m.num_ann_parameters(), "network parameters");
  if (m.kind == ModelKind::Polarizability) read_numbers(m.ann_pol, m.num_ann_parameters(), "second-network parameters");
  read_numbers(m.c, m.num_c_radial() + m.num_c_angular(), "descriptor coefficients");
  read_numbers(m.q_scaler, m.dim(), "q_scaler values");
  if (m.zbl == ZblMode::Flexible) read_numbers(m.zbl_flexible, 10 * T * (T + 1) / 2, "flexible zbl parameters");

  while (r.next(tok))
    if (!tok.empty())
      throw r.error("trailing data after the last expected parameter (the header implies " +
                    std::to_string(m.ann.size() + m.ann_pol.size() + m.c.size() + m.q_scaler.size() + m.zbl_flexible.size()) +
                    " numbers)");
  return m;
}

Model read_model(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a directory, not a NEP model file (nep.txt)");
  std::ifstream probe(path);
  if (!probe) throw Error(path + ": cannot open model file");
  return parse_model(detail::read_text_file(path), path);
}

namespace {
// Shortest decimal that reads back to exactly v.
std::string num(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}
}  // namespace

std::string format_model(const Model& m) {
  const int T = m.num_types();
  std::string s;
  s += m.tag() + " " + std::to_string(T);
  for (const auto& e : m.elements) s += " " + e;
  s += "\n";
  if (m.zbl == ZblMode::Flexible) s += "zbl 0 0\n";
  else if (m.zbl == ZblMode::Universal) s += "zbl " + num(m.zbl_rc_inner) + " " + num(m.zbl_rc_outer) + "\n";
  else if (m.zbl == ZblMode::Typewise)
    s += "zbl " + num(m.zbl_rc_inner) + " " + num(m.zbl_rc_outer) + " " + num(m.zbl_typewise_factor) + "\n";
  s += "cutoff";
  for (int t = 0; t < (m.per_type_cutoff ? T : 1); ++t) s += " " + num(m.rc_radial[t]) + " " + num(m.rc_angular[t]);
  s += " " + std::to_string(m.max_neighbors_radial) + " " + std::to_string(m.max_neighbors_angular) + "\n";
  s += "n_max " + std::to_string(m.n_max_radial) + " " + std::to_string(m.n_max_angular) + "\n";
  s += "basis_size " + std::to_string(m.basis_size_radial) + " " + std::to_string(m.basis_size_angular) + "\n";
  // GPUMD's legacy encoding: q_222 written as 2, q_1111 as 1; extra channels only when used
  s += "l_max " + std::to_string(m.l_max) + " " + (m.flags[kQ222] ? "2" : "0") + " " + (m.flags[kQ1111] ? "1" : "0");
  if (m.flags[kQ112] || m.flags[kQ123] || m.flags[kQ233] || m.flags[kQ134])
    for (int f = kQ112; f < kNumAngularFlags; ++f) s += m.flags[f] ? " 1" : " 0";
  s += "\n";
  s += "ANN " + std::to_string(m.num_neurons) + " 0\n";
  for (const auto* block : {&m.ann, &m.ann_pol, &m.c, &m.q_scaler, &m.zbl_flexible})
    for (double v : *block) s += num(v) + "\n";
  return s;
}

void write_model(const Model& m, const std::string& path) { detail::write_text_file_atomic(path, format_model(m)); }

}  // namespace nep
