// The one NEP energy/force/virial core: Kokkos kernels templated on device and compute precision.
//
// Input is LAMMPS-shaped: positions of all atoms (locals first, then ghosts/images), model types
// (-1 = atom not handled by this model, e.g. NULL under pair hybrid), and a FULL neighbour list of
// the local atoms whose entries index all atoms (LAMMPS special bits are masked off).
// Output: per-atom energy of locals, forces on all atoms (ghost entries receive the reaction
// forces: fold or reverse-communicate them), optional per-atom virial on all atoms, and totals.
//
// Conventions (same as NEP_CPU and ../docs/conventions.md): r_ij = x_j - x_i, f_ij = dU_i/dr_ij,
// F_i += f_ij, F_j -= f_ij, and the pair's virial is put on the neighbour:
// W_j[a][b] -= r_ij[a] f_ij[b], stored row-major (xx xy xz yx yy yz zx zy zz).
//
// Real = double: everything in double. Real = float: pair/descriptor/network maths in float
// (GPUMD style), displacements formed in double, forces/virials/energies accumulated in double.
#pragma once
#include <Kokkos_Core.hpp>

#include "nep/angular_basis.hpp"
#include "nep/energy_virial.hpp"
#include "nep/model.hpp"

namespace nep {

namespace detail {
struct EnergyVirialSum;
}

template <class DeviceType, class Real>
class Evaluator {
 public:
  static constexpr int kMaxAngularPolys = (kMaxL + 1) * (kMaxL + 1) * (kMaxL + 1);
  using device_type = DeviceType;
  using execution_space = typename DeviceType::execution_space;
  using t_x = Kokkos::View<const double* [3], Kokkos::LayoutRight, DeviceType>;
  using t_int = Kokkos::View<const int*, DeviceType>;
  using t_neighbors = Kokkos::View<const int**, DeviceType>;
  using t_neighbors_alloc = Kokkos::View<int**, DeviceType>;  // a table compute() accepts
  using t_f = Kokkos::View<double* [3], Kokkos::LayoutRight, DeviceType>;
  using t_eatom = Kokkos::View<double*, DeviceType>;
  using t_vatom = Kokkos::View<double* [9], Kokkos::LayoutRight, DeviceType>;

  explicit Evaluator(const Model& model);

  // Evaluates the atoms i = ilist(ii), ii < inum (i = ii when ilist is empty); their neighbours
  // are neighbors(i, 0 .. num_neighbors(i)-1). Adds forces into f (nall x 3) and, if vatom is
  // non-empty, per-atom virials into vatom (nall x 9); writes eatom(i) if eatom is non-empty.
  // Returns the total energy and virial of the evaluated atoms.
  EnergyVirial compute(int inum, t_int ilist, t_x x, t_int type, t_int num_neighbors, t_neighbors neighbors,
                       t_f f, t_eatom eatom, t_vatom vatom);

  // ---- the other model kinds (docs/model_kinds.md); these run the two-pass kernels ----
  using t_scalar = Kokkos::View<double*, DeviceType>;
  using t_tensor = Kokkos::View<double* [9], Kokkos::LayoutRight, DeviceType>;
  // Dipole models and the first network of polarizability models: the pair terms of each
  // evaluated atom's network, f_ij = dU_i/dr_ij, summed on that atom i (no ghost terms):
  // dipole: T_i[b] = -sum_j |r_ij|^2 f_ij[b] (b < 3); virial-like: T_i[3a+b] = -sum_j r_ij[a] f_ij[b].
  // Writes tensor(i, .) when tensor is non-empty and returns the totals in .virial (.energy:
  // the sum of the network outputs). No forces.
  enum class TensorForm { Dipole, Virial };
  EnergyVirial compute_tensor(int inum, t_int ilist, t_x x, t_int type, t_int num_neighbors, t_neighbors neighbors,
                              TensorForm form, t_tensor tensor);
  // qNEP, stage 1: short-range per-atom energy (network + ZBL) into eatom(i) (if non-empty) and
  // the network's raw charge Q_i into charge(i); caches both outputs' descriptor derivatives.
  double compute_charges(int inum, t_int ilist, t_x x, t_int type, t_int num_neighbors, t_neighbors neighbors,
                         t_eatom eatom, t_scalar charge);
  // qNEP, after stage 1: the pair part of the Born effective charges, added into bec (all atoms,
  // 9 per atom; NEP_CPU's: +r_ij (x) dQ_i/dr_ij / 2 on i, the opposite on j; no sqrt(eps_inf))
  void compute_charge_bec(int inum, t_int ilist, t_x x, t_int type, t_int num_neighbors, t_neighbors neighbors,
                          t_tensor bec);
  // qNEP, stage 2 (same atoms and lists as stage 1): forces and virials of sum_i U_i + phi_i Q_i,
  // phi(i) = dE_elec/dQ_i held fixed: the short-range forces plus the charges' position dependence.
  EnergyVirial compute_charge_forces(int inum, t_int ilist, t_x x, t_int type, t_int num_neighbors,
                                     t_neighbors neighbors, t_scalar phi, t_f f, t_vatom vatom);

