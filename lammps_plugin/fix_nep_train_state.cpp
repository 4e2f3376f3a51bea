/* ----------------------------------------------------------------------
   lammps-nep: fix nep/train's restart data (fix_nep_train_state.h).

   Version 3: a double 3.0, a double with the record's length in bytes, then the record
     nep-state fix-nep-train 1   (frames, next_round_at, rejected, rounds, metrics, fresh_se,
                                  fresh_n, round_running, model, mode, members, member1..,
                                  controller: the active controller's own record)
   Versions 1 and 2 (older builds): 14 doubles (version, frames, next_round_at, rejected, rounds,
   5 metrics, fresh_se, fresh_n, round_running, model length), the model text; version 2 (mode
   active) then the number of active scalars, those scalars (driver, steps, teacher evaluations,
   teacher steps, checks, audits, audit misses, exploded, last call step, last deviation, rounds
   at hand-over, round start frames, round adoption step, calibration factor), the blob's length
   and the blob (members, calibration pairs).
------------------------------------------------------------------------- */

#include "fix_nep_train_state.h"

#include "nep/error.hpp"
#include "nep/train/active_controller.hpp"
#include "nep/train/state_record.hpp"

#include <cstring>

namespace nep_lmp {

namespace {
constexpr const char *kName = "fix-nep-train";
constexpr int kRecordVersion = 1;
constexpr int kLegacyScalars = 14;

double read_double(const char *&p)
{
  double v = 0.0;
  memcpy(&v, p, sizeof(double));
  p += sizeof(double);
  return v;
}

// Version 2's active scalars and blob as the controller's record
std::string legacy_controller(const std::vector<double> &a, const char *blob, size_t size,
                              std::vector<std::string> &members)
{
  if (a.size() < 14) throw nep::Error("fix nep/train: mode active restart data has " + std::to_string(a.size()) +
                                      " scalars, not 14");
  nep::StateRecord r(nep::ActiveController::kStateName, nep::ActiveController::kStateVersion);
  const char *keys[13] = {"teacher_drives", "steps", "teacher_evaluations", "teacher_steps", "checks", "audits",
                          "audit_misses", "exploded", "last_call_step", nullptr, "rounds_at_handover",
                          "round_started_frames", "round_adopt_step"};
  for (int k = 0; k < 13; ++k)
    if (keys[k]) r.set_integer(keys[k], static_cast<int64_t>(a[k]));
  r.set_real("last_deviation", a[9]);
  r.set_real("calibration_factor", a[13]);
  size_t pos = 0;
  auto get = [&](void *p, size_t n) {
    if (pos + n > size) throw nep::Error("fix nep/train: truncated mode active restart data");
    memcpy(p, blob + pos, n);
    pos += n;
  };
  uint64_t nm = 0;
  get(&nm, sizeof(nm));
  members.assign(nm, std::string());
  for (auto &t : members) {
    uint64_t n = 0;
    get(&n, sizeof(n));
    t.resize(n);
    if (n) get(&t[0], n);
  }
  uint64_t np = 0;
  get(&np, sizeof(np));
  std::vector<double> pred(np), truth(np);
  if (np) {
    get(pred.data(), np * sizeof(double));
    get(truth.data(), np * sizeof(double));
  }
  r.set_reals("calibration_predicted", pred);
  r.set_reals("calibration_true", truth);
  return r.str();
}

FixNEPTrainState decode_legacy(const char *buf, int version)
{
  FixNEPTrainState st;
  double s[kLegacyScalars];
  memcpy(s, buf, sizeof(s));
  st.frames = static_cast<int64_t>(s[1]);
  st.next_round_at = static_cast<int64_t>(s[2]);
  st.rejected = static_cast<int64_t>(s[3]);
  st.rounds = static_cast<int64_t>(s[4]);
  for (int k = 0; k < 5; ++k) st.metrics[k] = s[5 + k];
  st.fresh_se = s[10];
  st.fresh_n = static_cast<int64_t>(s[11]);
  st.round_running = s[12] != 0.0;
  st.model_text.assign(buf + sizeof(s), static_cast<size_t>(s[13]));
  if (version == 2) {
    st.active = true;
    const char *p = buf + sizeof(s) + st.model_text.size();
    std::vector<double> a(static_cast<size_t>(read_double(p)));
    for (auto &v : a) v = read_double(p);
    const size_t nb = static_cast<size_t>(read_double(p));
    st.controller = legacy_controller(a, p, nb, st.members);
  }
  return st;
}
}    // namespace

std::string encode_fix_state(const FixNEPTrainState &st)
{
  nep::StateRecord r(kName, kRecordVersion);
  r.set_integer("frames", st.frames);
  r.set_integer("next_round_at", st.next_round_at);
  r.set_integer("rejected", st.rejected);
  r.set_integer("rounds", st.rounds);
  r.set_reals("metrics", std::vector<double>(st.metrics, st.metrics + 5));
  r.set_real("fresh_se", st.fresh_se);
  r.set_integer("fresh_n", st.fresh_n);
  r.set_integer("round_running", st.round_running ? 1 : 0);
  r.set_text("model", st.model_text);
  r.set_text("mode", st.active ? "active" : "passive");
  if (st.active) {
    r.set_integer("members", static_cast<int64_t>(st.members.size()));
    for (size_t k = 0; k < st.members.size(); ++k) r.set_text("member" + std::to_string(k + 1), st.members[k]);
    r.set_text("controller", st.controller);
  }
  const std::string text = r.str();
  const double head[2] = {3.0, static_cast<double>(text.size())};
  return std::string(reinterpret_cast<const char *>(head), sizeof(head)) + text;
}

FixNEPTrainState decode_fix_state(const char *buf)
{
  const char *p = buf;
  const double v = read_double(p);
  const int version = static_cast<int>(v);
  if (version == 1 || version == 2) return decode_legacy(buf, version);
  if (version != 3 || v != 3.0)
    throw nep::Error("fix nep/train: restart data version " + std::to_string(v) +
                     " is not supported (this build reads 1, 2 and 3)");
  const size_t n = static_cast<size_t>(read_double(p));
  const nep::StateRecord r = nep::StateRecord::parse(std::string(p, n), kName, kRecordVersion, "fix nep/train restart");
  FixNEPTrainState st;
  st.frames = r.integer("frames", 0);
  st.next_round_at = r.integer("next_round_at", 0);
  st.rejected = r.integer("rejected", 0);
  st.rounds = r.integer("rounds", 0);
  const std::vector<double> m = r.reals("metrics");
  for (size_t k = 0; k < 5 && k < m.size(); ++k) st.metrics[k] = m[k];
  st.fresh_se = r.real("fresh_se", 0.0);
  st.fresh_n = r.integer("fresh_n", 0);
  st.round_running = r.integer("round_running", 0) != 0;
  st.model_text = r.text("model");
  st.active = r.text("mode", "passive") == "active";
  if (st.active) {
    const int64_t nm = r.integer("members", 0);
    for (int64_t k = 1; k <= nm; ++k) {
      const std::string key = "member" + std::to_string(k);
      if (!r.has(key)) throw nep::Error("fix nep/train restart: committee member " + std::to_string(k) + " is missing");
      st.members.push_back(r.text(key));
    }
    st.controller = r.text("controller");
  }
  return st;
}

}    // namespace nep_lmp
