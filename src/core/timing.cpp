#include "nep/timing.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace nep {
namespace {

struct Stage {
  std::string name;
  long calls = 0;
  double seconds = 0.0;
};

struct Registry {
  std::mutex mutex;
  std::vector<Stage> stages;
  ~Registry() { timing_report(); }
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

bool timing_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("NEP_TIMING");
    return v && std::strcmp(v, "0") != 0 && *v != '\0';
  }();
  return on;
}

void timing_add(const char* stage, double seconds) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& s : r.stages)
    if (s.name == stage) {
      ++s.calls;
      s.seconds += seconds;
      return;
    }
  r.stages.push_back({stage, 1, seconds});
}

void timing_report() {
  if (!timing_enabled()) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.stages.empty()) return;
  std::fprintf(stderr, "NEP_TIMING %-24s %8s %12s %12s\n", "stage", "calls", "total_s", "mean_ms");
  for (const auto& s : r.stages)
    std::fprintf(stderr, "NEP_TIMING %-24s %8ld %12.4f %12.4f\n", s.name.c_str(), s.calls, s.seconds,
                 1e3 * s.seconds / s.calls);
  r.stages.clear();
}

}  // namespace nep
