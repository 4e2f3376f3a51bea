/* -*- c++ -*- ----------------------------------------------------------
   lammps-nep: fix nep/train's keywords, one table (docs/fix_nep_train.rst, Syntax). Free of
   LAMMPS headers, so tests/test_keyword_tables.cpp checks the table, its usage text and the
   docs' keyword list without LAMMPS.
------------------------------------------------------------------------- */
#ifndef LMP_NEP_FIX_NEP_TRAIN_SETTINGS_H
#define LMP_NEP_FIX_NEP_TRAIN_SETTINGS_H

#include "nep/keyword_table.hpp"
#include "nep/train/active_controller.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace nep_lmp {

struct FixNEPTrainSettings {
  int every = 0;                     // sample every this many steps
  std::string buffer_path, model_path, input_path, start_path;
  std::string history_path;          // JSON lines (rank 0); empty: none
  bool history_set = false;          // given (else MODEL.history.jsonl)
  int64_t seed = 1;
  int train_every = 10;              // a round is due every this many kept frames
  int epochs = 0;                    // epochs per round (0: nep.in's epoch)
  int min_updates = 0;               // at least this many optimiser updates per round (0: off)
  int final_epochs = 0;              // a final round of this many epochs at the end of each run (0: none)
  int final_stages = 0;              // > 0: the final round retrains in arrival order in this many stages first
  int64_t capacity = 1000;           // training frames held in memory (reservoir)
  double heldout = 0.1;              // held-out fraction
  double select_threshold = -1.0;    // select error X (eV/A); < 0: keep every frame
  double carve_core = 0.0;           // carve CORE K: labelled radius around each centre (Angstrom)
  int carve_regions = 0;             // ... and at most K regions a teacher call (0: whole frames)
  int threads = 1, nice = 0;
  bool deploy = false;
  bool keep_rounds = false;          // also write MODEL.roundN for every adopted round
  std::vector<std::string> type_elements;    // element of each atom type ([t-1]); empty: nep.in's
  bool active = false;               // mode active
  std::string teacher;               // mode active: the teacher sub-style
  nep::ActiveSettings act;           // mode active: the controller's settings
};

// The table, writing into `s`; ntypes: atom types (the arity of 'elements')
nep::KeywordTable fix_nep_train_keywords(FixNEPTrainSettings &s, int ntypes);

// "fix ID all nep/train every N buffer FILE.h5 ..." from the table
std::string fix_nep_train_usage(int ntypes);

// Parse and check the keywords after "fix ID group nep/train"; throws nep::Error with the message
// (without the "fix nep/train: " prefix, which the caller adds)
FixNEPTrainSettings parse_fix_nep_train(const std::vector<std::string> &args, int ntypes);

}    // namespace nep_lmp

#endif
