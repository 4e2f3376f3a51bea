// Parameter-independent per-frame quantities of the NEP descriptor, computed once per training
// frame and cached (the "basis cache" of docs/nep_train.md): for every local atom its radial
// basis sums, and for every pair inside a cutoff the basis values and derivatives the energy,
// force and parameter-gradient passes need. They depend on positions, types, cutoffs,
// basis sizes and l_max only, never on the trained parameters (ann, c, q_scaler).
//
// Conventions as in the core (evaluator.hpp): r_ij = x_j - x_i over the frame's neighbour list,
// pairs inside the radial cutoff rc_R(ti,tj) are "radial", those inside rc_A(ti,tj) "angular";
// j is recorded by its owner (the local atom it is an image of), so forces fold onto owners.
//   f_k(d), f_k'(d)    Chebyshev basis and its derivative (NEP Eq. 5-6, evaluator_basis.hpp)
//   Y_e(r_hat), dY_e   angular moment entries and their gradient in r_hat taken as free variables
//   B_tk(i)            sum over radial neighbours j of type t of f_k(d_ij)
// The ZBL part of the model (no trainable parameters) is stored as whole-frame totals, computed
// by the core.
#pragma once
#include <cstddef>
#include <vector>

#include "nep/model.hpp"
#include "nep/neighbor.hpp"

namespace nep {

// Row stride of the per-pair radial derivatives r_fp: KR rounded up to whole 4-double vectors
// (zero padded), so that the per-pair loops over k run over whole vectors.
constexpr int radial_row_stride(int KR) { return (KR + 3) / 4 * 4; }

struct PairBasis {
  int nlocal = 0, T = 0, KR = 0, KRp = 0, KA = 0, S = 0;  // KRp = radial_row_stride(KR)
  std::vector<int> type;  // nlocal, model type (-1: not handled)
  std::vector<double> B;  // nlocal * T * KR

  // radial pairs of local atom i: [r_begin[i], r_begin[i+1])
  std::vector<int> r_begin, r_owner, r_type;
  std::vector<double> r_geom;  // 4 per pair: r_ij (3), 1/d
  std::vector<double> r_fp;    // KRp per pair: f_k'(d) for k < KR, then zeros

  // angular pairs of local atom i: [a_begin[i], a_begin[i+1])
  std::vector<int> a_begin, a_owner, a_type;
  std::vector<double> a_geom;     // 4 per pair: r_ij (3), 1/d
  std::vector<double> a_f, a_fp;  // KA per pair
  std::vector<double> a_Y;        // S per pair
  std::vector<double> a_dY;       // 3*S per pair, [e][xyz]

  // ZBL totals of the frame (zero without ZBL): energy, forces on the nlocal owners, virial
  bool has_zbl = false;
  double zbl_energy = 0.0;
  double zbl_virial[9] = {0};
  std::vector<double> zbl_force;

  size_t bytes() const;
};

// Builds the basis of one frame. With ZBL it runs the core on Kokkos::Serial (Kokkos initialised;
// Serial dispatch is not re-entrant, so not concurrently with other Serial work: the trainer
// builds bases only while its own thread runs no Kokkos kernel).
// sites (nlocal entries, or null: every site): a local atom i with sites[i] == 0 is left out as a
// site (type -1, no pairs of its own): neither its site energy nor the force terms of its own
// environment are computed, while the other sites' pairs to it are kept. Exact for the forces on
// every atom with no left-out site within the cutoff (nep/train: the labelled atoms of a frame
// without energy and virial labels, train::force_sites).
PairBasis build_pair_basis(const Model& m, const NeighborList& nl, const std::vector<char>* sites = nullptr);

}  // namespace nep
