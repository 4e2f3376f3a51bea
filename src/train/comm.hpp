// The trainer's view of MPI (data-parallel training). Without MPI (or outside mpirun) it is a
// one-rank communicator and every call is a no-op. Reductions are done as reduce-to-rank-0 and
// broadcast, so every rank holds bit-identical sums and takes bit-identical optimiser steps.
// Only the main thread calls these.
#pragma once
#include <string>
#include <vector>

namespace nep {
namespace train {

class Comm {
 public:
  Comm();  // MPI_COMM_WORLD when MPI is built in and initialised, else a single rank
  // A one-rank communicator that never calls MPI (for threads other than MPI's main thread).
  static Comm local() { return Comm(0); }
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }
  void sum(double* v, int n) const;
  void min(double* v, int n) const;
  void max(double* v, int n) const;
  void bcast(std::string& bytes) const;  // from rank 0
  // Rank 0 receives the concatenation of every rank's buffer in rank order.
  std::vector<double> gather(const std::vector<double>& mine) const;

 private:
  explicit Comm(int) {}
  int rank_ = 0, size_ = 1;
};

}  // namespace train
}  // namespace nep
