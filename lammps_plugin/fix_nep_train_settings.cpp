/* ----------------------------------------------------------------------
   lammps-nep: fix nep/train's keyword table (fix_nep_train_settings.h). Each entry: name, values as
   the docs spell them, arity, help line (docs/fix_nep_train.rst's keyword list is tested equal to
   these lines), and the parse/check of its values.
------------------------------------------------------------------------- */

#include "fix_nep_train_settings.h"

#include "nep/error.hpp"

#include <climits>
#include <cmath>
#include <limits>

using nep::Error;
using nep::Keyword;
using nep::KeywordValues;

namespace nep_lmp {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr long long kBig = LLONG_MAX;

int int_value(const KeywordValues &v, size_t k) { return static_cast<int>(v.integer(k, INT_MIN, INT_MAX)); }

// the keywords that only mode active takes (an error in passive mode)
const char *const kActiveOnly[] = {"teacher", "committee", "member_reset", "threshold", "deviation", "handback", "probe", "gap", "budget",
                                   "audit",   "adopt_after", "first_round", "fmax"};
}    // namespace

// mode active's keywords (docs/fix_nep_train.rst, "Mode active")
std::vector<Keyword> active_keywords(FixNEPTrainSettings &s)
{
  nep::ActiveSettings &a = s.act;
  return {
      {"teacher", "STYLE", 1, 1, "the teacher, a sub-style of pair_style hybrid/overlay (mode active, required)",
       [&](const KeywordValues &v) { s.teacher = v.word(0); }},
      {"committee", "M", 1, 1, "committee size: the driving model and M-1 members (mode active, default 4)",
       [&](const KeywordValues &v) {
         a.members = int_value(v, 0);
         if (a.members < 2) throw Error("committee needs at least 2 models");
       }},
      {"member_reset", "R", 1, 1,
       "each committee member starts again from fresh values every R rounds, the members' resets staggered "
       "(mode active, default 0: never)",
       [&](const KeywordValues &v) {
         a.member_reset = int_value(v, 0);
         if (a.member_reset < 0) throw Error("member_reset must be >= 0");
       }},
      {"threshold", "LO HI [grade|true]", 2, 3,
       "lower and upper threshold on the committee's force deviation (max or rms over atoms: deviation), eV/Angstrom; with "
       "true, in true-error units (the deviation times the calibration factor); with grade, in units of the committee's "
       "largest deviation on its own training frames (1: the edge of the training data) (default 0.05 0.25)",
       [&](const KeywordValues &v) {
         a.lo = v.real(0, -kInf, kInf);
         a.hi = v.real(1, -kInf, kInf);
         if (!(a.lo > 0.0 && a.hi > a.lo)) throw Error("threshold LO HI needs 0 < LO < HI");
         if (v.size() == 3 && v.word(2) != "true" && v.word(2) != "grade")
           throw Error("threshold LO HI [grade|true]: the third value must be 'grade' or 'true', not '" + v.word(2) + "'");
         a.true_units = v.size() == 3 && v.word(2) == "true";
         a.grade = v.size() == 3 && v.word(2) == "grade";
       }},
      {"deviation", "max|rms", 1, 1,
       "the committee's deviation of a check step: max (default), the largest per-atom force deviation, or rms, the root mean "
       "square over atoms (intensive: a threshold means the same at every box size); the student's true error on audited "
       "frames, for the calibration, is then its force RMSE",
       [&](const KeywordValues &v) {
         if (v.word(0) != "max" && v.word(0) != "rms")
           throw Error("deviation must be max or rms, not '" + v.word(0) + "'");
         a.rms = v.word(0) == "rms";
       }},
      {"handback", "H", 1, 1,
       "while the teacher drives, a newer model drives again once the deviation is below H, in the units of threshold "
       "(default LO; H up to HI, e.g. for large systems whose max deviation over atoms stays above LO)",
       [&](const KeywordValues &v) {
         a.handback = v.real(0, -kInf, kInf);
         if (!(a.handback > 0.0)) throw Error("handback H needs H > 0");
       }},
      {"probe", "P", 1, 1,
       "while the teacher drives, the committee is also evaluated every P steps between check steps, and the student "
       "drives again from the next step once a round adopted after the take-over brings the deviation below the "
       "hand-back level there (nothing labelled; default 0: on check steps only)",
       [&](const KeywordValues &v) {
         a.probe = v.integer(0, LLONG_MIN, kBig);
         if (a.probe < 0) throw Error("probe must be >= 0");
       }},
      {"gap", "G", 1, 1, "fewest steps between two teacher calls for labels or audits (default 0)",
       [&](const KeywordValues &v) {
         a.gap = v.integer(0, LLONG_MIN, kBig);
         if (a.gap < 0) throw Error("gap must be >= 0");
       }},
      {"budget", "B|none", 1, 1, "teacher evaluations allowed in all, whatever drives: a hard cap (default none)",
       [&](const KeywordValues &v) {
         if (v.word(0) == "none") {
           a.budget = -1;
           return;
         }
         a.budget = v.integer(0, LLONG_MIN, kBig);
         if (a.budget < 0) throw Error("budget must be >= 0 or none");
       }},
      {"audit", "P", 1, 1, "probability that a check step the student drives is audited: the teacher is called whatever the deviation, and only audited frames calibrate the deviation (default 0)",
       [&](const KeywordValues &v) {
         a.audit = v.real(0, -kInf, kInf);
         if (!(a.audit >= 0.0 && a.audit <= 1.0)) throw Error("audit P needs 0 <= P <= 1");
       }},
      {"adopt_after", "N [M]", 1, 2,
       "a round's models are adopted N steps after it started while the teacher drives, M steps after while the "
       "student drives, rounded up to a check step; 0: on the step it started, the MD waiting for it (default N = 0, "
       "M = 100 x every)",
       [&](const KeywordValues &v) {
         a.adopt_after = v.integer(0, LLONG_MIN, kBig);
         if (a.adopt_after < 0) throw Error("adopt_after must be >= 0");
         a.adopt_after_student = v.size() == 2 ? v.integer(1, LLONG_MIN, kBig) : -1;
         if (v.size() == 2 && a.adopt_after_student < 0) throw Error("adopt_after N M needs M >= 0");
       }},
      {"first_round", "K", 1, 1,
       "while the teacher drives (from the start, or after a takeover), a round every K new frames (mode active, "
       "default 1; 0: train_every)",
       [&](const KeywordValues &v) {
         a.first_round = v.integer(0, LLONG_MIN, kBig);
         if (a.first_round < 0) throw Error("first_round must be >= 0");
       }},
      {"fmax", "F", 1, 1, "a teacher frame with a force component above F eV/Angstrom is not buffered (default 20)",
       [&](const KeywordValues &v) {
         a.fmax = v.real(0, -kInf, kInf);
         if (!(a.fmax > 0.0)) throw Error("fmax must be positive (eV/Angstrom)");
       }},
  };
}

