/* ----------------------------------------------------------------------
   lammps-nep: fix nep/train's keywords (docs/fix_nep_train.rst, Syntax): parsed and checked
   on every rank, before anything is read or opened.
------------------------------------------------------------------------- */

#include "fix_nep_train.h"

#include "atom.h"
#include "error.h"
#include "utils.h"

#include "fix_nep_train_impl.h"
#include "nep_plugin_common.h"

#include <cctype>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

using namespace LAMMPS_NS;

void FixNEPTrain::parse_args(int narg, char **arg)
{
  bool history_set = false;
  const std::string usage =
      "fix ID all nep/train every N buffer FILE.h5 model FILE.txt input nep.in [seed S] [train_every K] [epochs E] [min_updates U] "
      "[capacity C] [heldout F] [select every|error X] [threads T] [nice N] [deploy yes|no] [start nep.txt] "
      "[elements El1 ... ElN] [history FILE|none] [keep_rounds yes|no] [mode passive|active] [teacher STYLE] [committee M] "
      "[threshold LO HI [true]] [gap G] [budget B|none] [audit P] [adopt_after N [M]] [first_round K] [fmax F]";
  auto active_settings = std::make_unique<Active>();
  bool active_mode = false;
  std::string active_key;    // an active-mode keyword given (error in passive mode)
  if (igroup != 0) error->all(FLERR, "fix nep/train must use group all");
  nep_lmp::check_units(lmp, "fix nep/train");
  int iarg = 3;
  while (iarg < narg) {
    const std::string key = arg[iarg];
    auto need = [&](int n) {
      if (iarg + n >= narg) error->all(FLERR, "Illegal fix nep/train command: '{}' needs a value. Usage: {}", key, usage);
    };
    if (key == "every") {
      need(1);
      every = utils::inumeric(FLERR, arg[iarg + 1], false, lmp);
      iarg += 2;
    } else if (key == "buffer") {
      need(1);
      buffer_path = arg[iarg + 1];
      iarg += 2;
    } else if (key == "model") {
      need(1);
      model_path = arg[iarg + 1];
      iarg += 2;
    } else if (key == "input") {
      need(1);
      input_path = arg[iarg + 1];
      iarg += 2;
    } else if (key == "start") {
      need(1);
      start_path = arg[iarg + 1];
      iarg += 2;
    } else if (key == "seed") {
      need(1);
      seed = utils::bnumeric(FLERR, arg[iarg + 1], false, lmp);
      iarg += 2;
    } else if (key == "train_every") {
      need(1);
      train_every = utils::inumeric(FLERR, arg[iarg + 1], false, lmp);
      iarg += 2;
    } else if (key == "epochs") {
      need(1);
      epochs = utils::inumeric(FLERR, arg[iarg + 1], false, lmp);
      iarg += 2;
    } else if (key == "min_updates") {
      need(1);
      min_updates = utils::inumeric(FLERR, arg[iarg + 1], false, lmp);
      if (min_updates < 0) error->all(FLERR, "fix nep/train: min_updates must be >= 0");
      iarg += 2;
    } else if (key == "capacity") {
      need(1);
      capacity = utils::bnumeric(FLERR, arg[iarg + 1], false, lmp);
      iarg += 2;
    } else if (key == "heldout") {
      need(1);
      heldout = utils::numeric(FLERR, arg[iarg + 1], false, lmp);
      iarg += 2;
    } else if (key == "select") {
      need(1);
      if (strcmp(arg[iarg + 1], "every") == 0) {
        select_threshold = -1.0;
        iarg += 2;
      } else if (strcmp(arg[iarg + 1], "error") == 0) {
        need(2);
        select_threshold = utils::numeric(FLERR, arg[iarg + 2], false, lmp);
        if (select_threshold < 0) error->all(FLERR, "fix nep/train: select error X needs X >= 0 (eV/Angstrom)");
        iarg += 3;
      } else {
        error->all(FLERR, "fix nep/train: select must be 'every' or 'error X', not '{}'", arg[iarg + 1]);
      }
    } else if (key == "threads") {
      need(1);
      threads = utils::inumeric(FLERR, arg[iarg + 1], false, lmp);
      iarg += 2;
    } else if (key == "nice") {
      need(1);
      nice = utils::inumeric(FLERR, arg[iarg + 1], false, lmp);
      iarg += 2;
    } else if (key == "deploy") {
      need(1);
      if (strcmp(arg[iarg + 1], "yes") == 0) deploy = true;
      else if (strcmp(arg[iarg + 1], "no") == 0) deploy = false;
      else error->all(FLERR, "fix nep/train: deploy must be yes or no, not '{}'", arg[iarg + 1]);
      iarg += 2;
    } else if (key == "history") {
      need(1);
      history_path = strcmp(arg[iarg + 1], "none") == 0 ? "" : arg[iarg + 1];
      history_set = true;
      iarg += 2;
    } else if (key == "keep_rounds") {
      need(1);
      if (strcmp(arg[iarg + 1], "yes") == 0) keep_rounds = true;
      else if (strcmp(arg[iarg + 1], "no") == 0) keep_rounds = false;
      else error->all(FLERR, "fix nep/train: keep_rounds must be yes or no, not '{}'", arg[iarg + 1]);
      iarg += 2;
    } else if (key == "mode") {
      need(1);
      if (strcmp(arg[iarg + 1], "active") == 0) active_mode = true;
      else if (strcmp(arg[iarg + 1], "passive") == 0) active_mode = false;
      else error->all(FLERR, "fix nep/train: mode must be passive or active, not '{}'", arg[iarg + 1]);
      iarg += 2;
    } else if (key == "teacher") {
      need(1);
      active_settings->teacher_name = arg[iarg + 1];
      active_key = key;
      iarg += 2;
    } else if (key == "committee") {
      need(1);
      active_settings->members = utils::inumeric(FLERR, arg[iarg + 1], false, lmp);
      if (active_settings->members < 2) error->all(FLERR, "fix nep/train: committee needs at least 2 models");
      active_key = key;
      iarg += 2;
    } else if (key == "threshold") {
      need(2);
      active_settings->lo = utils::numeric(FLERR, arg[iarg + 1], false, lmp);
      active_settings->hi = utils::numeric(FLERR, arg[iarg + 2], false, lmp);
      if (!(active_settings->lo > 0.0 && active_settings->hi > active_settings->lo))
        error->all(FLERR, "fix nep/train: threshold LO HI needs 0 < LO < HI (eV/Angstrom)");
      iarg += 3;
      if (iarg < narg && strcmp(arg[iarg], "true") == 0) {
        active_settings->true_units = true;
        ++iarg;
      }
      active_key = key;
    } else if (key == "gap" || key == "adopt_after" || key == "first_round") {
      need(1);
      const bigint v = utils::bnumeric(FLERR, arg[iarg + 1], false, lmp);
      if (v < 0) error->all(FLERR, "fix nep/train: {} must be >= 0", key);
      (key == "gap" ? active_settings->gap : key == "adopt_after" ? active_settings->adopt_after
                                                                  : active_settings->first_round) = v;
      active_key = key;
      iarg += 2;
      if (key == "adopt_after" && iarg < narg && isdigit(arg[iarg][0])) {    // adopt_after N [M]
        active_settings->adopt_after_student = utils::bnumeric(FLERR, arg[iarg], false, lmp);
        ++iarg;
      }
    } else if (key == "budget") {
      need(1);
      active_settings->budget =
          strcmp(arg[iarg + 1], "none") == 0 ? -1 : utils::bnumeric(FLERR, arg[iarg + 1], false, lmp);
      if (strcmp(arg[iarg + 1], "none") != 0 && active_settings->budget < 0)
        error->all(FLERR, "fix nep/train: budget must be >= 0 or none");
      active_key = key;
      iarg += 2;
    } else if (key == "audit" || key == "fmax") {
      need(1);
      const double v = utils::numeric(FLERR, arg[iarg + 1], false, lmp);
      if (key == "audit" && !(v >= 0.0 && v <= 1.0)) error->all(FLERR, "fix nep/train: audit P needs 0 <= P <= 1");
      if (key == "fmax" && !(v > 0.0)) error->all(FLERR, "fix nep/train: fmax must be positive (eV/Angstrom)");
      (key == "audit" ? active_settings->audit : active_settings->fmax) = v;
      active_key = key;
      iarg += 2;
    } else if (key == "elements") {
      type_elements.clear();
      for (int t = 0; t < atom->ntypes; ++t) {
        need(1);
        type_elements.emplace_back(arg[++iarg]);
      }
      ++iarg;
    } else {
      error->all(FLERR, "Illegal fix nep/train command: unknown keyword '{}'. Usage: {}", key, usage);
    }
  }
  if (every <= 0) error->all(FLERR, "fix nep/train: 'every N' with N > 0 is required. Usage: {}", usage);
  for (auto req : {std::make_pair("buffer", &buffer_path), std::make_pair("model", &model_path),
                   std::make_pair("input", &input_path)})
    if (req.second->empty()) error->all(FLERR, "fix nep/train: keyword '{}' is required. Usage: {}", req.first, usage);
  if (!history_set) history_path = model_path + ".history.jsonl";
  if (active_mode) {
    if (active_settings->teacher_name.empty())
      error->all(FLERR, "fix nep/train: mode active needs 'teacher STYLE' (the teacher sub-style of pair_style "
                        "hybrid/overlay). Usage: {}", usage);
    if (select_threshold >= 0.0) error->all(FLERR, "fix nep/train: mode active selects by the committee; drop 'select'");
    act = std::move(active_settings);
    if (act->adopt_after == 0) act->adopt_after = 10 * static_cast<bigint>(every);
    if (act->adopt_after_student == 0) act->adopt_after_student = 10 * act->adopt_after;
    deploy = true;    // the student must be the latest model
  } else if (!active_key.empty()) {
    error->all(FLERR, "fix nep/train: keyword '{}' needs 'mode active'", active_key);
  }
  if (train_every <= 0) error->all(FLERR, "fix nep/train: train_every must be positive");
  if (epochs < 0) error->all(FLERR, "fix nep/train: epochs must be >= 0 (0: nep.in's epoch)");
  if (capacity < 1) error->all(FLERR, "fix nep/train: capacity must be at least 1");
  if (!(heldout >= 0.0 && heldout < 1.0)) error->all(FLERR, "fix nep/train: heldout must be in [0, 1)");
  if (threads < 1) error->all(FLERR, "fix nep/train: threads must be at least 1");
}
