/* -*- c++ -*- ----------------------------------------------------------
   lammps-nep: fix nep/train's restart data, free of LAMMPS headers (tested without LAMMPS by
   tests/test_active_controller.cpp). Version 3 (this build's) is a named, versioned keyed record
   (nep::StateRecord) holding the active controller's own record; versions 1 and 2 (positional,
   written by builds before 2026-12-04) are still read.
------------------------------------------------------------------------- */
#ifndef LMP_NEP_FIX_NEP_TRAIN_STATE_H
#define LMP_NEP_FIX_NEP_TRAIN_STATE_H

#include <cstdint>
#include <string>
#include <vector>

namespace nep_lmp {

struct FixNEPTrainState {
  int64_t frames = 0;            // frames in the buffer
  int64_t next_round_at = 0;     // buffer size at which the next round is due (passive)
  int64_t rejected = 0;
  int64_t rounds = 0;            // rounds adopted
  double metrics[5] = {0, 0, 0, 0, 0};
  double fresh_se = 0.0;
  int64_t fresh_n = 0;
  bool round_running = false;    // a round was in flight
  std::string model_text;        // the latest adopted model (nep.txt)
  bool active = false;           // mode active: then the two below
  std::vector<std::string> members;    // committee members 1..M-1 (nep.txt)
  std::string controller;        // the active controller's state record (StateRecord text)
};

// The bytes write_restart stores
std::string encode_fix_state(const FixNEPTrainState &s);
// From the bytes restart() is given (versions 1, 2, 3); throws nep::Error naming what is wrong
FixNEPTrainState decode_fix_state(const char *buf);

}    // namespace nep_lmp

#endif