nep::KeywordTable fix_nep_train_keywords(FixNEPTrainSettings &s, int ntypes)
{
  std::vector<Keyword> k = {
      {"every", "N", 1, 1, "sample a frame every N timesteps", [&](const KeywordValues &v) { s.every = int_value(v, 0); },
       true},
      {"buffer", "file.h5", 1, 1,
       "HDF5 frame store the frames are appended to (created, or appended to if it exists)",
       [&](const KeywordValues &v) { s.buffer_path = v.word(0); }, true},
      {"model", "file.txt", 1, 1, "the trained model, written as GPUMD nep.txt after every round",
       [&](const KeywordValues &v) { s.model_path = v.word(0); }, true},
      {"input", "nep.in", 1, 1, "GPUMD/TorchNEP training keywords (see docs/nep_train.md)",
       [&](const KeywordValues &v) { s.input_path = v.word(0); }, true},
      {"seed", "S", 1, 1, "the one seed every split, reservoir, shuffle and initial value derives from (default 1)",
       [&](const KeywordValues &v) { s.seed = v.integer(0, LLONG_MIN, kBig); }},
      {"train_every", "K", 1, 1, "a training round is due every K buffered frames (default 10)",
       [&](const KeywordValues &v) { s.train_every = int_value(v, 0); }},
      {"epochs", "E", 1, 1, "epochs per round (default 0 = nep.in's epoch)",
       [&](const KeywordValues &v) { s.epochs = int_value(v, 0); }},
      {"min_updates", "U", 1, 1,
       "at least U optimiser updates (batches) per round: a round on a small buffer runs max(E, ceil(U / batches per "
       "epoch)) epochs (default 0 = off)",
       [&](const KeywordValues &v) {
         s.min_updates = int_value(v, 0);
         if (s.min_updates < 0) throw Error("min_updates must be >= 0");
       }},
      {"final_round", "E", 1, 1,
       "at the end of each run, one more round of E epochs on the buffer, waited for; its model is the one written and "
       "deployed (default 0 = none)",
       [&](const KeywordValues &v) {
         s.final_epochs = int_value(v, 0);
         if (s.final_epochs < 0) throw Error("final_round E needs E >= 0");
       }},
      {"final_stages", "S", 1, 1,
       "the final round trains from fresh values in the order the frames arrived, as a passive run would have: S stages "
       "(nep.in's epoch each) on the first N/S, 2N/S, ..., N training frames, then its E epochs on all N (default 0: it "
       "continues the run's model)",
       [&](const KeywordValues &v) {
         s.final_stages = int_value(v, 0);
         if (s.final_stages < 0 || s.final_stages > 1000) throw Error("final_stages S needs 0 <= S <= 1000");
       }},
      {"capacity", "C", 1, 1,
       "training frames held in memory, a seeded reservoir over all buffered frames (default 1000)",
       [&](const KeywordValues &v) { s.capacity = v.integer(0, LLONG_MIN, kBig); }},
      {"heldout", "F", 1, 1, "fraction of frames held out for validation, never trained on (default 0.1)",
       [&](const KeywordValues &v) { s.heldout = v.real(0, -kInf, kInf); }},
      {"select", "every|error X", 1, 2,
       "every: buffer every sampled frame (default); error X: buffer a frame only if the current model's force RMSE "
       "on it exceeds X (eV/Angstrom)",
       [&](const KeywordValues &v) {
         if (v.word(0) == "every" && v.size() == 1) {
           s.select_threshold = -1.0;
         } else if (v.word(0) == "error") {
           if (v.size() < 2) throw Error("select error X needs X (eV/Angstrom)");
           s.select_threshold = v.real(1, -kInf, kInf);
           if (s.select_threshold < 0) throw Error("select error X needs X >= 0 (eV/Angstrom)");
         } else {
           throw Error("select must be 'every' or 'error X', not '" + v.word(v.size() - 1) + "'");
         }
       }},
      {"carve", "CORE K|none", 1, 2,
       "buffer the regions around the K most uncertain atoms (committee deviation; without a committee, largest "
       "teacher force) instead of the whole frame: atoms within CORE Angstrom of a centre are labelled, the region "
       "holds every atom within CORE + 2 rc (nep.in's largest cutoff); none: whole frames (default)",
       [&](const KeywordValues &v) {
         if (v.size() == 1 && v.word(0) == "none") {
           s.carve_core = 0.0;
           s.carve_regions = 0;
           return;
         }
         if (v.size() != 2) throw Error("carve needs CORE K or none");
         s.carve_core = v.real(0, -kInf, kInf);
         s.carve_regions = int_value(v, 1);
         if (!(s.carve_core > 0.0) || s.carve_regions < 1) throw Error("carve CORE K needs CORE > 0 (Angstrom) and K >= 1");
       }},
      {"threads", "T", 1, 1,
       "threads of the training rounds: OpenMP threads of a model, or in mode active min(T, committee) models "
       "trained side by side (default 1; results do not depend on it)",
       [&](const KeywordValues &v) { s.threads = int_value(v, 0); }},
      {"nice", "n", 1, 1, "lower the training thread's priority by n (Linux nice value, default 0)",
       [&](const KeywordValues &v) { s.nice = int_value(v, 0); }},
      {"deploy", "yes|no", 1, 1, "push each new model into the active nep pair styles (default no)",
       [&](const KeywordValues &v) { s.deploy = v.yes_no(0); }},
      {"start", "file", 1, 1, "warm-start the first round from this nep.txt (default: nep.in's fine_tune, else fresh)",
       [&](const KeywordValues &v) { s.start_path = v.word(0); }},
      {"elements", "El1 ... ElN", ntypes, ntypes, "element of each atom type (default: nep.in's type list)",
       [&](const KeywordValues &v) {
         s.type_elements.clear();
         for (size_t t = 0; t < v.size(); ++t) s.type_elements.push_back(v.word(t));
       }},
      {"history", "file|none", 1, 1,
       "JSON-lines event history, appended (default: the model path + .history.jsonl)",
       [&](const KeywordValues &v) {
         s.history_path = v.word(0) == "none" ? "" : v.word(0);
         s.history_set = true;
       }},
      {"keep_rounds", "yes|no", 1, 1,
       "also write every adopted round's model as MODEL.roundN (mode active: its committee members as "
       "MODEL.roundN.memberK too) (default no)",
       [&](const KeywordValues &v) { s.keep_rounds = v.yes_no(0); }},
      {"mode", "passive|active", 1, 1, "passive (default) or active: the student drives, the teacher is computed on demand (see \"Mode active\")",
       [&](const KeywordValues &v) { s.active = v.choice(0, {"passive", "active"}) == 1; }},
  };
  for (auto &kw : active_keywords(s)) k.push_back(std::move(kw));
  return nep::KeywordTable("fix nep/train", std::move(k));
}

