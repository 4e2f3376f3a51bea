/* ----------------------------------------------------------------------
   lammps-nep: pair_style nep/kk — positions, types, neighbour list and forces stay in LAMMPS's
   Kokkos views on the execution space; only per-atom energy/virial (when requested) go to the host.
------------------------------------------------------------------------- */

#include "pair_nep_kokkos.h"

#include "atom_kokkos.h"
#include "atom_masks.h"
#include "comm.h"
#include "error.h"
#include "force.h"
#include "kokkos.h"
#include "memory.h"
#include "neigh_list_kokkos.h"
#include "neigh_request.h"
#include "neighbor.h"
#include "update.h"

#include <vector>

#include "nep/error.hpp"
#include "nep/fault.hpp"
#include "nep/model.hpp"
#include "nep_lammps_compat.h"
#include "nep_plugin_common.h"

#include <exception>
#include <type_traits>

using namespace LAMMPS_NS;

template <class DeviceType>
PairNEPKokkos<DeviceType>::PairNEPKokkos(LAMMPS *lmp) : PairNEP(lmp, "nep/kk")
{
  kokkosable = 1;
  atomKK = (AtomKokkos *) atom;
  execution_space = ExecutionSpaceFromDevice<DeviceType>::space;
  datamask_read = X_MASK | F_MASK | TYPE_MASK;
  datamask_modify = F_MASK;
}

template <class DeviceType>
PairNEPKokkos<DeviceType>::~PairNEPKokkos() = default;

template <class DeviceType>
void PairNEPKokkos<DeviceType>::create_core()
{
  nep::maybe_fail("pair:create_core");
  if (!model->is_potential())
    throw nep::Error(std::string("this is a ") + nep::kind_name(model->kind) + " model (" + model->tag() +
                     "): the KOKKOS styles evaluate potentials only; charge models run with pair_style nep "
                     "(without -sf kk / -k on), tensor models with compute nep/dipole or nep/polarizability");
  ev_double.reset();
  ev_float.reset();
  if (single_precision) ev_float = std::make_unique<nep::Evaluator<DeviceType, float>>(*model);
  else ev_double = std::make_unique<nep::Evaluator<DeviceType, double>>(*model);
  core_failure.clear();
  d_map = Kokkos::View<int *, DeviceType>("nep:map", type_map.size());
  auto h_map = Kokkos::create_mirror_view(d_map);
  for (size_t t = 0; t < type_map.size(); ++t) h_map(t) = type_map[t];
  Kokkos::deep_copy(d_map, h_map);
}

template <class DeviceType>
void PairNEPKokkos<DeviceType>::release_core()
{
  ev_double.reset();
  ev_float.reset();
}

template <class DeviceType>
bool PairNEPKokkos<DeviceType>::core_ready() const
{
  return ev_double || ev_float;
}

template <class DeviceType>
void PairNEPKokkos<DeviceType>::init_style()
{
  PairNEP::init_style();
  neighflag = lmp->kokkos->neighflag;
  // the core always works from a full list; newton_pair off (forced by 'neigh full') is handled
  // by folding ghost forces here
  nep_lmp::set_kokkos_full_list(
      lmp, this, std::is_same<DeviceType, LMPHostType>::value && !std::is_same<DeviceType, LMPDeviceType>::value,
      std::is_same<DeviceType, LMPDeviceType>::value);
  if (neighflag != FULL && neighflag != HALF && neighflag != HALFTHREAD)
    error->all(FLERR, "Pair style nep/kk supports the KOKKOS package options 'neigh full' and 'neigh half' only");
}

