/* ----------------------------------------------------------------------
   lammps-nep: fix nep/train's training rounds: a round starts on a snapshot of the buffer on
   the background thread (rank 0), is adopted at a fixed point (model written, deployed, the
   committee rebuilt), and every event goes to the history file.
------------------------------------------------------------------------- */

#include "fix_nep_train.h"

#include "comm.h"
#include "error.h"
#include "force.h"
#include "pair.h"
#include "update.h"
#include "utils.h"

#include "fix_nep_train_impl.h"
#include "nep_lammps_compat.h"
#include "nep_plugin_common.h"
#include "pair_nep.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

using namespace LAMMPS_NS;

void FixNEPTrain::start_round(int epochs)
{
  int started = 0;
  std::string err;
  if (comm->me == 0) {
    try {
      if (!impl->buffer->train().empty()) {
        nep::OtfRoundInput in;
        in.cfg = impl->cfg;
        const bool arrival = epochs > 0 && opt->final_stages > 0;    // a final round in arrival order
        in.train = arrival ? impl->buffer->train_in_arrival_order() : impl->buffer->train();
        if (arrival) in.arrival_stages = opt->final_stages;
        in.heldout = impl->buffer->heldout();
        in.has_start = impl->model != nullptr;
        if (in.has_start) in.start = *impl->model;
        in.round = static_cast<uint64_t>(rounds) + 1;
        in.epochs = epochs > 0 ? epochs : opt->epochs;
        in.min_updates = opt->min_updates;
        in.threads = opt->threads;
        if (act && epochs <= 0) {    // the committee: members warm-start from their previous models (or the start
                                     // model); a final round trains the driving model only, the members stay
          in.committee = act->members;
          in.member_reset = act->ctl.settings().member_reset;
          in.grade_reference = act->ctl.settings().grade;
          in.deviation_rms = act->ctl.settings().rms;
          if (!impl->members.empty()) in.member_starts = impl->members;
          else if (in.has_start) in.member_starts.assign(act->members - 1, *impl->model);
        }
        utils::logmesg(lmp, "fix nep/train: round {} started at step {} on {} training + {} held-out frames\n",
                       rounds + 1, update->ntimestep, in.train.size(), in.heldout.size());
        impl->round_started_step = update->ntimestep;
        impl->worker.start(std::move(in), opt->nice);
        started = 1;
      }
    } catch (std::exception &e) {
      err = e.what();
    }
  }
  err = nep_lmp::bcast_string(err, world);
  if (!err.empty()) error->all(FLERR, "fix nep/train: cannot start a training round: {}", err);
  MPI_Bcast(&started, 1, MPI_INT, 0, world);
  round_running = started != 0;
}

