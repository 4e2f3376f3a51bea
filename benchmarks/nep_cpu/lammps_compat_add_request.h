// Force-included (g++ -include) when compiling NEP_CPU's pair_NEP.cpp, so that the third-party
// file stays verbatim. pair_NEP.cpp @640515ec calls neighbor->add_request(this, NeighConst::REQ_FULL),
// an API that appeared in LAMMPS 24Mar2022; our LAMMPS (29Sep2021 update 2, "7Jan2022" package)
// only has Neighbor::request(). This maps the call onto the old API with the same meaning
// (one full neighbor list for this pair style), as NEP_CPU's older pair_NEP.cpp did.
#pragma once
#include "neigh_request.h"
#include "neighbor.h"

namespace nepcpu_compat {
inline int request_full_list(LAMMPS_NS::Neighbor *neighbor, void *requestor, int instance)
{
  const int irequest = neighbor->request(requestor, instance);
  neighbor->requests[irequest]->half = 0;
  neighbor->requests[irequest]->full = 1;
  return irequest;
}
}    // namespace nepcpu_compat

// neighbor->add_request(this, FLAGS)  ->  neighbor->requests[request_full_list(...)]->full
// (FLAGS is always NeighConst::REQ_FULL in pair_NEP.cpp; it is dropped.)
#define add_request(requestor, flags) \
  requests[nepcpu_compat::request_full_list(neighbor, requestor, instance_me)]->full