// LAMMPS's error calls stay outside the try block (they unwind with LAMMPS's own exception);
// everything Kokkos or the core does, allocations included, is inside it, so a device
// out-of-memory becomes a LAMMPS error on this rank (MPI_Abort for all) instead of std::terminate.
template <class DeviceType>
void PairNEPKokkos<DeviceType>::compute(int eflag_in, int vflag_in)
{
  ev_init(eflag_in, vflag_in);
  if (!model && core_failure.empty()) return;    // pair_coeff none: nothing until a model is deployed
  if (!core_ready()) nep_lmp::error_one(lmp, FLERR, "Pair style nep/kk has no usable model: " + core_failure);
  const int nlocal = atom->nlocal;
  const int nall = nlocal + atom->nghost;
  const bool newton = force->newton_pair;
  // per-atom virials for stress/atom (vflag_atom) and/or centroid/stress/atom (cvflag_atom alone
  // when only the centroid compute is defined)
  const bool want_w9 = vflag_atom || cvflag_atom;
  const bool fold_here = !newton && fold_on_device_possible();

  nep::EnergyVirial ev;
  int nonfinite = 0;
  std::string failure;
  try {
    nonfinite = map_types(nlocal, nall);
    if (nonfinite == 0) ev = evaluate(nlocal, nall, newton, want_w9, fold_here);
  } catch (std::exception &e) {
    failure = e.what();
  }
  if (!failure.empty())
    nep_lmp::error_one(lmp, FLERR, fmt::format("NEP evaluation failed at step {}: {}", update->ntimestep, failure));
  if (nonfinite > 0)
    nep_lmp::error_one(lmp, FLERR,
                       fmt::format("Pair style nep: {} atom(s) have non-finite positions at step {} (the run has "
                                   "blown up, or the input set NaN coordinates)", nonfinite, update->ntimestep));

  if (!newton && !fold_here) {
    // several ranks: LAMMPS's reverse communication (host buffers in this LAMMPS version)
    atomKK->sync(Host, F_MASK);
    reverse_ghosts(want_w9);
    atomKK->modified(Host, F_MASK);
  }
  if (want_w9)
    nep_lmp::store_peratom_virial(w9.data(), newton ? nall : nlocal, vflag_atom ? vatom : nullptr,
                                  cvflag_atom ? cvatom : nullptr);
  nep_lmp::tally_totals(ev, eflag_global ? &eng_vdwl : nullptr, vflag_global ? virial : nullptr);
}

// LAMMPS type -> model type per atom; returns how many local atoms have a NaN or inf coordinate
// (they would fail every cutoff test and silently lose their neighbours): one pass, one reduction
template <class DeviceType>
int PairNEPKokkos<DeviceType>::map_types(int nlocal, int nall)
{
  atomKK->sync(execution_space, datamask_read);
  auto x = atomKK->k_x.view<DeviceType>();
  auto type = atomKK->k_type.view<DeviceType>();
  if ((int) d_model_type.extent(0) < nall) {
    nep::maybe_fail("pair:alloc");
    d_model_type = Kokkos::View<int *, DeviceType>("nep:model_type", atom->nmax);
  }
  auto map = d_map;
  auto mt = d_model_type;
  int bad = 0;
  Kokkos::parallel_reduce(
      "nep:map_types", Kokkos::RangePolicy<typename DeviceType::execution_space>(0, nall),
      KOKKOS_LAMBDA(const int i, int &nbad) {
        mt(i) = map(type(i));
        constexpr double huge = 1.7976931348623157e308;  // !(|v| <= DBL_MAX) holds for NaN and inf
        if (i < nlocal && !(fabs(x(i, 0)) <= huge && fabs(x(i, 1)) <= huge && fabs(x(i, 2)) <= huge)) ++nbad;
      },
      bad);
  return bad;
}

