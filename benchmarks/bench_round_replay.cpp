// Replays the training rounds of a fix nep/train run offline, to study how a round's length (or
// the learning rate) changes what the rounds learn, without rerunning the MD:
//   bench_round_replay [--final E [--stages S] [--round R]] [--out MODEL] [--store 0|1] [--committee M]
//                      [--workers W] BUFFER.h5 HISTORY.jsonl NEP.IN SEED HELDOUT
//                      [MIN_UPDATES=300] [LR] [THREADS=2]
// BUFFER.h5, HISTORY.jsonl: the run's buffer and history; NEP.IN, SEED, HELDOUT: its nep.in, fix
// seed and heldout fraction. Each non-final round of the history is trained again as the fix
// trains its driving model (train_otf_round, committee 1: members never change the driving model),
// on the buffer's first n_train training frames (the fix's split rule, OtfBuffer::is_heldout), its
// held-out frames written before that round, warm-started from the previous replayed round, with
// the round's own epoch count and MIN_UPDATES; LR replaces nep.in's lr. With the run's own settings
// the replay gives the run's rounds while the reservoir holds every frame (capacity >= frames).
// Prints per round: training frames, epochs, train and held-out force RMSE (meV/A), seconds.
// --final E: then the run's final round (fix nep/train final_round E), warm-started from the last
// replayed round, or with --stages S retrained in arrival order (final_stages S); --round R: its
// round number as in the run's history (seeds the batch order); HISTORY "-": no rounds before it.
// --out MODEL: write the last model (and members as MODEL.member1 ...). --store 0: every round builds its frames' neighbour lists and
// pair bases again (as before the fix's rounds kept them: OtfWorker's geometry store); default 1,
// the rounds run on an OtfWorker as in the fix. --committee M: each round also trains M-1 members
// (bootstrap resamples, each warm-started from its previous round's self, as the fix's rounds; the
// driving model is the same bytes); --workers W: OtfRoundInput::workers (0, default: M models side by
// side on min(THREADS, M) workers; 1: one after another). Prints the total wall seconds of the
// rounds (members included) at the end.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "nep/calculator.hpp"
#include "nep/data/frame_store.hpp"
#include "nep/train/config.hpp"
#include "nep/train/otf_buffer.hpp"
#include "nep/train/otf_round.hpp"

namespace {
// the number after "key": on a history line (its lines are flat JSON objects)
double json_number(const std::string& line, const std::string& key) {
  const size_t at = line.find("\"" + key + "\":");
  if (at == std::string::npos) throw std::runtime_error("history line without " + key + ": " + line);
  return std::atof(line.c_str() + at + key.size() + 3);
}
}  // namespace

