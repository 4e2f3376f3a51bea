// Kernel entry points of nep::Evaluator for the other model kinds (docs/model_kinds.md): tensors of
// dipole / polarizability models, the two stages of charge models and their Born effective charges.
// Included by evaluator_impl.hpp; the two-pass kernels with their tensor / charge modes.
#pragma once

namespace nep {

template <class DeviceType, class Real>
EnergyVirial Evaluator<DeviceType, Real>::compute_tensor(int inum, t_int ilist, t_x x, t_int type, t_int num_neighbors,
                                                         t_neighbors neighbors, TensorForm form, t_tensor tensor) {
  if (kind_ != ModelKind::Dipole && kind_ != ModelKind::Polarizability)
    throw Error(std::string("compute_tensor: this is a ") + kind_name_ + " model, not a dipole or polarizability model");
  EnergyVirial out;
  if (inum <= 0) return out;
  detail::NepKernel<DeviceType, Real> k;
  fill_kernel(k, inum, ilist, x, type, num_neighbors, neighbors, t_f("nep:no_forces", 0), t_eatom(), tensor, true);
  k.tensor = form == TensorForm::Dipole ? 1 : 2;
  detail::EnergyVirialSum e1, e2;
  detail::reduce_stage<execution_space, detail::TagNepDescriptor>("nep:tensor_descriptor", inum, k, e1);
  detail::reduce_stage<execution_space, detail::TagNepForce>("nep:tensor_pairs", inum, k, e2);
  if (k.want_vatom) Kokkos::Experimental::contribute(tensor, k.vatom);
  out.energy = e1.e;
  for (int c = 0; c < 9; ++c) out.virial[c] = e2.v[c];
  return out;
}

template <class DeviceType, class Real>
double Evaluator<DeviceType, Real>::compute_charges(int inum, t_int ilist, t_x x, t_int type, t_int num_neighbors,
                                                    t_neighbors neighbors, t_eatom eatom, t_scalar charge) {
  if (!is_charge_) throw Error(std::string("compute_charges: this is a ") + kind_name_ + " model, not a charge (qNEP) model");
  charge_inum_ = inum;
  if (inum <= 0) return 0.0;
  detail::NepKernel<DeviceType, Real> k;
  fill_kernel(k, inum, ilist, x, type, num_neighbors, neighbors, t_f(), eatom, t_vatom(), true);
  k.charge_out = charge;
  if (!two_pass_ && Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename DeviceType::memory_space>::accessible)
    return run_fused(k, inum, 1, t_f(), t_vatom()).e;
  detail::EnergyVirialSum e1;
  ScopedStage stage("core:descriptor");
  detail::reduce_stage<execution_space, detail::TagNepDescriptor>("nep:charge_descriptor", inum, k, e1);
  return e1.e;
}

template <class DeviceType, class Real>
void Evaluator<DeviceType, Real>::compute_charge_bec(int inum, t_int ilist, t_x x, t_int type, t_int num_neighbors,
                                                     t_neighbors neighbors, t_tensor bec) {
  if (!is_charge_) throw Error(std::string("compute_charge_bec: this is a ") + kind_name_ + " model, not a charge model");
  if (inum != charge_inum_) throw Error("compute_charge_bec: called for other atoms than the last compute_charges");
  if (inum <= 0) return;
  detail::NepKernel<DeviceType, Real> k;
  fill_kernel(k, inum, ilist, x, type, num_neighbors, neighbors, t_f("nep:no_forces", 0), t_eatom(), bec, true);
  k.want_q = false;
  k.tensor = 3;
  k.fp_radial = d_fpq_radial_;  // the charge's derivatives in place of the energy's
  k.g_angular = d_gq_angular_;
  detail::EnergyVirialSum e;
  detail::reduce_stage<execution_space, detail::TagNepForce>("nep:charge_bec", inum, k, e);
  Kokkos::Experimental::contribute(bec, k.vatom);
}

template <class DeviceType, class Real>
EnergyVirial Evaluator<DeviceType, Real>::compute_charge_forces(int inum, t_int ilist, t_x x, t_int type,
                                                                t_int num_neighbors, t_neighbors neighbors, t_scalar phi,
                                                                t_f f, t_vatom vatom) {
  if (!is_charge_) throw Error(std::string("compute_charge_forces: this is a ") + kind_name_ + " model, not a charge model");
  if (inum != charge_inum_) throw Error("compute_charge_forces: called for other atoms than the last compute_charges");
  EnergyVirial out;
  if (inum <= 0) return out;
  detail::NepKernel<DeviceType, Real> k;
  fill_kernel(k, inum, ilist, x, type, num_neighbors, neighbors, f, t_eatom(), vatom, true);
  k.want_q = false;
  k.phi = phi;
  if (!two_pass_ && Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename DeviceType::memory_space>::accessible) {
    const detail::EnergyVirialSum e = run_fused(k, inum, 2, f, vatom);
    for (int c = 0; c < 9; ++c) out.virial[c] = e.v[c];
    return out;
  }
  ScopedStage stage("core:force");
  detail::for_stage<execution_space, detail::TagNepChargeCombine>("nep:charge_combine", inum, k);
  detail::EnergyVirialSum e2;
  detail::reduce_stage<execution_space, detail::TagNepForce>("nep:charge_force", inum, k, e2);
  Kokkos::Experimental::contribute(f, k.f);
  if (k.want_vatom) Kokkos::Experimental::contribute(vatom, k.vatom);
  for (int c = 0; c < 9; ++c) out.virial[c] = e2.v[c];
  return out;
}

}  // namespace nep
