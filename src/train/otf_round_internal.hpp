// Between otf_round.cpp and otf_arrival.cpp (not installed).
#pragma once
#include <atomic>

#include "nep/train/otf_round.hpp"

namespace nep {
// train_otf_round for in.arrival_stages > 0 (otf_arrival.cpp)
OtfRoundResult train_arrival_order(const OtfRoundInput& in, const std::atomic<bool>* stop);
}  // namespace nep
