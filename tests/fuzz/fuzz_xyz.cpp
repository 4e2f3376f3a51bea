// Fuzz target: the extended-XYZ reader (GPUMD training files and nep-predict input). Properties:
// bad input is rejected only by nep::Error naming the file; accepted frames have consistent sizes
// and finite numbers, and write/read gives the same frames back.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_check.hpp"
#include "nep/training_frame.hpp"
#include "nep/xyz.hpp"

using nep_fuzz::require;

namespace {
bool same(const nep::TrainingFrame& a, const nep::TrainingFrame& b) {
  return a.species == b.species && a.pos == b.pos && std::memcmp(a.cell, b.cell, sizeof a.cell) == 0 &&
         a.pbc[0] == b.pbc[0] && a.pbc[1] == b.pbc[1] && a.pbc[2] == b.pbc[2] && a.has_energy == b.has_energy &&
         (!a.has_energy || a.energy == b.energy) && a.has_virial == b.has_virial &&
         (!a.has_virial || std::memcmp(a.virial, b.virial, sizeof a.virial) == 0) && a.has_forces == b.has_forces &&
         a.forces == b.forces && a.weight == b.weight && a.config_type == b.config_type;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // the generic reader (nep-predict)
  std::vector<nep::XyzFrame> raw;
  if (nep_fuzz::accepts("fuzz.xyz", [&] { raw = nep::parse_xyz(text, "fuzz.xyz"); })) {
    for (const auto& f : raw)
      for (const auto& c : f.columns)
        require(c.width >= 1 && (c.kind == 'S' ? c.text.size() : c.values.size()) == size_t(f.natoms) * c.width,
                "column size");
  }
  // the training-set reader and its writer
  std::vector<nep::TrainingFrame> frames;
  if (!nep_fuzz::accepts("fuzz.xyz", [&] { frames = nep::parse_training_xyz(text, "fuzz.xyz"); })) return 0;
  for (const auto& f : frames) {
    const size_t n = f.species.size();
    require(f.pos.size() == 3 * n && (!f.has_forces || f.forces.size() == 3 * n), "array sizes");
    for (double v : f.pos) require(std::isfinite(v), "non-finite position");
    for (double v : f.cell) require(std::isfinite(v), "non-finite cell");
    require(std::isfinite(f.weight) && f.weight > 0, "weight");
  }
  const std::string once = nep::format_training_xyz(frames);
  std::vector<nep::TrainingFrame> again;
  require(nep_fuzz::accepts("roundtrip.xyz", [&] { again = nep::parse_training_xyz(once, "roundtrip.xyz"); }),
          "the writer produced a file the reader rejects");
  require(again.size() == frames.size(), "frame count changed in a round trip");
  for (size_t k = 0; k < frames.size(); ++k) require(same(frames[k], again[k]), "frame changed in a round trip");
  return 0;
}
