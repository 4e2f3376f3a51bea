// Background batch assembly: a producer thread walks an epoch's batch plan and fetches each
// frame's neighbour list and pair basis (from the cache, or built now when the cache had no
// room) while the main thread computes the previous batch. At most `depth` batches wait ready. The plan is fixed
// before the thread starts, so the order of batches never depends on timing.
#pragma once
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "dataset.hpp"
#include "nep/timing.hpp"

namespace nep {
namespace train {

struct Batch {
  std::vector<int> frames;
  std::vector<std::shared_ptr<const FrameGeometry>> lists;
};

class BatchPrefetcher {
 public:
  // rank/size: only batch positions b % size == rank get their lists (MPI data parallelism)
  BatchPrefetcher(NeighborCache& cache, std::vector<std::vector<int>> plan, int rank = 0, int size = 1, size_t depth = 2)
      : cache_(cache), plan_(std::move(plan)), rank_(rank), size_(size), depth_(depth) {
    worker_ = std::thread([this] { run(); });
  }
  ~BatchPrefetcher() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  // Next batch in plan order; rethrows an error raised while assembling it.
  Batch next() {
    ScopedStage stage("train:wait_batch");
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [this] { return !ready_.empty() || error_; });
    if (ready_.empty() && error_) std::rethrow_exception(error_);
    Batch b = std::move(ready_.front());
    ready_.pop_front();
    cv_.notify_all();
    return b;
  }

 private:
  void run() {
    try {
      for (auto& frames : plan_) {
        Batch b;
        {
          ScopedStage stage("train:collate");
          for (size_t k = 0; k < frames.size(); ++k)
            b.lists.push_back(static_cast<int>(k) % size_ == rank_ ? cache_.get(frames[k]) : nullptr);
          b.frames = std::move(frames);
        }
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [this] { return ready_.size() < depth_ || stop_; });
        if (stop_) return;
        ready_.push_back(std::move(b));
        cv_.notify_all();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(m_);
      error_ = std::current_exception();
      cv_.notify_all();
    }
  }
  NeighborCache& cache_;
  std::vector<std::vector<int>> plan_;
  int rank_, size_;
  size_t depth_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Batch> ready_;
  std::exception_ptr error_;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace train
}  // namespace nep
