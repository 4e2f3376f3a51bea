// Small text helpers shared by the file readers.
#pragma once
#include <sstream>
#include <string>
#include <vector>

namespace nep {
namespace detail {

inline std::vector<std::string> split_whitespace(const std::string& line) {
  std::istringstream is(line);
  std::vector<std::string> out;
  std::string tok;
  while (is >> tok) out.push_back(tok);
  return out;
}

}  // namespace detail
}  // namespace nep
