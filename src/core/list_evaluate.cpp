#include "nep/list_evaluate.hpp"

namespace nep {

EnergyVirial evaluate_list(SerialEvaluator& ev, const NeighborList& nl, std::vector<double>& force_owners, double* q) {
  using Ev = SerialEvaluator;
  const int nall = nl.nall, nlocal = nl.nlocal;
  static const int dummy_neighbor = 0;  // a valid pointer for a list without neighbours
  const int maxn = nl.max_neighbors > 0 ? nl.max_neighbors : 1;
  const int* neigh = nl.max_neighbors > 0 ? nl.neighbors.data() : &dummy_neighbor;
  std::vector<double> f(3 * static_cast<size_t>(nall), 0.0);
  Ev::t_x x(nl.x.data(), nall);
  Ev::t_int type(nl.type.data(), nall), numneigh(nl.num_neighbors.data(), nlocal);
  Ev::t_neighbors nb(neigh, nlocal, maxn);
  if (q) ev.set_descriptor_output(Ev::t_descriptor(q, nlocal, ev.dim()));
  const EnergyVirial r =
      ev.compute(nlocal, Ev::t_int(), x, type, numneigh, nb, Ev::t_f(f.data(), nall), Ev::t_eatom(), Ev::t_vatom());
  if (q) ev.set_descriptor_output(Ev::t_descriptor());
  force_owners.assign(3 * static_cast<size_t>(nlocal), 0.0);
  for (int i = 0; i < nall; ++i)
    for (int d = 0; d < 3; ++d) force_owners[3 * nl.owner[i] + d] += f[3 * i + d];
  return r;
}

}  // namespace nep
