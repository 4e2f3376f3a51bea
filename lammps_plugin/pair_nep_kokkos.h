/* -*- c++ -*- ----------------------------------------------------------
   lammps-nep: pair_style nep/kk (and nep/gpu under -k on): the core on LAMMPS's Kokkos data
------------------------------------------------------------------------- */
#ifndef LMP_NEP_PAIR_NEP_KOKKOS_H
#define LMP_NEP_PAIR_NEP_KOKKOS_H

#include "kokkos_type.h"
#include "pair_nep.h"

#include "nep/evaluator.hpp"

namespace LAMMPS_NS {

template <class DeviceType>
class PairNEPKokkos : public PairNEP {
 public:
  typedef DeviceType device_type;
  typedef ArrayTypes<DeviceType> AT;

  PairNEPKokkos(class LAMMPS *);
  ~PairNEPKokkos() override;
  void compute(int, int) override;
  void init_style() override;

 protected:
  void create_core() override;
  void release_core() override;
  bool core_ready() const override;

  // one of the two is set, by precision
  std::unique_ptr<nep::Evaluator<DeviceType, double>> ev_double;
  std::unique_ptr<nep::Evaluator<DeviceType, float>> ev_float;
  Kokkos::View<int *, DeviceType> d_map;          // LAMMPS type -> model type
  Kokkos::View<int *, DeviceType> d_model_type;   // per atom
  Kokkos::View<double *, DeviceType> d_eatom;
  Kokkos::View<double *[9], Kokkos::LayoutRight, DeviceType> d_w9;
  // LAMMPS's neighbour table in the core's layout, when LAMMPS keeps another one on this side
  // (the host side of a CUDA build: LayoutLeft on the host)
  typename nep::Evaluator<DeviceType, double>::t_neighbors_alloc d_neigh_copy;
  int neighflag = 0;

  // newton_pair off on one MPI rank: each local atom's ghost images (CSR), rebuilt when LAMMPS
  // re-neighbours, so ghost forces/virials are folded on the execution space in a fixed order
  Kokkos::View<int *, DeviceType> d_image_offset, d_image_list;
  bigint images_built_at = -1;
  bool fold_on_device_possible() const;    // false: several ranks, or no atom map

 public:
  // Kernel launchers. Public because nvcc refuses an extended __host__ __device__ lambda inside a
  // private or protected member function; not for use outside compute().
  void build_images();
  // compute() in parts; both may throw (Kokkos allocations), compute() turns that into an error
  int map_types(int nlocal, int nall);
  nep::EnergyVirial evaluate(int nlocal, int nall, bool newton, bool want_w9, bool fold_here);
};

}    // namespace LAMMPS_NS

#endif
