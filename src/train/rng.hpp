// Counter-based random streams for training: every random draw is a pure function of
// (global seed, purpose, index), so shuffles, splits and initial values never depend on thread,
// worker or rank counts, on how often an iterator is reset, or on where a run was resumed.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

namespace nep {
namespace train {

enum class Stream : uint64_t { Init = 1, Shuffle = 2, Split = 3, Reservoir = 4, Audit = 5, Bootstrap = 6, Member = 7 };

// SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
inline uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  Rng(uint64_t seed, Stream purpose, uint64_t index)
      : state_(mix64(mix64(mix64(seed) ^ static_cast<uint64_t>(purpose)) ^ index)) {}
  uint64_t next() { return mix64(state_ += 0x9e3779b97f4a7c15ULL); }
  double uniform() { return (next() >> 11) * 0x1.0p-53; }  // [0, 1)
  uint64_t below(uint64_t n) {  // uniform in [0, n), no modulo bias
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t r;
    do r = next();
    while (r >= limit);
    return r % n;
  }
  double normal() {  // Box-Muller, one value per call (deterministic, no cached pair)
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t state_;
};

// Fisher-Yates permutation of 0..n-1 drawn from stream (seed, purpose, index)
inline std::vector<int> permutation(int n, uint64_t seed, Stream purpose, uint64_t index) {
  std::vector<int> p(n);
  for (int i = 0; i < n; ++i) p[i] = i;
  Rng rng(seed, purpose, index);
  for (int i = n - 1; i > 0; --i) std::swap(p[i], p[rng.below(static_cast<uint64_t>(i) + 1)]);
  return p;
}

}  // namespace train
}  // namespace nep
