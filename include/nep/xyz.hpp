// GPUMD extended XYZ: reader (strict, errors name file and line) and writer.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace nep {

struct XyzColumn {
  std::string name;   // as written (case kept)
  char kind = 'R';    // S, R, I or L
  int width = 1;
  std::vector<std::string> text;  // kind S: natoms*width strings
  std::vector<double> values;     // kinds R/I/L: natoms*width numbers
};

struct XyzFrame {
  int natoms = 0;
  int line = 0;                               // line number of the atom-count line
  std::map<std::string, std::string> info;    // comment-line key=value, keys lower-cased
  bool has_lattice = false;
  double lattice[9] = {0};                    // rows a, b, c
  bool pbc[3] = {true, true, true};
  std::vector<XyzColumn> columns;

  const XyzColumn* column(const std::string& name) const;  // case-insensitive
  std::vector<std::string> species() const;                 // throws if missing
  std::vector<double> positions() const;                    // throws if missing
};

// Read every frame of an extended XYZ file. Throws nep::Error "file:line: message".
std::vector<XyzFrame> read_xyz(const std::string& path);
std::vector<XyzFrame> parse_xyz(const std::string& text, const std::string& name);

}  // namespace nep
