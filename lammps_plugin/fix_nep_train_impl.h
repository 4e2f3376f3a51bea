/* -*- c++ -*- ----------------------------------------------------------
   lammps-nep: fix nep/train's private state, shared by fix_nep_train.cpp (sampling, rounds,
   restart) and fix_nep_train_active.cpp (mode active). Not installed; not for other code.
------------------------------------------------------------------------- */
#ifndef LMP_NEP_FIX_NEP_TRAIN_IMPL_H
#define LMP_NEP_FIX_NEP_TRAIN_IMPL_H

#include "fix_nep_train.h"

#include "nep/calculator.hpp"
#include "nep/error.hpp"
#include "nep/host_core.hpp"
#include "nep/model.hpp"
#include "nep/train/otf_active.hpp"
#include "nep/train/otf_buffer.hpp"
#include "nep/train/otf_round.hpp"
#include "nep/train/config.hpp"

#include <memory>
#include <string>
#include <vector>

namespace LAMMPS_NS {

class Pair;
class PairNEP;
class NeighList;

// rank 0's string (e.g. an error message, empty = fine) on every rank
std::string nep_bcast_string(std::string s, MPI_Comm world);

// rank 0 only
struct FixNEPTrain::Impl {
  nep::TrainConfig cfg;
  std::unique_ptr<nep::OtfBuffer> buffer;
  nep::OtfWorker worker;
  std::unique_ptr<nep::Model> model;          // latest adopted (or start) model
  std::vector<nep::Model> members;            // mode active: committee members 1..M-1 of that round
  std::unique_ptr<nep::Calculator> calc;      // that model, for selection and fresh-frame errors
  std::vector<int> model_type;                // LAMMPS type -> model type index
  bigint round_started_step = 0;
  nep::Calibration calibration;               // mode active: (deviation, true error) of teacher calls

  void set_model(const nep::Model &m, const std::vector<std::string> &type_elements)
  {
    model = std::make_unique<nep::Model>(m);
    calc.reset();
    model_type.assign(type_elements.size() + 1, -1);
    for (size_t t = 0; t < type_elements.size(); ++t)
      for (int k = 0; k < m.num_types(); ++k)
        if (m.elements[k] == type_elements[t]) model_type[t + 1] = k;
    for (size_t t = 0; t < type_elements.size(); ++t)
      if (model_type[t + 1] < 0) throw nep::Error("element " + type_elements[t] + " is not in the model");
    // the host backend (OpenMP, else Serial): safe beside the training thread, whose Serial
    // kernels share no Kokkos state with it (evaluator_impl.hpp, reduce_stage)
    calc = std::make_unique<nep::Calculator>(*model, nep::Precision::Double, nep::Backend::Host);
  }
};

// mode active, the same on every rank (docs/fix_nep_train.rst, "Mode active")
struct FixNEPTrain::Active {
  // ---- settings
  std::string teacher_name;      // the teacher: a sub-style of pair_style hybrid/overlay
  int members = 4;               // committee size M: the driving model and M-1 members
  double lo = 0.05, hi = 0.25;   // deviation thresholds (eV/Angstrom)
  bool true_units = false;       // thresholds in true-error units (deviation x calibration factor)
  bigint gap = 0;                // fewest steps between two teacher calls for labels or audits
  bigint budget = -1;            // teacher evaluations allowed in all (-1: no limit)
  double audit = 0.0;            // probability of auditing a check step the committee trusts
  bigint adopt_after = 0;        // a round's model is adopted this many steps after it started (teacher driving)
  bigint adopt_after_student = 0;  // ... when it started with the student driving (0: 10 x adopt_after)
  bigint first_round = 0;        // frames that start a round while the teacher drives (0: train_every)
  double fmax = 20.0;            // a teacher frame with a force above this (eV/A) is not buffered

  // ---- LAMMPS objects (set in init)
  Pair *teacher = nullptr;
  PairNEP *student = nullptr;
  NeighList *list = nullptr;     // this fix's full neighbour list (committee evaluation)

  // ---- committee on this rank: the driving model (index 0) and the members
  std::vector<std::unique_ptr<nep::HostCore>> cores;
  std::vector<std::string> member_text;   // members 1..M-1 (nep.txt text), for restarts
  std::vector<int> type_map;              // LAMMPS type -> model type
  std::vector<int> atom_type;             // per atom, scratch
  std::vector<std::vector<double>> cforce;  // per model: forces on local + ghost atoms (3 per atom)
  std::vector<double> fbackup;            // the student's forces while the teacher is computed
  std::vector<double> sigma;              // per owned atom: committee deviation (vector_atom)

  // ---- state
  bool teacher_drives = true;    // who computes this step's forces
  bool switch_pending = false;   // hand the driving over at the end of this step
  bigint steps = 0, teacher_evals = 0, teacher_steps = 0, checks = 0;
  bigint audits = 0, audit_misses = 0, exploded = 0, last_call_step = -1;
  double last_sigma = 0.0;       // latest max deviation (eV/A; 0 before the first committee)
  int rounds_at_handover = -1;   // rounds adopted when the teacher last took over (-1: never)
  bigint round_started_frames = 0, round_adopt_step = -1;
  double calib_factor = 1.0;
  bool budget_warned = false;

  bool have_committee() const { return static_cast<int>(cores.size()) == members; }
};

}    // namespace LAMMPS_NS

#endif