  // Optional output: the raw (unscaled) descriptor q of evaluated atom ii in row ii of `q`
  // (inum x dim()); an empty view switches it off. Used for q_scaler and descriptor analysis.
  using t_descriptor = Kokkos::View<double**, Kokkos::LayoutRight, DeviceType>;
  void set_descriptor_output(t_descriptor q) { d_q_out_ = q; }
  int dim() const { return p_.D; }

  // Host execution spaces (Serial, OpenMP) run a fused kernel: each atom's descriptor, network
  // and pair forces in one pass over its pairs, vectorised across them. Device spaces run two
  // passes (descriptor and network, then forces). force_two_pass(true) runs the two-pass kernels
  // on a host space too, so tests hold them to the references on machines without a GPU.
  void force_two_pass(bool on) { two_pass_ = on; }

  double cutoff() const { return cutoff_; }
  int num_types() const { return num_types_; }

  // Kernel parameters and per-atom scratch (public so the kernel functor can be a plain struct).
  struct Params : ModelSizes {
    int version;
    int b1_index;
    int wq_offset;  // qNEP: the charge weights' offset in a type's block; -1 for other kinds
    double c4b[5], c5b[3];  // q_222 and q_1111 coefficients (angular_basis.hpp)
  };

 private:
  Params p_{};
  double cutoff_ = 0.0;
  int num_types_ = 0;
  Kokkos::View<Real*, DeviceType> d_ann_, d_q_scaler_;
  // parameter tables are read through row pointers: row-major on every device
  Kokkos::View<Real**, Kokkos::LayoutRight, DeviceType> d_ann_w0t_;                 // [type][d*H + h]
  Kokkos::View<Real**, Kokkos::LayoutRight, DeviceType> d_c_radial_, d_c_angular_;  // [type pair][k*N + n]
  Kokkos::View<Real* [4], DeviceType> d_cut_;                  // [pair]: rc_R, 1/rc_R, rc_A, 1/rc_A
  Kokkos::View<Real* [12], DeviceType> d_zbl_;                 // [pair]: rin rout a1..a8 zizj*k a_inv
  Kokkos::View<Real[kMaxAngularPolys], DeviceType> d_poly_;    // packed P_Lm coefficients
  Kokkos::View<Real[kNumAngularEntries], DeviceType> d_c3b_;
  Kokkos::View<Real**, DeviceType> d_fp_radial_;               // [atom][n]   dU/dq_n (radial)
  Kokkos::View<Real**, DeviceType> d_g_angular_;               // [atom][n*S + entry] dU/ds
  Kokkos::View<Real**, DeviceType> d_fpq_radial_, d_gq_angular_;  // qNEP: the same for the charge Q
  bool is_charge_ = false, is_potential_ = true;
  ModelKind kind_ = ModelKind::Potential;
  const char* kind_name_ = "potential";
  int charge_inum_ = -1;  // atoms of the last compute_charges (stage 2 must match)
  t_descriptor d_q_out_;
  bool two_pass_ = false;
  Kokkos::View<char*, Kokkos::HostSpace> host_scratch_;  // the fused kernel's per-thread arrays

  template <class Kernel>
  void fill_kernel(Kernel& k, int inum, t_int ilist, t_x x, t_int type, t_int num_neighbors, t_neighbors neighbors,
                   t_f f, t_eatom eatom, t_vatom vatom, bool with_caches);
  void grow_caches(int inum);
  template <class Kernel>
  detail::EnergyVirialSum run_fused(const Kernel& k, int nlocal, int stage, t_f f, t_vatom vatom);
};

}  // namespace nep
