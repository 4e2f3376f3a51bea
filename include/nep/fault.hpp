// Fault injection for the tests (opt-in through the environment; one flag test when unset).
//   NEP_FAULT=site[:n][,site[:n]...]   the n-th call (default 1) of maybe_fail(site) throws (a site
//                                      may be listed with several n)
//                                      std::bad_alloc, as a host or device allocation that runs
//                                      out of memory would
// It lets ctest drive the error paths that a full GPU or host memory takes (docs/errors.md):
// nothing may escape into LAMMPS, and a failed model swap must roll back.
#pragma once

namespace nep {

void maybe_fail(const char* site);

}  // namespace nep