std::string fix_nep_train_usage(int ntypes)
{
  FixNEPTrainSettings s;
  return fix_nep_train_keywords(s, ntypes).usage("fix ID all nep/train");
}

FixNEPTrainSettings parse_fix_nep_train(const std::vector<std::string> &args, int ntypes)
{
  FixNEPTrainSettings s;
  s.act.adopt_after_student = -1;    // not given: 100 x every, once every is known
  const nep::KeywordTable table = fix_nep_train_keywords(s, ntypes);
  const std::vector<std::string> given = table.parse_args(args);
  if (s.every <= 0) throw Error("'every N' with N > 0 is required");
  for (const auto &[key, value] : {std::make_pair("buffer", &s.buffer_path), std::make_pair("model", &s.model_path),
                                   std::make_pair("input", &s.input_path)})
    if (value->empty()) throw Error(std::string("'") + key + "' needs a file name, not an empty string");
  if (!s.history_set) s.history_path = s.model_path + ".history.jsonl";
  if (s.active) {
    if (s.teacher.empty())
      throw Error("mode active needs 'teacher STYLE' (the teacher sub-style of pair_style hybrid/overlay)");
    if (s.select_threshold >= 0.0) throw Error("mode active selects by the committee; drop 'select'");
    if (s.act.true_units && !(s.act.audit > 0.0))
      throw Error("'threshold LO HI true' needs 'audit P' with P > 0: the calibration is fitted on audited frames");
    if (s.act.handback > s.act.hi)
      throw Error("handback H needs H <= HI of threshold: above HI the teacher would take over again at once");
    if (s.act.adopt_after_student < 0) s.act.adopt_after_student = 100 * static_cast<int64_t>(s.every);
    s.deploy = true;    // the student must be the latest model
  } else {
    for (auto g = given.rbegin(); g != given.rend(); ++g)    // the last one given, as LAMMPS reads them
      for (const char *key : kActiveOnly)
        if (*g == key) throw Error("keyword '" + *g + "' needs 'mode active'");
  }
  if (s.train_every <= 0) throw Error("train_every must be positive");
  if (s.epochs < 0) throw Error("epochs must be >= 0 (0: nep.in's epoch)");
  if (s.capacity < 1) throw Error("capacity must be at least 1");
  if (!(s.heldout >= 0.0 && s.heldout < 1.0)) throw Error("heldout must be in [0, 1)");
  if (s.threads < 1) throw Error("threads must be at least 1");
  return s;
}

}    // namespace nep_lmp
