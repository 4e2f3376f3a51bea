// Shared helpers of the fuzz targets: the only exception a reader may throw on bad input is
// nep::Error (its message names the file and line); anything else, and any property violation
// below, aborts so that libFuzzer records the input.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "nep/error.hpp"

namespace nep_fuzz {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz property violated: %s\n", what.c_str());
  std::abort();
}

inline void require(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

// Runs f; a nep::Error is the accepted way to reject input (its message must name `file`);
// returns true when f completed.
template <class F>
bool accepts(const std::string& file, F&& f) {
  try {
    f();
    return true;
  } catch (const nep::Error& e) {
    const std::string msg = e.what();
    require(msg.find(file) != std::string::npos, "error message does not name the file: " + msg);
    return false;
  } catch (const std::exception& e) {
    fail(std::string("a reader threw something other than nep::Error: ") + e.what());
  }
}

}  // namespace nep_fuzz
