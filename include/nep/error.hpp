// Error type of the lammps-nep core: every message names where the problem is (file:line, or the
// caller's context). The core throws; adapters (LAMMPS plugin, CLIs) catch and report.
#pragma once
#include <stdexcept>
#include <string>

namespace nep {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// "file:line: message" (line <= 0 omits the line)
inline Error file_error(const std::string& file, int line, const std::string& msg) {
  return Error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + msg);
}

}  // namespace nep
