// Arrival-order retraining of an on-the-fly buffer (OtfRoundInput::arrival_stages): the final
// round of an active run trains its frames in the order the MD met them, as the rounds of a run
// whose teacher drove every step would have (log section 22 of docs/benchmarks_log.md: trained
// at once from fresh values, the crystal frames of a heating run are fitted worse than after
// rounds on the crystal alone).
#include <algorithm>
#include <chrono>

#include "nep/error.hpp"
#include "nep/train/otf_round.hpp"
#include "otf_round_internal.hpp"

namespace nep {

std::vector<int> arrival_stage_frames(int n_train, int stages) {
  if (n_train < 1) throw Error("arrival-order round: no training frames");
  if (stages < 0 || stages > 1000) throw Error("arrival-order round: stages must be in [0, 1000], not " + std::to_string(stages));
  std::vector<int> n;
  for (int k = 1; k <= stages; ++k) {
    const int c = static_cast<int>((static_cast<int64_t>(k) * n_train + stages - 1) / stages);  // ceil(k N / S)
    if (n.empty() || c != n.back()) n.push_back(c);
  }
  n.push_back(n_train);  // the round itself
  return n;
}

OtfRoundResult train_arrival_order(const OtfRoundInput& in, const std::atomic<bool>* stop) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<int> counts = arrival_stage_frames(static_cast<int>(in.train.size()), in.arrival_stages);
  OtfRoundResult res;
  Model model;
  int epochs = 0;
  for (size_t s = 0; s < counts.size(); ++s) {
    const bool last = s + 1 == counts.size();
    OtfRoundInput st;
    st.cfg = in.cfg;
    st.train.assign(in.train.begin(), in.train.begin() + counts[s]);
    st.heldout = in.heldout;
    st.has_start = s > 0;
    if (st.has_start) st.start = std::move(model);
    st.round = (in.round << 8) + s + 1;  // the stages' own batch-order streams
    st.epochs = last ? in.epochs : in.cfg.epoch;
    st.min_updates = in.min_updates;
    st.threads = in.threads;
    st.geometry = in.geometry;  // the stages share the round's frame geometries
    res = train_otf_round(st, stop);
    epochs += res.epochs;
    model = res.model;
    if (res.stopped) break;
  }
  res.epochs = epochs;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace nep