void FixNEPTrain::adopt_round()
{
  std::string err;
  double m[5] = {0, 0, 0, 0, -1.0};    // metrics, then the committee's reference deviation (-1: none)
  std::vector<std::string> member_texts;
  if (comm->me == 0) {
    try {
      const double t0 = MPI_Wtime();
      const bool waited = !impl->worker.finished();
      nep::OtfRoundResult r = impl->worker.join();
      if (!final_round_running || !r.members.empty()) impl->members = r.members;
      for (size_t k = 0; k < r.members.size(); ++k) {
        member_texts.push_back(nep::format_model(r.members[k]));
        nep::write_model(r.members[k], fmt::format("{}.member{}", opt->model_path, k + 1));
        if (opt->keep_rounds) nep::write_model(r.members[k], fmt::format("{}.round{}.member{}", opt->model_path, rounds + 1, k + 1));
      }
      const double waited_s = MPI_Wtime() - t0;
      if (r.reverted)
        error->warning(FLERR, "fix nep/train: round {} did not improve the model on its training frames; keeping "
                       "the previous model (if this repeats, lower lr in {})", rounds + 1, opt->input_path);
      impl->set_model(r.model, opt->type_elements);
      model_text = nep::format_model(*impl->model);
      nep::write_model(*impl->model, opt->model_path);
      if (opt->keep_rounds) nep::write_model(*impl->model, fmt::format("{}.round{}", opt->model_path, rounds + 1));
      m[0] = 1e3 * r.train_rmse_f;
      m[1] = 1e3 * r.heldout_rmse_f;
      m[2] = 1e3 * r.heldout_rmse_e;
      m[3] = 1e3 * r.train_rmse_e;
      m[4] = r.reference_deviation;
      std::string reset_list;
      for (int k : r.members_reset) reset_list += (reset_list.empty() ? "" : ",") + std::to_string(k);
      history_event(fmt::format(
          "\"event\":\"round\",\"round\":{},\"step\":{},\"started_step\":{},\"frames\":{},\"n_train\":{},"
          "\"n_heldout\":{},\"epochs\":{},\"train_seconds\":{:.6g},\"md_wait_seconds\":{:.6g},"
          "\"train_rmse_f_meV_per_A\":{:.9g},\"train_rmse_e_meV_per_atom\":{:.9g},"
          "\"train_rmse_v_meV_per_atom\":{:.9g},\"heldout_rmse_f_meV_per_A\":{:.9g},"
          "\"heldout_rmse_e_meV_per_atom\":{:.9g},\"fresh_rmse_f_meV_per_A\":{:.9g},\"reverted\":{},\"final\":{},"
          "\"final_stages\":{},\"members_reset\":[{}],\"reference_deviation_eV_per_A\":{:.9g},"
          "\"deviation_seconds\":{:.6g}",
          rounds + 1, update->ntimestep, impl->round_started_step, frames, r.n_train, r.n_heldout, r.epochs,
          r.seconds, waited ? waited_s : 0.0, m[0], m[3], 1e3 * r.train_rmse_v, m[1], m[2],
          fresh_n > 0 ? 1e3 * std::sqrt(fresh_se / fresh_n) : 0.0, r.reverted ? "true" : "false",
          final_round_running ? "true" : "false", final_round_running ? opt->final_stages : 0, reset_list,
          r.reference_deviation, r.deviation_seconds));
      utils::logmesg(lmp,
                     "fix nep/train: round {} done at step {}: {} epochs in {:.1f} s on {} frames; train F {:.1f} meV/A "
                     "E {:.2f} meV/atom; held-out ({} frames) F {:.1f} meV/A E {:.2f} meV/atom; {}wrote {}\n",
                     rounds + 1, update->ntimestep, r.epochs, r.seconds, r.n_train, m[0], m[3], r.n_heldout, m[1], m[2],
                     waited ? fmt::format("MD waited {:.1f} s; ", waited_s) : "", opt->model_path);
    } catch (std::exception &e) {
      err = e.what();
    }
  }
  err = nep_lmp::bcast_string(err, world);
  if (!err.empty()) error->all(FLERR, "fix nep/train: training round {} failed: {}", rounds + 1, err);
  MPI_Bcast(m, 5, MPI_DOUBLE, 0, world);
  model_text = nep_lmp::bcast_string(model_text, world);
  if (act) {
    int n = static_cast<int>(member_texts.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, world);
    member_texts.resize(n);
    for (auto &t : member_texts) t = nep_lmp::bcast_string(t, world);
  }
  for (int k = 0; k < 4; ++k) metrics[k] = m[k];
  ++rounds;
  round_running = false;
  final_round_running = false;
  fresh_se = 0.0;    // fresh-frame errors restart with the new model
  fresh_n = 0;
  if (opt->deploy) deploy_model();
  if (act) {    // a final round brings no members: the committee is the new model with the members it had
    if (m[4] > 0.0) act->ctl.set_reference(m[4]);    // (and the reference deviation it had)
    if (member_texts.empty()) member_texts = act->member_text;
    adopt_committee(member_texts);
  }
}

void FixNEPTrain::deploy_model()
{
  nep::Model m;
  try {
    m = nep::parse_model(model_text, opt->model_path);
  } catch (std::exception &e) {
    error->all(FLERR, "fix nep/train: cannot deploy: {}", e.what());
  }
  int found = 0;
  std::vector<Pair *> seen;
  for (int nsub = 1;; ++nsub) {
    Pair *p = force->pair_match("^nep", 0, nsub);
    if (!p || std::find(seen.begin(), seen.end(), p) != seen.end()) break;
    seen.push_back(p);
    auto *pn = dynamic_cast<PairNEP *>(p);
    if (!pn) continue;
    std::string why;
    if (pn->replace_model(m, why)) ++found;
    else if (comm->me == 0) error->warning(FLERR, "fix nep/train: deploy skipped for a nep pair style: {}", why);
  }
  if (comm->me == 0) {
    if (found) utils::logmesg(lmp, "fix nep/train: deployed round {} model into {} nep pair style(s)\n", rounds, found);
    else error->warning(FLERR, "fix nep/train: deploy yes, but no active nep pair style took the model");
  }
}

// One JSON object per line: {"event":..., "wall_seconds":...}. Appended and flushed per event, so a
// killed run keeps every line written; after a restart from an earlier point a round may appear
// twice (readers keep the last line of each round number).
void FixNEPTrain::history_event(const std::string &fields)
{
  if (comm->me != 0 || opt->history_path.empty()) return;
  FILE *fp = fopen(opt->history_path.c_str(), "a");
  if (!fp) {
    error->warning(FLERR, "fix nep/train: cannot append to history file {}: {}", opt->history_path, strerror(errno));
    return;
  }
  fmt::print(fp, "{{{},\"wall_seconds\":{:.6g}}}\n", fields, MPI_Wtime() - created_at);
  fclose(fp);
}

