// Opt-in per-stage wall-clock timing: set NEP_TIMING=1 to collect and print a table at exit.
// When unset, a ScopedStage costs one predictable branch on a cached flag.
#pragma once
#include <chrono>

namespace nep {

bool timing_enabled();  // NEP_TIMING=1, read once

// Adds seconds to the named stage (creating it on first use); thread-safe.
void timing_add(const char* stage, double seconds);
// Print the table (stage, calls, total s, mean ms) to stderr; also runs automatically at exit.
void timing_report();

class ScopedStage {
 public:
  explicit ScopedStage(const char* stage) : stage_(timing_enabled() ? stage : nullptr) {
    if (stage_) t0_ = std::chrono::steady_clock::now();
  }
  ~ScopedStage() {
    if (stage_) timing_add(stage_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count());
  }
  ScopedStage(const ScopedStage&) = delete;
  ScopedStage& operator=(const ScopedStage&) = delete;

 private:
  const char* stage_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace nep
