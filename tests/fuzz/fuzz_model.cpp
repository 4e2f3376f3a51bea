// Fuzz target: the nep.txt reader. Properties: bad input is rejected only by nep::Error naming
// the file; an accepted model has consistent array sizes, only finite numbers, and survives a
// write/read round trip byte for byte.
#include <cmath>
#include <cstdint>
#include <string>

#include "fuzz_check.hpp"
#include "nep/model.hpp"

using nep_fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nep::Model m;
  if (!nep_fuzz::accepts("fuzz_nep.txt", [&] { m = nep::parse_model(text, "fuzz_nep.txt"); })) return 0;

  const int T = m.num_types();
  require(T >= 1 && int(m.atomic_numbers.size()) == T, "type count");
  require(int(m.ann.size()) == m.num_ann_parameters(), "ann size");
  require(int(m.c.size()) == m.num_c_radial() + m.num_c_angular(), "c size");
  require(int(m.q_scaler.size()) == m.dim(), "q_scaler size");
  require(int(m.rc_radial.size()) == T && int(m.rc_angular.size()) == T, "cutoff sizes");
  // (rc_angular > rc_radial is legal in a nep.txt: the core uses both cutoffs independently)
  for (int t = 0; t < T; ++t)
    require(m.rc_angular[t] > 0 && m.rc_radial[t] > 0 && std::isfinite(m.rc_angular[t]) && std::isfinite(m.rc_radial[t]),
            "non-positive or non-finite cutoff accepted");
  require(m.n_max_radial >= 0 && m.n_max_angular >= 0 && m.basis_size_radial >= 0 && m.basis_size_angular >= 0,
          "negative sizes");
  require(m.num_neurons >= 1, "no neurons");
  for (double v : m.ann) require(std::isfinite(v), "non-finite ann");
  for (double v : m.c) require(std::isfinite(v), "non-finite c");
  for (double v : m.q_scaler) require(std::isfinite(v), "non-finite q_scaler");

  const std::string once = nep::format_model(m);
  nep::Model again;
  require(nep_fuzz::accepts("roundtrip", [&] { again = nep::parse_model(once, "roundtrip"); }),
          "the writer produced a file the reader rejects");
  require(nep::format_model(again) == once, "write/read round trip is not byte-stable");
  return 0;
}