int main(int argc, char** argv) {
  int final_epochs = 0, final_stages = 0;
  uint64_t final_round = 0;  // the final round's number (seeds its batch order); 0: replayed rounds + 1
  std::string out_path;
  bool store = true;
  int committee = 1, workers = 0;
  while (argc > 2 && std::string(argv[1]).rfind("--", 0) == 0) {
    const std::string opt = argv[1];
    if (opt == "--final") final_epochs = std::atoi(argv[2]);
    else if (opt == "--stages") final_stages = std::atoi(argv[2]);
    else if (opt == "--out") out_path = argv[2];
    else if (opt == "--round") final_round = std::strtoull(argv[2], nullptr, 10);
    else if (opt == "--store") store = std::atoi(argv[2]) != 0;
    else if (opt == "--committee") committee = std::atoi(argv[2]);
    else if (opt == "--workers") workers = std::atoi(argv[2]);
    else break;
    argv[2] = argv[0];
    argv += 2;
    argc -= 2;
  }
  if (argc < 6) {
    std::fprintf(stderr, "usage: bench_round_replay BUFFER.h5 HISTORY.jsonl NEP.IN SEED HELDOUT [MIN_UPDATES] [LR] [THREADS]\n");
    return 2;
  }
  try {
    nep::KokkosSession kokkos(argc > 8 ? std::atoi(argv[8]) : 2);
    const std::vector<nep::TrainingFrame> frames = nep::read_frame_store(argv[1]);
    nep::TrainConfig cfg = nep::read_train_config(argv[3]);
    cfg.seed = std::strtoull(argv[4], nullptr, 10);
    const double heldout = std::atof(argv[5]);
    const int min_updates = argc > 6 ? std::atoi(argv[6]) : 300;
    if (argc > 7) cfg.lr = std::atof(argv[7]);
    // training frames in store order, each with the number of held-out frames written before it
    std::vector<const nep::TrainingFrame*> train;
    std::vector<size_t> held_before;
    std::vector<nep::TrainingFrame> held;
    for (size_t k = 0; k < frames.size(); ++k) {
      if (nep::OtfBuffer::is_heldout(cfg.seed, heldout, static_cast<int64_t>(k))) {
        held.push_back(frames[k]);
      } else {
        train.push_back(&frames[k]);
        held_before.push_back(held.size());
      }
    }
    std::ifstream history;
    if (std::string(argv[2]) != "-") {
      history.open(argv[2]);
      if (!history) throw std::runtime_error(std::string("cannot read ") + argv[2]);
    }
    std::printf("%5s %7s %6s %12s %12s %8s\n", "round", "n_train", "epochs", "train_F", "heldout_F", "seconds");
    nep::Model model;
    std::vector<nep::Model> members;  // the previous round's committee members
    nep::OtfWorker worker;  // with --store 1 (the default) the rounds run on it, with its geometry store
    double total_seconds = 0.0;
    bool has_model = false;
    uint64_t round = 0;
    // one round as the fix trains it: the first n training frames and the first n_held held-out
    // frames, warm-started from the previous model; prints its line
    auto train_round = [&](size_t n, size_t n_held, uint64_t number, int epochs, int stages, const std::string& label) {
      nep::OtfRoundInput in;
      in.cfg = cfg;
      for (size_t i = 0; i < n; ++i) in.train.push_back(*train[i]);
      in.heldout.assign(held.begin(), held.begin() + static_cast<long>(n_held));
      in.has_start = has_model;
      if (has_model) in.start = model;
      in.round = number;
      in.epochs = epochs;
      in.min_updates = min_updates;
      in.threads = argc > 8 ? std::atoi(argv[8]) : 2;
      in.arrival_stages = stages;
      if (stages == 0) {
        in.committee = committee;
        in.workers = workers;
        in.member_starts = members;
      }
      const auto t0 = std::chrono::steady_clock::now();
      nep::OtfRoundResult r;
      if (store) {
        worker.start(std::move(in));
        r = worker.join();
      } else {
        r = nep::train_otf_round(in, nullptr);
      }
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      total_seconds += wall;
      model = std::move(r.model);
      if (stages == 0) members = std::move(r.members);
      has_model = true;
      std::printf("%5s %7d %6d %12.1f %12.1f %8.1f\n", label.c_str(), r.n_train, r.epochs, 1e3 * r.train_rmse_f,
                  1e3 * r.heldout_rmse_f, wall);
      std::fflush(stdout);
    };
    for (std::string line; std::getline(history, line);) {
      if (line.find("\"event\":\"round\"") == std::string::npos || line.find("\"final\":true") != std::string::npos) continue;
      const size_t n = static_cast<size_t>(json_number(line, "n_train"));
      if (n == 0 || n > train.size()) throw std::runtime_error("round with " + std::to_string(n) + " training frames; the buffer has " + std::to_string(train.size()));
      ++round;
      train_round(n, held_before[n - 1], round, static_cast<int>(json_number(line, "epochs")), 0, std::to_string(round));
    }
    // the fix's final round (post_run): the whole buffer (in store order = arrival order) and every
    // held-out frame
    if (final_epochs > 0)
      train_round(train.size(), held.size(), final_round > 0 ? final_round : round + 1, final_epochs, final_stages, "final");
    if (!out_path.empty() && has_model) {
      nep::write_model(model, out_path);
      for (size_t m = 0; m < members.size(); ++m) nep::write_model(members[m], out_path + ".member" + std::to_string(m + 1));
    }
    std::printf("total %.1f s (store %d, committee %d, workers %d)\n", total_seconds, store ? 1 : 0, committee, workers);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_round_replay: %s\n", e.what());
    return 1;
  }
  return 0;
}
