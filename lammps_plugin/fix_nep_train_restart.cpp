/* ----------------------------------------------------------------------
   lammps-nep: fix nep/train's binary restart data (counters, metrics, the adopted model; mode
   active: the committee members and the controller's state), encoded by fix_nep_train_state.cpp
   as named, versioned keyed records. The buffer file itself is reopened by init().
------------------------------------------------------------------------- */

#include "fix_nep_train.h"

#include "comm.h"
#include "error.h"

#include "fix_nep_train_impl.h"
#include "fix_nep_train_state.h"
#include "nep_plugin_common.h"
#include "nep/train/state_record.hpp"

#include <cstdio>
#include <exception>
#include <string>

using namespace LAMMPS_NS;

void FixNEPTrain::write_restart(FILE *fp)
{
  if (comm->me != 0) return;
  nep_lmp::FixNEPTrainState st;
  st.frames = frames;
  st.next_round_at = next_round_at;
  st.rejected = rejected;
  st.rounds = rounds;
  for (int k = 0; k < 5; ++k) st.metrics[k] = metrics[k];
  st.fresh_se = fresh_se;
  st.fresh_n = fresh_n;
  st.round_running = round_running;
  st.model_text = model_text;
  if (act) {
    st.active = true;
    st.members = act->member_text;
    nep::StateRecord r(nep::ActiveController::kStateName, nep::ActiveController::kStateVersion);
    act->ctl.save(r);
    st.controller = r.str();
  }
  const std::string bytes = nep_lmp::encode_fix_state(st);
  const int size = static_cast<int>(bytes.size());
  fwrite(&size, sizeof(int), 1, fp);
  fwrite(bytes.data(), 1, bytes.size(), fp);
}

void FixNEPTrain::restart(char *buf)
{
  nep_lmp::FixNEPTrainState st;
  std::string err;
  try {
    st = nep_lmp::decode_fix_state(buf);
    if (st.active && !act) err = "the restart file holds a mode active fix; define it with 'mode active' again";
    if (act && st.active)
      act->ctl.restore(nep::StateRecord::parse(st.controller, nep::ActiveController::kStateName,
                                               nep::ActiveController::kStateVersion, "fix nep/train restart"));
    if (act && st.active && comm->me == 0) {
      impl->members.clear();
      for (const auto &t : st.members) impl->members.push_back(nep::parse_model(t, "restart file committee member"));
    }
  } catch (std::exception &e) {
    err = e.what();
  }
  // (the members are parsed on rank 0 alone: its error goes to every rank before error->all)
  err = nep_lmp::bcast_string(err, world);
  if (!err.empty()) error->all(FLERR, "fix nep/train: {}", err);
  restart_frames = st.frames;
  frames = st.frames;
  next_round_at = st.next_round_at;
  rejected = st.rejected;
  rounds = static_cast<int>(st.rounds);
  for (int k = 0; k < 5; ++k) metrics[k] = st.metrics[k];
  fresh_se = st.fresh_se;
  fresh_n = st.fresh_n;
  restart_round_running = st.round_running;
  model_text = st.model_text;
  if (act && st.active) act->member_text = st.members;
}
