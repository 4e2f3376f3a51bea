// The background thread of on-the-fly rounds (include/nep/train/otf_round.hpp, OtfWorker).
//
// Kokkos must not be finalised under a running training thread: its next Kokkos view would abort
// the process (SIGABRT) instead of the ERROR that ended the run. LAMMPS finalises Kokkos itself on
// an ERROR (Error::all and Error::one call KokkosLMP::finalize() before exit or MPI_Abort) and the
// core does at exit; so every live worker is registered, and a Kokkos finalize hook (run first thing
// in Kokkos::finalize) stops and joins them.
#include "nep/train/otf_round.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <mutex>
#include <set>

#include "geometry_store.hpp"
#include "nep/error.hpp"

namespace nep {

namespace {
std::mutex g_live_mutex;
bool g_hook_pushed = false;    // a finalize hook is pushed for the current Kokkos session
std::set<OtfWorker*>& live_workers() {
  static auto* live = new std::set<OtfWorker*>;    // never destroyed: a hook may run at exit
  return *live;
}

void stop_live_workers() {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  g_hook_pushed = false;    // Kokkos drops its hooks as it runs them
  for (OtfWorker* w : live_workers()) w->stop_and_wait();
}

void register_worker(OtfWorker* w) {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  if (!g_hook_pushed && Kokkos::is_initialized()) {
    Kokkos::push_finalize_hook(stop_live_workers);
    g_hook_pushed = true;
  }
  live_workers().insert(w);
}

void unregister_worker(OtfWorker* w) {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  live_workers().erase(w);
}
}  // namespace

void OtfWorker::stop_and_wait() {
  if (thread_.joinable()) {
    stop_ = true;
    thread_.join();
  }
}

OtfWorker::OtfWorker() : geometry_(std::make_shared<train::GeometryStore>()) {}

OtfWorker::~OtfWorker() {
  unregister_worker(this);
  stop_and_wait();
}

void OtfWorker::start(OtfRoundInput in, int nice) {
  if (running_) throw Error("on-the-fly training: a round is already running");
  stop_ = false;
  done_ = false;
  error_.clear();
  running_ = true;
  register_worker(this);
  if (!in.geometry) in.geometry = geometry_;
  thread_ = std::thread([this, nice](OtfRoundInput input) {
    if (nice > 0) setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), nice);
    try {
      if (input.geometry) {  // keep only the geometries of this round's frames
        std::vector<const TrainingFrame*> frames;
        for (const auto* set : {&input.train, &input.heldout})
          for (const TrainingFrame& f : *set) frames.push_back(&f);
        input.geometry->retain(frames);
      }
      result_ = train_otf_round(input, &stop_);
    } catch (const std::exception& e) {
      error_ = e.what();
    } catch (...) {
      error_ = "unknown error in the training thread";
    }
    done_ = true;
  }, std::move(in));
}

OtfRoundResult OtfWorker::join() {
  if (!running_) throw Error("on-the-fly training: no round to join");
  if (thread_.joinable()) thread_.join();    // (not after stop_and_wait)
  running_ = false;
  if (!error_.empty()) throw Error(error_);
  return std::move(result_);
}

}  // namespace nep
