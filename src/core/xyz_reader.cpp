// Extended XYZ reader: comment-line key=value pairs (quoted values allowed), Properties columns.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "nep/core/text_util.hpp"
#include "nep/error.hpp"
#include "nep/xyz.hpp"

namespace nep {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// key=value pairs; value may be "double quoted" or 'single quoted'; bare keys become "T".
std::map<std::string, std::string> parse_info(const std::string& line, const std::string& file, int lineno) {
  std::map<std::string, std::string> info;
  size_t i = 0, n = line.size();
  auto skip_ws = [&] { while (i < n && std::isspace(static_cast<unsigned char>(line[i]))) ++i; };
  while (true) {
    skip_ws();
    if (i >= n) break;
    size_t k0 = i;
    while (i < n && line[i] != '=' && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    std::string key = line.substr(k0, i - k0);
    skip_ws();
    if (i < n && line[i] == '=') {
      ++i;
      skip_ws();
      std::string val;
      if (i < n && (line[i] == '"' || line[i] == '\'')) {
        const char q = line[i++];
        size_t v0 = i;
        while (i < n && line[i] != q) ++i;
        if (i >= n) throw file_error(file, lineno, "unterminated quote in value of '" + key + "'");
        val = line.substr(v0, i - v0);
        ++i;
      } else {
        size_t v0 = i;
        while (i < n && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        val = line.substr(v0, i - v0);
      }
      info[lower(key)] = val;
    } else {
      info[lower(key)] = "T";
    }
  }
  return info;
}

bool parse_double(const std::string& s, double& v) {
  const char* c = s.c_str();
  char* end = nullptr;
  v = std::strtod(c, &end);
  return end != c && *end == '\0';
}

}  // namespace

const XyzColumn* XyzFrame::column(const std::string& name) const {
  const std::string key = lower(name);
  for (const auto& c : columns)
    if (lower(c.name) == key) return &c;
  return nullptr;
}

std::vector<std::string> XyzFrame::species() const {
  const XyzColumn* c = column("species");
  if (!c || c->kind != 'S' || c->width != 1)
    throw Error("frame at line " + std::to_string(line) + ": no 'species:S:1' column");
  return c->text;
}

std::vector<double> XyzFrame::positions() const {
  const XyzColumn* c = column("pos");
  if (!c || c->kind != 'R' || c->width != 3)
    throw Error("frame at line " + std::to_string(line) + ": no 'pos:R:3' column");
  return c->values;
}

std::vector<XyzFrame> parse_xyz(const std::string& text, const std::string& file) {
  std::vector<XyzFrame> frames;
  std::istringstream is(text);
  std::string line;
  int lineno = 0;
  while (std::getline(is, line)) {
    ++lineno;
    auto tok = detail::split_whitespace(line);
    if (tok.empty()) continue;  // blank lines between frames
    XyzFrame fr;
    fr.line = lineno;
    {
      char* end = nullptr;
      long n = std::strtol(tok[0].c_str(), &end, 10);
      if (tok.size() != 1 || *end != '\0' || n <= 0 || n > 100000000)
        throw file_error(file, lineno, "expected the number of atoms, got '" + line + "'");
      fr.natoms = static_cast<int>(n);
    }
    if (!std::getline(is, line)) throw file_error(file, lineno, "file ends after the atom count");
    ++lineno;
    fr.info = parse_info(line, file, lineno);
    auto it = fr.info.find("lattice");
    if (it != fr.info.end()) {
      auto v = detail::split_whitespace(it->second);
      if (v.size() != 9) throw file_error(file, lineno, "Lattice needs 9 numbers, got " + std::to_string(v.size()));
      for (int k = 0; k < 9; ++k)
        if (!parse_double(v[k], fr.lattice[k]) || !std::isfinite(fr.lattice[k]))
          throw file_error(file, lineno, "bad Lattice value '" + v[k] + "'");
      fr.has_lattice = true;
    }
    it = fr.info.find("pbc");
    if (it != fr.info.end()) {
      auto v = detail::split_whitespace(it->second);
      if (v.size() != 3) throw file_error(file, lineno, "pbc needs 3 values");
      for (int k = 0; k < 3; ++k) {
        const std::string b = lower(v[k]);
        if (b == "t" || b == "true" || b == "1") fr.pbc[k] = true;
        else if (b == "f" || b == "false" || b == "0") fr.pbc[k] = false;
        else throw file_error(file, lineno, "bad pbc value '" + v[k] + "'");
      }
    }
    it = fr.info.find("properties");
    if (it == fr.info.end()) throw file_error(file, lineno, "comment line has no Properties=...");
    {
      std::vector<std::string> parts;
      std::stringstream ps(it->second);
      std::string part;
      while (std::getline(ps, part, ':')) parts.push_back(part);
      if (parts.empty() || parts.size() % 3 != 0)
        throw file_error(file, lineno, "Properties must be name:type:count triples, got '" + it->second + "'");
      for (size_t k = 0; k < parts.size(); k += 3) {
        XyzColumn c;
        c.name = parts[k];
        const std::string kind = lower(parts[k + 1]);
        if (kind != "s" && kind != "r" && kind != "i" && kind != "l")
          throw file_error(file, lineno, "unknown Properties type '" + parts[k + 1] + "' for '" + c.name + "'");
        c.kind = static_cast<char>(std::toupper(kind[0]));
        char* end = nullptr;
        long w = std::strtol(parts[k + 2].c_str(), &end, 10);
        if (*end != '\0' || w <= 0 || w > 1000)
          throw file_error(file, lineno, "bad column count '" + parts[k + 2] + "' for '" + c.name + "'");
        c.width = static_cast<int>(w);
        fr.columns.push_back(std::move(c));
      }
    }
    size_t total_width = 0;
    for (const auto& c : fr.columns) total_width += c.width;
    // reserve no more atoms than the rest of the text can hold (>= 2 characters a value), so an
    // atom count of 10^8 in a small file is "file ends inside a frame", not a 3 GB allocation
    // (found by tests/fuzz/fuzz_xyz)
    const std::streamoff here = is.tellg();
    const size_t left = here < 0 ? 0 : text.size() - static_cast<size_t>(here);
    const size_t reserve_atoms = std::min<size_t>(fr.natoms, left / (2 * total_width) + 1);
    for (auto& c : fr.columns) {
      if (c.kind == 'S') c.text.reserve(reserve_atoms * c.width);
      else c.values.reserve(reserve_atoms * c.width);
    }
    for (int a = 0; a < fr.natoms; ++a) {
      if (!std::getline(is, line))
        throw file_error(file, lineno, "file ends inside a frame: expected " + std::to_string(fr.natoms) +
                                           " atom lines, got " + std::to_string(a));
      ++lineno;
      auto v = detail::split_whitespace(line);
      if (v.size() != total_width)
        throw file_error(file, lineno, "atom line has " + std::to_string(v.size()) + " columns, Properties declare " +
                                           std::to_string(total_width));
      size_t k = 0;
      for (auto& c : fr.columns)
        for (int w = 0; w < c.width; ++w, ++k) {
          if (c.kind == 'S') {
            c.text.push_back(v[k]);
          } else if (c.kind == 'L') {
            const std::string b = lower(v[k]);
            c.values.push_back((b == "t" || b == "true" || b == "1") ? 1.0 : 0.0);
          } else {
            double x;
            if (!parse_double(v[k], x)) throw file_error(file, lineno, "bad number '" + v[k] + "' in column '" + c.name + "'");
            if (!std::isfinite(x)) throw file_error(file, lineno, "non-finite value '" + v[k] + "' in column '" + c.name + "'");
            c.values.push_back(x);
          }
        }
    }
    frames.push_back(std::move(fr));
  }
  return frames;
}

std::vector<XyzFrame> read_xyz(const std::string& path) { return parse_xyz(detail::read_text_file(path), path); }

}  // namespace nep
