// Client input files for the species and order check of pair_style ipi
// (include/nep/ipi/client_input.hpp).
#include "nep/ipi/client_input.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <sstream>

#include "nep/core/text_util.hpp"
#include "nep/elements.hpp"
#include "nep/error.hpp"
#include "nep/ipi/server.hpp"
#include "nep/xyz.hpp"

namespace nep {
namespace ipi {

namespace {
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// a Fortran real: 1.0d-3 reads as 1.0e-3
bool fortran_real(std::string s, double& v) {
  for (char& c : s)
    if (c == 'd' || c == 'D') c = 'e';
  try {
    size_t used = 0;
    v = std::stod(s, &used);
    return used == s.size();
  } catch (...) {
    return false;
  }
}

// the unit option of a card line: "ATOMIC_POSITIONS {angstrom}", "(bohr)" or "crystal"
std::string card_option(const std::vector<std::string>& tok) {
  if (tok.size() < 2) return "";
  std::string o = lower(tok[1]);
  o.erase(std::remove_if(o.begin(), o.end(), [](char c) { return c == '{' || c == '}' || c == '(' || c == ')'; }),
          o.end());
  return o;
}

struct PwText {
  std::map<std::string, std::string> keys;    // namelist variables, lower-case names
  std::vector<std::string> lines;
};

// namelist "key = value" pairs of every &NAMELIST ... / block (several to a line, with or without
// commas, the block on one line or many; '!' starts a comment)
void read_namelists(PwText& t) {
  std::string text;
  bool in = false;
  for (const std::string& raw : t.lines) {
    std::string l = raw.substr(0, raw.find('!'));
    const size_t b = l.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    if (!in && l[b] == '&') {
      in = true;
      l = l.substr(l.find_first_of(" \t", b) == std::string::npos ? l.size() : l.find_first_of(" \t", b));
    }
    if (!in) continue;
    // a '/' outside quotes ends the block (values are numbers, logicals or quoted strings)
    bool quoted = false;
    for (size_t k = 0; k < l.size(); ++k) {
      if (l[k] == '\'' || l[k] == '"') quoted = !quoted;
      if (l[k] == '/' && !quoted) {
        text += " " + l.substr(0, k) + "\n";
        l.clear();
        in = false;
        break;
      }
    }
    text += " " + l;
  }
  static const std::regex assign(R"(([A-Za-z_][A-Za-z0-9_]*(\([0-9, ]+\))?)\s*=\s*('[^']*'|"[^"]*"|[^\s,]+))");
  for (std::sregex_iterator it(text.begin(), text.end(), assign), end; it != end; ++it) {
    std::string k = (*it)[1], v = (*it)[3];
    k.erase(std::remove_if(k.begin(), k.end(), ::isspace), k.end());
    v.erase(std::remove_if(v.begin(), v.end(), [](char c) { return c == '\'' || c == '"'; }), v.end());
    t.keys[lower(k)] = v;
  }
}

// the next line of a card after line i that is not blank or a comment ('!' or '#'), or npos
size_t next_data_line(const PwText& t, size_t i) {
  for (size_t k = i + 1; k < t.lines.size(); ++k) {
    const size_t b = t.lines[k].find_first_not_of(" \t\r");
    if (b != std::string::npos && t.lines[k][b] != '!' && t.lines[k][b] != '#') return k;
  }
  return std::string::npos;
}

double key_real(const PwText& t, const std::string& k, double fallback) {
  const auto it = t.keys.find(k);
  double v = fallback;
  if (it != t.keys.end() && !fortran_real(it->second, v)) v = fallback;
  return v;
}
}  // namespace

std::string element_of_label(const std::string& label) {
  // the label's leading letters, as an element symbol: the first two ("Si1", "Fe_up", "si"), else the
  // first one ("Ha" for an H atom labelled "Ha"? no: "Ha" is no element, so "H")
  std::string e;
  for (char c : label) {
    if (!std::isalpha(static_cast<unsigned char>(c)) || e.size() == 2) break;
    e += e.empty() ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
                   : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (atomic_number(e)) return e;
  if (e.size() == 2 && atomic_number(e.substr(0, 1))) return e.substr(0, 1);
  return "";
}

ClientInput parse_pw_input(const std::string& text, const std::string& name) {
  PwText t;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) t.lines.push_back(l);
  read_namelists(t);
  const double nat_value = key_real(t, "nat", -1);
  if (!(nat_value >= 1 && nat_value <= 1e8)) throw file_error(name, 0, "no 'nat' in the &SYSTEM namelist (not a pw.x input?)");
  const int nat = static_cast<int>(nat_value);
  const double ibrav = key_real(t, "ibrav", -1);
  // alat in Angstrom: celldm(1) (Bohr) or A (Angstrom)
  double alat = key_real(t, "celldm(1)", 0.0) * kBohrInAngstrom;
  if (alat == 0.0) alat = key_real(t, "a", 0.0);
  ClientInput c;
  c.file = name;
  std::map<std::string, std::string> label_element;
  std::string pos_unit, cell_unit;
  std::vector<double> frac_or_pos;
  bool have_cell = false;
  for (size_t i = 0; i < t.lines.size(); ++i) {
    const std::vector<std::string> tok = detail::split_whitespace(t.lines[i]);
    if (tok.empty()) continue;
    const std::string card = lower(tok[0]);
    if (card == "atomic_species") {
      const double ntyp = key_real(t, "ntyp", 0);
      size_t at = i;
      for (int k = 1; k <= static_cast<int>(std::min(ntyp, 1000.0)); ++k) {
        if ((at = next_data_line(t, at)) == std::string::npos) break;
        const std::vector<std::string> s = detail::split_whitespace(t.lines[at]);
        const std::string el = element_of_label(s[0]);
        if (el.empty()) throw file_error(name, static_cast<int>(at + 1), "species label '" + s[0] + "' names no element");
        label_element[s[0]] = el;
      }
    } else if (card == "atomic_positions") {
      pos_unit = card_option(tok);
      size_t at = i;
      for (int k = 1; k <= nat; ++k) {
        if ((at = next_data_line(t, at)) == std::string::npos)
          throw file_error(name, static_cast<int>(i + 1), "ATOMIC_POSITIONS lists fewer than nat atoms");
        const std::vector<std::string> s = detail::split_whitespace(t.lines[at]);
        double x[3];
        if (s.size() < 4 || !fortran_real(s[1], x[0]) || !fortran_real(s[2], x[1]) || !fortran_real(s[3], x[2]))
          throw file_error(name, static_cast<int>(at + 1), "expected 'label x y z'");
        c.species.push_back(s[0]);    // a label for now
        c.lines.push_back(static_cast<int>(at + 1));
        frac_or_pos.insert(frac_or_pos.end(), x, x + 3);
      }
    } else if (card == "cell_parameters") {
      cell_unit = card_option(tok);
      size_t at = i;
      for (int k = 0; k < 3; ++k) {
        at = next_data_line(t, at);
        const std::vector<std::string> s = at != std::string::npos ? detail::split_whitespace(t.lines[at])
                                                                    : std::vector<std::string>();
        for (int d = 0; d < 3; ++d)
          if (s.size() < 3 || !fortran_real(s[d], c.cell[3 * k + d]))
            throw file_error(name, static_cast<int>(at == std::string::npos ? i + 1 : at + 1),
                             "expected three numbers of a lattice vector");
      }
      have_cell = true;
    }
  }
  if (c.species.empty()) throw file_error(name, 0, "no ATOMIC_POSITIONS card");
  for (size_t k = 0; k < c.species.size(); ++k) {
    const auto it = label_element.find(c.species[k]);
    const std::string el = it != label_element.end() ? it->second : element_of_label(c.species[k]);
    if (el.empty()) throw file_error(name, c.lines[k], "species '" + c.species[k] + "' names no element");
    c.species[k] = el;
  }
  // positions and cell in Angstrom where the file allows it (ibrav 0 with CELL_PARAMETERS)
  const double cell_scale = cell_unit == "bohr" ? kBohrInAngstrom : cell_unit == "angstrom" ? 1.0 : alat;
  for (double& v : c.cell) v *= cell_scale;
  const bool cell_ok = have_cell && ibrav == 0.0 && cell_scale > 0.0;
  const double pos_scale = pos_unit == "bohr" ? kBohrInAngstrom : pos_unit == "angstrom" ? 1.0 : alat;
  if (pos_unit == "crystal" && cell_ok) {
    c.positions.assign(frac_or_pos.size(), 0.0);
    for (size_t a = 0; a < c.species.size(); ++a)
      for (int d = 0; d < 3; ++d)
        for (int k = 0; k < 3; ++k) c.positions[3 * a + d] += frac_or_pos[3 * a + k] * c.cell[3 * k + d];
    c.has_positions = true;
  } else if (pos_unit != "crystal" && pos_unit != "crystal_sg" && pos_scale > 0.0) {
    c.positions = frac_or_pos;
    for (double& v : c.positions) v *= pos_scale;
    c.has_positions = cell_ok;
  }
  const auto nosym = t.keys.find("nosym");
  std::string v = nosym == t.keys.end() ? "" : lower(nosym->second);
  v.erase(std::remove(v.begin(), v.end(), '.'), v.end());
  c.pw_uses_symmetry = !(v == "true" || v == "t");
  return c;
}

ClientInput read_client_input(const std::string& path) {
  const std::string text = detail::read_text_file(path);
  const std::string low = lower(path);
  const bool xyz = (low.size() >= 4 && low.compare(low.size() - 4, 4, ".xyz") == 0) ||
                   (low.size() >= 7 && low.compare(low.size() - 7, 7, ".extxyz") == 0);
  if (!xyz) return parse_pw_input(text, path);
  const std::vector<XyzFrame> frames = parse_xyz(text, path);
  if (frames.empty()) throw file_error(path, 0, "no frame");
  const XyzFrame& f = frames[0];
  ClientInput c;
  c.file = path;
  c.species = f.species();
  for (int i = 0; i < f.natoms; ++i) c.lines.push_back(f.line + 2 + i);
  c.positions = f.positions();
  std::copy(f.lattice, f.lattice + 9, c.cell.begin());
  c.has_positions = f.has_lattice;
  return c;
}

}  // namespace ipi
}  // namespace nep
