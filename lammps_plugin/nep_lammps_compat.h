/* lammps-nep: the LAMMPS calls whose form changed between 29Sep2021 (Debian's 7Jan2022 snapshot) and
   4Jul2026, one small helper each, so that the styles read the same against every LAMMPS.
   NEP_LAMMPS_VERSION (yyyymmdd) is the LAMMPS_VERSION of the LAMMPS found by CMake
   (lammps_plugin/CMakeLists.txt); LAMMPS itself defines no version macro for plugins. */
#ifndef LMP_NEP_LAMMPS_COMPAT_H
#define LMP_NEP_LAMMPS_COMPAT_H

#include "comm.h"
#include "lammps.h"
#include "neigh_request.h"
#include "neighbor.h"

#ifndef NEP_LAMMPS_VERSION
#error "NEP_LAMMPS_VERSION (yyyymmdd) is set by lammps_plugin/CMakeLists.txt"
#endif

// 24Mar2022 (LAMMPS patch_24Mar2022): NeighRequest's fields became private behind add_request() and
// setters; Comm's reverse_comm_pair/reverse_comm_fix became overloads of reverse_comm
#define NEP_LAMMPS_REQUEST_API (NEP_LAMMPS_VERSION >= 20220324)

namespace nep_lmp {

// a full neighbour list (no ghost neighbours) for a pair style, requested from its init_style();
// instance: the pair's (protected) instance_me, which tells sub-styles of one class apart before 24Mar2022
inline void request_full_list(LAMMPS_NS::LAMMPS *lmp, LAMMPS_NS::Pair *pair, int instance)
{
#if NEP_LAMMPS_REQUEST_API
  (void) instance;
  lmp->neighbor->add_request(pair, LAMMPS_NS::NeighConst::REQ_FULL);
#else
  const int irequest = lmp->neighbor->request(pair, instance);
  lmp->neighbor->requests[irequest]->half = 0;
  lmp->neighbor->requests[irequest]->full = 1;
#endif
}

// a perpetual full neighbour list (built whenever LAMMPS re-neighbours) for a fix, from its init()
inline void request_full_list(LAMMPS_NS::LAMMPS *lmp, LAMMPS_NS::Fix *fix, int instance)
{
#if NEP_LAMMPS_REQUEST_API
  (void) instance;
  lmp->neighbor->add_request(fix, LAMMPS_NS::NeighConst::REQ_FULL);
#else
  const int irequest = lmp->neighbor->request(fix, instance);
  lmp->neighbor->requests[irequest]->pair = 0;
  lmp->neighbor->requests[irequest]->fix = 1;
  lmp->neighbor->requests[irequest]->half = 0;
  lmp->neighbor->requests[irequest]->full = 1;
#endif
}

// an occasional full neighbour list (built by neighbor->build_one) for a compute, out to `cutoff`
// (Angstrom, skin included) when it is positive, else to the pair styles' cutoff
inline void request_full_list(LAMMPS_NS::LAMMPS *lmp, LAMMPS_NS::Compute *compute, int instance, double cutoff)
{
#if NEP_LAMMPS_REQUEST_API
  (void) instance;
  auto *req = lmp->neighbor->add_request(compute, LAMMPS_NS::NeighConst::REQ_FULL | LAMMPS_NS::NeighConst::REQ_OCCASIONAL);
  if (cutoff > 0.0) req->set_cutoff(cutoff);
#else
  const int irequest = lmp->neighbor->request(compute, instance);
  auto *req = lmp->neighbor->requests[irequest];
  req->pair = 0;
  req->compute = 1;
  req->half = 0;
  req->full = 1;
  req->occasional = 1;
  if (cutoff > 0.0) {
    req->cut = 1;
    req->cutoff = cutoff;
  }
#endif
}

// a KOKKOS-package style's request (already made by request_full_list): a Kokkos full list on the
// host or the device side
inline void set_kokkos_full_list(LAMMPS_NS::LAMMPS *lmp, LAMMPS_NS::Pair *pair, bool host, bool device)
{
  LAMMPS_NS::NeighRequest *request = lmp->neighbor->find_request(pair);
#if NEP_LAMMPS_REQUEST_API
  request->set_kokkos_host(host);
  request->set_kokkos_device(device);
  request->enable_full();
#else
  request->kokkos_host = host;
  request->kokkos_device = device;
  request->half = 0;
  request->full = 1;
#endif
}

// ghost atoms' pack_reverse_comm data onto their owners
inline void reverse_comm_pair(LAMMPS_NS::LAMMPS *lmp, LAMMPS_NS::Pair *pair)
{
#if NEP_LAMMPS_REQUEST_API
  lmp->comm->reverse_comm(pair);
#else
  lmp->comm->reverse_comm_pair(pair);
#endif
}

// owners' pack_forward_comm data onto their ghost copies
inline void forward_comm_pair(LAMMPS_NS::LAMMPS *lmp, LAMMPS_NS::Pair *pair)
{
#if NEP_LAMMPS_REQUEST_API
  lmp->comm->forward_comm(pair);
#else
  lmp->comm->forward_comm_pair(pair);
#endif
}

inline void reverse_comm_compute(LAMMPS_NS::LAMMPS *lmp, LAMMPS_NS::Compute *compute)
{
#if NEP_LAMMPS_REQUEST_API
  lmp->comm->reverse_comm(compute);
#else
  lmp->comm->reverse_comm_compute(compute);
#endif
}

inline void reverse_comm_fix(LAMMPS_NS::LAMMPS *lmp, LAMMPS_NS::Fix *fix, int size)
{
#if NEP_LAMMPS_REQUEST_API
  lmp->comm->reverse_comm(fix, size);
#else
  lmp->comm->reverse_comm_fix(fix, size);
#endif
}

}    // namespace nep_lmp

#endif