// The core on LAMMPS's views: forces into k_f, per-atom energy into eatom, per-atom virials into
// w9 (host), ghost contributions folded on the execution space when fold_here
template <class DeviceType>
nep::EnergyVirial PairNEPKokkos<DeviceType>::evaluate(int nlocal, int nall, bool newton, bool want_w9, bool fold_here)
{
  auto x = atomKK->k_x.view<DeviceType>();
  auto f = atomKK->k_f.view<DeviceType>();
  auto *k_list = static_cast<NeighListKokkos<DeviceType> *>(list);
  const int inum = list->inum;
  if (!newton)  // LAMMPS clears only local forces when newton_pair is off
    Kokkos::deep_copy(Kokkos::subview(f, std::make_pair(nlocal, nall), Kokkos::ALL), 0.0);
  if (eflag_atom && (int) d_eatom.extent(0) < nall) {
    nep::maybe_fail("pair:alloc");
    d_eatom = Kokkos::View<double *, DeviceType>("nep:eatom", atom->nmax);
  }
  if (want_w9) {
    if ((int) d_w9.extent(0) < nall) {
      nep::maybe_fail("pair:alloc");
      d_w9 = decltype(d_w9)("nep:w9", atom->nmax);
    } else {
      Kokkos::deep_copy(d_w9, 0.0);
    }
  }
  typename nep::Evaluator<DeviceType, double>::t_eatom e_view;
  typename nep::Evaluator<DeviceType, double>::t_vatom w_view;
  if (eflag_atom) e_view = d_eatom;
  if (want_w9) w_view = d_w9;

  typename nep::Evaluator<DeviceType, double>::t_neighbors neigh;
  using LmpLayout = typename decltype(k_list->d_neighbors)::array_layout;
  if constexpr (std::is_same<LmpLayout, typename decltype(d_neigh_copy)::array_layout>::value) {
    neigh = k_list->d_neighbors;
  } else {  // a copy per step: only the host styles of a CUDA build get here
    const auto &src = k_list->d_neighbors;
    if (d_neigh_copy.extent(0) != src.extent(0) || d_neigh_copy.extent(1) != src.extent(1))
      d_neigh_copy = decltype(d_neigh_copy)("nep:neighbors", src.extent(0), src.extent(1));
    Kokkos::deep_copy(d_neigh_copy, src);
    neigh = d_neigh_copy;
  }
  nep::EnergyVirial ev;
  if (ev_float)
    ev = ev_float->compute(inum, k_list->d_ilist, x, d_model_type, k_list->d_numneigh, neigh, f, e_view, w_view);
  else
    ev = ev_double->compute(inum, k_list->d_ilist, x, d_model_type, k_list->d_numneigh, neigh, f, e_view, w_view);
  atomKK->modified(execution_space, F_MASK);

  // ghost contributions onto owners (newton_pair off, one rank): on the execution space
  if (fold_here) {
    build_images();
    auto off = d_image_offset;
    auto img = d_image_list;
    auto w = d_w9;
    const bool fold_w = want_w9;
    Kokkos::parallel_for("nep:fold_ghosts", Kokkos::RangePolicy<typename DeviceType::execution_space>(0, nlocal),
      KOKKOS_LAMBDA(const int i) {
        for (int k = off(i); k < off(i + 1); ++k) {
          const int g = img(k);
          for (int d = 0; d < 3; ++d) f(i, d) += f(g, d);
          if (fold_w)
            for (int c = 0; c < 9; ++c) w(i, c) += w(g, c);
        }
      });
    // folded: clear the ghost copies, or LAMMPS adds them a second time when only newton_bond is on
    Kokkos::deep_copy(Kokkos::subview(f, std::make_pair(nlocal, nall), Kokkos::ALL), 0.0);
  }

  // per-atom results to the host arrays LAMMPS computes read
  if (eflag_atom) {
    // (a Kokkos neighbour list keeps its ilist on the execution space only)
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d_eatom);
    auto h_ilist = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), k_list->d_ilist);
    for (int ii = 0; ii < inum; ++ii) eatom[h_ilist(ii)] += h(h_ilist(ii));
  }
  if (want_w9) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d_w9);
    w9.assign(h.data(), h.data() + 9 * static_cast<size_t>(nall));
  }
  return ev;
}

// newton_pair off: ghost forces are folded here when one rank holds every owner (atom map needed)
template <class DeviceType>
bool PairNEPKokkos<DeviceType>::fold_on_device_possible() const
{
  return comm->nprocs == 1 && atom->map_style != Atom::MAP_NONE;
}

// each local atom's ghost images (CSR), rebuilt when LAMMPS re-neighbours; a counting sort by
// owner keeps every owner's images in ghost-index order (deterministic sums)
template <class DeviceType>
void PairNEPKokkos<DeviceType>::build_images()
{
  const int nlocal = atom->nlocal, nall = nlocal + atom->nghost;
  if (images_built_at == neighbor->ncalls && (int) d_image_offset.extent(0) == nlocal + 1 &&
      (int) d_image_list.extent(0) == nall - nlocal)
    return;
  tagint *tag = atom->tag;
  std::vector<int> count(nlocal + 1, 0), owner(nall - nlocal);
  for (int g = nlocal; g < nall; ++g) {
    const int o = atom->map(tag[g]);    // atom->map(tag) returns the owned copy
    if (o < 0 || o >= nlocal) throw nep::Error(fmt::format("pair nep/kk: ghost atom {} has no local owner", tag[g]));
    owner[g - nlocal] = o;
    ++count[o + 1];
  }
  for (int i = 0; i < nlocal; ++i) count[i + 1] += count[i];
  d_image_offset = Kokkos::View<int *, DeviceType>("nep:image_offset", nlocal + 1);
  d_image_list = Kokkos::View<int *, DeviceType>("nep:image_list", nall - nlocal);
  auto h_off = Kokkos::create_mirror_view(d_image_offset);
  auto h_img = Kokkos::create_mirror_view(d_image_list);
  for (int i = 0; i <= nlocal; ++i) h_off(i) = count[i];
  for (int g = nlocal; g < nall; ++g) h_img(count[owner[g - nlocal]]++) = g;
  Kokkos::deep_copy(d_image_offset, h_off);
  Kokkos::deep_copy(d_image_list, h_img);
  images_built_at = neighbor->ncalls;
}

namespace LAMMPS_NS {
template class PairNEPKokkos<LMPDeviceType>;
#ifdef LMP_KOKKOS_GPU
template class PairNEPKokkos<LMPHostType>;
#endif
}    // namespace LAMMPS_NS
