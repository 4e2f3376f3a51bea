// A NEP model as written in GPUMD's nep.txt (NEP3/NEP4/NEP5, optional ZBL), plus its reader/writer.
//
// Parameter layout (GPUMD / NEP_CPU order):
//   ann       : NEP3: w0[H*D] b0[H] w1[H] (shared by all types), b1
//               NEP4: for each type t: w0[H*D] b0[H] w1[H]; then b1
//               NEP5: for each type t: w0[H*D] b0[H] w1[H] bt; then b1
//               qNEP (NEP4 charge models): for each type t: w0[H*D] b0[H] w1[H] wq[H]; then
//               sqrt(eps_inf), b1 (the charge output wq . tanh(..) has no bias)
//   ann_pol   : polarizability models only: the second network (the diagonal scalar), same layout
//   c         : radial c_R[(n*KR + k)*T*T + t_i*T + t_j], then angular c_A[(n*KA + k)*T*T + ...]
//   q_scaler  : D values
//   zbl_flexible (only "zbl 0 0"): per unordered type pair (0-0, 0-1, .., 1-1, ..) 10 values
//               rc_inner rc_outer a1..a8
#pragma once
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "nep/angular_basis.hpp"  // kMaxL

namespace nep {

enum class ZblMode { None, Universal, Typewise, Flexible };

// What the network's output means (the file's tag): an energy (nep3/nep4/nep5), a dipole
// (nep3/nep4_dipole), a polarizability (nep3/nep4_polarizability) or an energy plus per-atom
// charges (qNEP: nep4[_zbl]_charge1/2/3). docs/model_kinds.md gives each kind's physics.
enum class ModelKind { Potential, Dipole, Polarizability, Charge };
const char* kind_name(ModelKind k);  // "potential", "dipole", "polarizability", "charge"

// Higher-order angular channels after the 3-body ones, in the order they appear in q.
enum AngularFlag { kQ222 = 0, kQ1111, kQ112, kQ123, kQ233, kQ134, kNumAngularFlags };

// Size limits, defined once: the reader rejects models beyond them and the kernels size their
// per-atom arrays by them (l_max by kMaxL of angular_basis.hpp).
namespace limits {
constexpr int kMaxNMax = 19;       // n_max radial / angular: at most 20 channels of each kind
constexpr int kMaxBasisSize = 19;  // basis_size: at most 20 Chebyshev terms
constexpr int kMaxTypes = 94;      // elements H..Pu
constexpr int kMaxNeurons = 1000;
// per-pair and per-atom array bounds that follow from them
constexpr int kMaxBasis = (kMaxNMax > kMaxBasisSize ? kMaxNMax : kMaxBasisSize) + 1;
constexpr int kMaxDim = (kMaxNMax + 1) + (kMaxNMax + 1) * (kMaxL + kNumAngularFlags);
}  // namespace limits

// The sizes every evaluator and trainer kernel indexes with (plain values, copyable to a GPU):
// T types, D descriptor length, H neurons, NR/NA radial/angular n counts, KR/KA radial/angular basis
// sizes, L3 the 3-body l_max and S = (L3+1)^2 - 1 angular moment entries per n; the 4/5-body
// channels and whether ZBL is on.
struct ModelSizes {
  int T = 0, D = 0, H = 0, NR = 0, NA = 0, KR = 0, KA = 0, L3 = 0, S = 0;
  int ann_stride = 0;  // Model::ann_stride()
  bool q222 = false, q1111 = false, zbl = false;
};

struct Model {
  int version = 4;                       // 3, 4 or 5
  ModelKind kind = ModelKind::Potential;
  // qNEP electrostatics: 1 Ewald (real space erfc + reciprocal + self), 2 reciprocal space only,
  // 3 damped shifted-force real space only; 0 for every other kind
  int charge_mode = 0;
  std::vector<std::string> elements;     // type order of the model
  std::vector<int> atomic_numbers;       // Z (1-based) per type

  ZblMode zbl = ZblMode::None;
  double zbl_rc_inner = 0.0, zbl_rc_outer = 0.0, zbl_typewise_factor = 0.0;
  std::vector<double> zbl_flexible;      // 10 * T(T+1)/2 (flexible mode only)

  bool per_type_cutoff = false;
  std::vector<double> rc_radial, rc_angular;  // per type (all equal for a global cutoff)
  int max_neighbors_radial = 0, max_neighbors_angular = 0;

