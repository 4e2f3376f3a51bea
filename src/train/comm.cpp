#include "comm.hpp"

#ifdef NEP_WITH_MPI
#include <mpi.h>
#endif

namespace nep {
namespace train {

#ifdef NEP_WITH_MPI
namespace {
bool mpi_on() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}
void reduce(double* v, int n, MPI_Op op) {
  std::vector<double> out(n);
  MPI_Reduce(v, out.data(), n, MPI_DOUBLE, op, 0, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::copy(out.begin(), out.end(), v);
  MPI_Bcast(v, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}
}  // namespace

Comm::Comm() {
  if (mpi_on()) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
}
void Comm::sum(double* v, int n) const {
  if (size_ > 1) reduce(v, n, MPI_SUM);
}
void Comm::min(double* v, int n) const {
  if (size_ > 1) reduce(v, n, MPI_MIN);
}
void Comm::max(double* v, int n) const {
  if (size_ > 1) reduce(v, n, MPI_MAX);
}
void Comm::bcast(std::string& bytes) const {
  if (size_ == 1) return;
  unsigned long long n = bytes.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  bytes.resize(n);
  if (n) MPI_Bcast(&bytes[0], static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
}
std::vector<double> Comm::gather(const std::vector<double>& mine) const {
  if (size_ == 1) return mine;
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(size_), displs(size_);
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::vector<double> all(rank_ == 0 ? total : 0);
  MPI_Gatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return all;
}
#else
Comm::Comm() {}
void Comm::sum(double*, int) const {}
void Comm::min(double*, int) const {}
void Comm::max(double*, int) const {}
void Comm::bcast(std::string&) const {}
std::vector<double> Comm::gather(const std::vector<double>& mine) const { return mine; }
#endif

}  // namespace train
}  // namespace nep
