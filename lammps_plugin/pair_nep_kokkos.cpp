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

#include "nep/model.hpp"
#include "nep_lammps_compat.h"
#include "nep_plugin_common.h"

#include <exception>
#include <type_traits>

using namespace LAMMPS_NS;

template <class DeviceType>
PairNEPKokkos<DeviceType>::PairNEPKokkos(LAMMPS *lmp) : PairNEP(lmp, true)
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
  ev_double.reset();
  ev_float.reset();
  if (single_precision) ev_float = std::make_unique<nep::Evaluator<DeviceType, float>>(*model);
  else ev_double = std::make_unique<nep::Evaluator<DeviceType, double>>(*model);
  d_map = Kokkos::View<int *, DeviceType>("nep:map", type_map.size());
  auto h_map = Kokkos::create_mirror_view(d_map);
  for (size_t t = 0; t < type_map.size(); ++t) h_map(t) = type_map[t];
  Kokkos::deep_copy(d_map, h_map);
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

template <class DeviceType>
void PairNEPKokkos<DeviceType>::compute(int eflag_in, int vflag_in)
{
  ev_init(eflag_in, vflag_in);
  const int nlocal = atom->nlocal;
  const int nall = nlocal + atom->nghost;
  const bool newton = force->newton_pair;

  atomKK->sync(execution_space, datamask_read);
  auto x = atomKK->k_x.view<DeviceType>();
  auto f = atomKK->k_f.view<DeviceType>();
  auto type = atomKK->k_type.view<DeviceType>();
  auto *k_list = static_cast<NeighListKokkos<DeviceType> *>(list);
  const int inum = list->inum;

  if ((int) d_model_type.extent(0) < nall) d_model_type = Kokkos::View<int *, DeviceType>("nep:model_type", atom->nmax);
  {
    // map types, and count local atoms whose position is NaN or inf (they would fail every
    // cutoff test and silently lose their neighbours); one pass, one reduction
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
    if (bad > 0)
      nep_lmp::error_one(lmp, FLERR,
                         fmt::format("Pair style nep: {} atom(s) have non-finite positions at step {} (the run has "
                                     "blown up, or the input set NaN coordinates)", bad, update->ntimestep));
  }
  if (!newton)  // LAMMPS clears only local forces when newton_pair is off
    Kokkos::deep_copy(Kokkos::subview(f, std::make_pair(nlocal, nall), Kokkos::ALL), 0.0);
  if (eflag_atom && (int) d_eatom.extent(0) < nall) d_eatom = Kokkos::View<double *, DeviceType>("nep:eatom", atom->nmax);
  if (vflag_atom) {
    if ((int) d_w9.extent(0) < nall) d_w9 = decltype(d_w9)("nep:w9", atom->nmax);
    else Kokkos::deep_copy(d_w9, 0.0);
  }
  typename nep::Evaluator<DeviceType, double>::t_eatom e_view;
  typename nep::Evaluator<DeviceType, double>::t_vatom w_view;
  if (eflag_atom) e_view = d_eatom;
  if (vflag_atom) w_view = d_w9;

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
  try {
    if (ev_float)
      ev = ev_float->compute(inum, k_list->d_ilist, x, d_model_type, k_list->d_numneigh, neigh, f, e_view, w_view);
    else
      ev = ev_double->compute(inum, k_list->d_ilist, x, d_model_type, k_list->d_numneigh, neigh, f, e_view, w_view);
  } catch (std::exception &e) {
    nep_lmp::error_one(lmp, FLERR, std::string("NEP evaluation failed: ") + e.what());
  }
  atomKK->modified(execution_space, F_MASK);

  // ghost contributions onto owners (newton_pair off, one rank): on the execution space
  if (!newton && fold_on_device()) {
    auto off = d_image_offset;
    auto img = d_image_list;
    auto w = d_w9;
    const bool fold_w = vflag_atom;
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
  if (vflag_atom) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d_w9);
    w9.assign(h.data(), h.data() + 9 * static_cast<size_t>(nall));
  }
  if (!newton && !fold_on_device()) {
    // several ranks: LAMMPS's reverse communication (host buffers in this LAMMPS version)
    atomKK->sync(Host, F_MASK);
    reverse_ghosts(vflag_atom);
    atomKK->modified(Host, F_MASK);
  }
  if (vflag_atom) nep_lmp::store_peratom_virial(w9.data(), newton ? nall : nlocal, vatom, cvflag_atom ? cvatom : nullptr);

  nep_lmp::tally_totals(ev, eflag_global ? &eng_vdwl : nullptr, vflag_global ? virial : nullptr);
}

template <class DeviceType>
bool PairNEPKokkos<DeviceType>::fold_on_device()
{
  if (comm->nprocs != 1 || atom->map_style == Atom::MAP_NONE) return false;
  const int nlocal = atom->nlocal, nall = nlocal + atom->nghost;
  if (images_built_at == neighbor->ncalls && (int) d_image_offset.extent(0) == nlocal + 1 &&
      (int) d_image_list.extent(0) == nall - nlocal)
    return true;
  // owner of each ghost: atom->map(tag) returns the owned copy; counting sort by owner keeps
  // every owner's images in ghost-index order (deterministic sums)
  tagint *tag = atom->tag;
  std::vector<int> count(nlocal + 1, 0), owner(nall - nlocal);
  for (int g = nlocal; g < nall; ++g) {
    const int o = atom->map(tag[g]);
    if (o < 0 || o >= nlocal) nep_lmp::error_one(lmp, FLERR, fmt::format("pair nep/kk: ghost atom {} has no local owner", tag[g]));
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
  return true;
}

namespace LAMMPS_NS {
template class PairNEPKokkos<LMPDeviceType>;
#ifdef LMP_KOKKOS_GPU
template class PairNEPKokkos<LMPHostType>;
#endif
}    // namespace LAMMPS_NS
