/* -*- c++ -*- ----------------------------------------------------------
   lammps-nep: fix nep/train — on-the-fly NEP training from the running ("teacher") pair style.
   Samples frames into an HDF5 buffer, trains rounds on a background thread through the
   lammps-nep trainer library, writes and optionally deploys nep.txt (docs/fix_nep_train.rst).
   Mode active: the deployed NEP (a sub-style of pair hybrid/overlay) drives MD, a committee
   says when it is unsure, and only then is the teacher sub-style computed
   (fix_nep_train_active.cpp). No LibTorch, Kokkos or HDF5 in this header.
------------------------------------------------------------------------- */
#ifndef LMP_NEP_FIX_NEP_TRAIN_H
#define LMP_NEP_FIX_NEP_TRAIN_H

#include "fix.h"

#include <memory>
#include <string>
#include <vector>

namespace nep_lmp {
struct FixNEPTrainSettings;
}
namespace nep {
struct TrainingFrame;
}

namespace LAMMPS_NS {

class FixNEPTrain : public Fix {
 public:
  FixNEPTrain(class LAMMPS *, int, char **);
  ~FixNEPTrain() override;
  int setmask() override;
  void init() override;
  void setup(int) override;
  int modify_param(int narg, char **arg) override;
  void pre_reverse(int, int) override;
  void end_of_step() override;
  void post_run() override;
  void init_list(int, class NeighList *) override;
  double compute_vector(int) override;
  void write_restart(FILE *) override;
  void restart(char *) override;
  int pack_reverse_comm(int, int, double *) override;
  void unpack_reverse_comm(int, int *, double *) override;
  double memory_usage() override;

  struct Impl;      // rank-0 state: buffer, trainer thread, selection model (fix_nep_train_impl.h)
  struct Active;    // mode active, every rank: committee, teacher, the policy controller (same header)

 private:
  std::unique_ptr<Impl> impl;
  std::unique_ptr<Active> act;    // null in passive mode
  // ---- settings (same on every rank): the keyword table's (fix_nep_train_settings.cpp)
  std::unique_ptr<nep_lmp::FixNEPTrainSettings> opt;

  // ---- state (same on every rank)
  bigint next_sample = -1;         // step of the next sample
  bigint frames = 0;               // frames in the buffer
  bigint next_round_at = 0;        // buffer size at which the next round is due
  bigint rejected = 0;             // frames rejected (non-finite teacher output, or selection)
  int rounds = 0;                  // rounds adopted
  bool round_running = false;
  double metrics[5] = {0, 0, 0, 0, 0};   // latest round: train F, held-out F (meV/A), held-out E, train E (meV/atom)
  double fresh_se = 0.0;           // current model on frames it never saw: sum of squared errors
  bigint fresh_n = 0;
  bigint restart_frames = -1;      // frames the restart file expects in the buffer
  bool restart_round_running = false;  // a round was in flight when the restart was written
  bool final_round_running = false;    // the round in flight is a run's final round (final_round E)
  bool buffer_open_done = false;
  std::string model_text;          // latest adopted model (nep.txt text), every rank

  // ---- sampling scratch
  std::vector<double> fcopy;       // teacher forces of local + ghost atoms (3 per atom)
  bool sampled_now = false;
  int reverse_width = 3;           // what pack/unpack_reverse_comm carry: 3 (fcopy) or 3M (committee)

  void parse_args(int narg, char **arg);    // fix_nep_train_args.cpp
  void read_nep_in();                       // nep.in on rank 0, its elements checked on every rank
  void schedule_next_sample();
  void set_sampling_masks(bool sampling_next);
  void request_tally(bigint step);
  void sample();
  void copy_forces();
  // what happened to a labelled frame (every rank): kept in the buffer; the current model's error
  // on it before training on it (max over atoms and RMS of the force error; 0 without a model)
  struct FrameOutcome {
    bool kept = false;
    double max_err = 0.0, rmse = 0.0;
  };
  // fcopy (teacher forces of owned atoms, ghosts folded) + this rank's energy and virial
  // (xx yy zz xy xz yz) -> checked frame on rank 0, scored with the current model, buffered
  // unless rejected: non-finite, not selected (passive select error), or exploded (active fmax).
  // scored: the current model's error on the frame already reduced over ranks ({sum of squared
  // force components, max per-atom error, atoms}: mode active, from the committee's driving model), so
  // rank 0 does not evaluate the whole frame again; null: rank 0 scores it
  FrameOutcome take_frame(const double ev_local[7], bool active_frame, const double *scored = nullptr);
  bool gather_frame(const double ev_total[7], nep::TrainingFrame &fr, std::vector<int> &types);
  void score_frame(const nep::TrainingFrame &fr, const std::vector<int> &types, double &se, double &max_err,
                   bigint &n);
  // ---- carve CORE K (fix_nep_train_carve.cpp): frames carved around the most uncertain atoms
  double carve_outer = 0.0;        // region radius: CORE + 2 rc (nep.in's largest cutoff)
  bool carve_warned = false;       // the box was too small for a region (whole frames instead)
  std::vector<bigint> carved_centres;    // rank 0: atom IDs of the last call's centres (history)
  std::vector<double> carve_pre;   // this call's centres (3 each), relative to boxlo
  struct CarveHit {                // an owned atom near a centre: displacement (minimum image)
    int i = 0, c = 0;
    double d[3] = {0, 0, 0}, r2 = 0.0;
  };
  std::vector<CarveHit> carve_hits;    // this call's (carve_scan)
  void carve_scan(double radius);
  bool carve_cut = false;          // the teacher was computed near carve_pre only
  bool carve_teacher_plan();
  std::vector<char> atoms_near_centres(double radius) const;
  double teacher_cutoff() const;
  bool carve_fits_box() const;
  std::string carved_json() const;
  std::vector<double> carve_centres(const double *key);
  bool gather_carved(const double *key, std::vector<nep::TrainingFrame> &out, std::vector<std::vector<int>> &types);
  // ---- mode active (fix_nep_train_active.cpp)
  void active_init();
  void active_setup();
  void active_after_setup();
  void budget_check(bigint step);
  void active_pre_reverse(int eflag, int vflag);
  void student_error(double out[3]);
  void active_end_of_step();
  void active_handover(bigint step);    // the planned hand-over, if any
  void active_probe(bigint step);       // probe P: a hand-back check between check steps
  void active_adopt(bigint step);       // a due round adopted
  double active_vector(int i) const;
  double committee_deviation();
  bool call_teacher(int eflag, int vflag, bool keep_forces);
  void set_driver(bool teacher);
  void adopt_committee(const std::vector<std::string> &members);
  void start_round(int epochs = 0);    // epochs > 0: this many instead of the rounds' own (a final round)
  void adopt_round();
  void deploy_model();
  void history_event(const std::string &json_fields);    // rank 0: append {"event":...} line
  double created_at = 0.0;         // MPI_Wtime() when the fix was created
  class Compute *c_pe = nullptr, *c_press = nullptr;
  std::string id_pe, id_press;
};

}    // namespace LAMMPS_NS

#endif