  int n_max_radial = 0, n_max_angular = 0;
  int basis_size_radial = 0, basis_size_angular = 0;
  int l_max = 0;                                     // 3-body l_max
  std::array<bool, kNumAngularFlags> flags{};        // q_222, q_1111, q_112, q_123, q_233, q_134
  int num_neurons = 0;

  std::vector<double> ann;       // see layout above
  std::vector<double> ann_pol;   // polarizability models: the second network (else empty)
  std::vector<double> c;         // descriptor expansion coefficients
  std::vector<double> q_scaler;  // D

  // ---- derived sizes ----
  int num_types() const { return static_cast<int>(elements.size()); }
  int num_l() const;             // 3-body L count + enabled higher-order channels
  int dim_radial() const { return n_max_radial + 1; }
  int dim_angular() const { return (n_max_angular + 1) * num_l(); }
  int dim() const { return dim_radial() + dim_angular(); }
  int num_ann_parameters() const;
  // The network's parameter layout, defined once: type t's block (w0, b0, w1 [, bias]) starts at
  // ann_offset(t) = t * ann_stride() (NEP3: one block shared by all types, stride 0); b1 is last.
  int ann_block_size() const;   // (D + 2) H, plus the per-type bias in NEP5; (D + 3) H for qNEP
  int ann_stride() const { return version == 3 ? 0 : ann_block_size(); }
  int num_c_radial() const;
  int num_c_angular() const;
  double rc_radial_max() const;
  double rc_angular_max() const;
  // Largest interaction range (neighbour-list cutoff without skin).
  double cutoff_max() const;
  // Cutoffs of the type pair (a, b): the mean of the two types' cutoffs (GPUMD's per-type rule;
  // equal to the global cutoff otherwise), used in f_c and in the Chebyshev argument alike.
  double rc_radial_pair(int a, int b) const { return 0.5 * (rc_radial[a] + rc_radial[b]); }
  double rc_angular_pair(int a, int b) const { return 0.5 * (rc_angular[a] + rc_angular[b]); }
  // Offsets into `ann` of type t's block and of the shared b1.
  int ann_offset(int t) const { return t * ann_stride(); }
  int ann_b1_offset() const { return num_ann_parameters() - 1; }
  // qNEP: type t's charge weights wq[H] and the sqrt(eps_inf) that scales Born effective charges
  int ann_charge_offset(int t) const { return ann_offset(t) + (dim() + 2) * num_neurons; }
  int ann_sqrt_epsilon_inf_offset() const { return num_ann_parameters() - 2; }
  bool is_potential() const { return kind == ModelKind::Potential; }
  // The file's first token for this kind, version and ZBL ("nep4_zbl_charge1", "nep3_dipole", ...).
  std::string tag() const;
  ModelSizes sizes() const;
  // The model's type index of an element, -1 when the model does not have it.
  int type_of(const std::string& element) const;
};

// The model type of each named type, LAMMPS-style (1-based: map[t] is names[t-1]'s type, map[0]
// unused, -1 for "NULL"); *missing (if given) receives the 0-based index of the first name the
// model does not have, -1 when it has them all (those entries are -1 too).
std::vector<int> map_types(const Model& m, const std::vector<std::string>& names, int* missing = nullptr);

// A polarizability model's second network (the scalar added to the tensor's diagonal) as a
// potential model: its per-atom "energy" U_i = sum_h w1'_h tanh(..) - b1' is that scalar.
Model polarizability_diagonal_model(const Model& m);

// Parse a GPUMD nep.txt. Throws nep::Error "file:line: message" on anything it does not accept.
Model read_model(const std::string& path);
Model parse_model(const std::string& text, const std::string& name);
// Write GPUMD-compatible nep.txt text; numbers use the shortest exact decimal form, so
// parse_model(format_model(m)) == m and format_model is byte-stable under a round trip.
std::string format_model(const Model& m);
void write_model(const Model& m, const std::string& path);

// Index of the unordered type pair (t1, t2) in zbl_flexible (10 values each).
inline int zbl_pair_index(int t1, int t2, int T) {
  if (t1 > t2) std::swap(t1, t2);
  return t1 * T - t1 * (t1 - 1) / 2 + (t2 - t1);
}

}  // namespace nep
