// Small text helpers shared by the core's file readers and the trainer's (nep.in, its outputs).
#pragma once
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nep/error.hpp"

namespace nep {
namespace detail {

inline std::vector<std::string> split_whitespace(const std::string& line) {
  std::istringstream is(line);
  std::vector<std::string> out;
  std::string tok;
  while (is >> tok) out.push_back(tok);
  return out;
}

// Whole file as a string; nep::Error "<path>: cannot open" (or "is a directory") otherwise.
inline std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Write to <path>.tmp and rename over <path>: readers never see a half-written file.
inline void write_text_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream o(tmp, std::ios::binary);
    if (!o) throw Error(path + ": cannot open for writing");
    o << text;
    o.flush();
    if (!o) {
      std::remove(tmp.c_str());
      throw Error(path + ": write failed (disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(path + ": cannot rename " + tmp);
  }
}

}  // namespace detail
}  // namespace nep
