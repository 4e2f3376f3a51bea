/* -*- c++ -*- ----------------------------------------------------------
   lammps-nep: fix nep/train's private state, shared by fix_nep_train.cpp (sampling, rounds,
   restart) and fix_nep_train_active.cpp (mode active). Not installed; not for other code.
------------------------------------------------------------------------- */
#ifndef LMP_NEP_FIX_NEP_TRAIN_IMPL_H
#define LMP_NEP_FIX_NEP_TRAIN_IMPL_H

#include "fix_nep_train.h"
#include "fix_nep_train_settings.h"
#include "nep_plugin_common.h"

#include "nep/calculator.hpp"
#include "nep/error.hpp"
#include "nep/host_core.hpp"
#include "nep/model.hpp"
#include "nep/train/active_controller.hpp"
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

  void set_model(const nep::Model &m, const std::vector<std::string> &type_elements)
  {
    model = std::make_unique<nep::Model>(m);
    calc.reset();
    int missing = -1;
    model_type = nep::map_types(*model, type_elements, &missing);
    if (missing >= 0) throw nep::Error("element " + type_elements[missing] + " is not in the model");
    // the host backend (OpenMP, else Serial): safe beside the training thread, whose Serial
    // kernels share no Kokkos state with it (evaluator_impl.hpp, reduce_stage)
    calc = std::make_unique<nep::Calculator>(*model, nep::Precision::Double, nep::Backend::Host);
  }
};

// mode active, the same on every rank (docs/fix_nep_train.rst, "Mode active")
struct FixNEPTrain::Active {
  explicit Active(const nep::ActiveSettings &s, uint64_t seed, int64_t every, int64_t train_every)
      : ctl(s, seed, every, train_every), members(s.members)
  {
  }
  // the policy: thresholds, gap, budget, audits, calibration, who drives, counters, round schedule
  nep::ActiveController ctl;
  int members;                   // committee size M: the driving model and M-1 members

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

  bool have_committee() const { return static_cast<int>(cores.size()) == members; }
};

}    // namespace LAMMPS_NS

#endif
