/* ----------------------------------------------------------------------
   lammps-nep: fix nep/train's arguments: the keywords (one table, fix_nep_train_settings.cpp),
   parsed and checked on every rank before anything is read or opened, and nep.in.
------------------------------------------------------------------------- */

#include "fix_nep_train.h"

#include "atom.h"
#include "comm.h"
#include "error.h"
#include "utils.h"

#include "fix_nep_train_impl.h"
#include "nep/carve.hpp"
#include "nep_plugin_common.h"

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

using namespace LAMMPS_NS;

void FixNEPTrain::parse_args(int narg, char **arg)
{
  if (igroup != 0) error->all(FLERR, "fix nep/train must use group all");
  nep_lmp::check_units(lmp, "fix nep/train");
  try {
    opt = std::make_unique<nep_lmp::FixNEPTrainSettings>(
        nep_lmp::parse_fix_nep_train(std::vector<std::string>(arg + 3, arg + narg), atom->ntypes));
  } catch (std::exception &e) {
    error->all(FLERR, "Illegal fix nep/train command: {}. Usage: {}", e.what(), nep_lmp::fix_nep_train_usage(atom->ntypes));
  }
  if (opt->active)
    act = std::make_unique<Active>(opt->act, static_cast<uint64_t>(opt->seed), opt->every, opt->train_every);
}

// nep.in: read on rank 0, errors on every rank (nep.in:LINE: ... messages); the elements of the
// atom types ('elements', else nep.in's type list) must be nep.in's
void FixNEPTrain::read_nep_in()
{
  std::string err;
  if (comm->me == 0) {
    try {
      impl->cfg = nep::read_train_config(opt->input_path);
      impl->cfg.seed = static_cast<uint64_t>(opt->seed);
      for (const auto &w : impl->cfg.warnings) error->warning(FLERR, "fix nep/train: {}", w);
      if (opt->carve_regions > 0)
        carve_outer = nep::carve_outer_radius(opt->carve_core, nep::make_model_skeleton(impl->cfg).cutoff_max());
    } catch (std::exception &e) {
      err = e.what();
    }
  }
  err = nep_lmp::bcast_string(err, world);
  if (!err.empty()) error->all(FLERR, "fix nep/train: {}", err);
  MPI_Bcast(&carve_outer, 1, MPI_DOUBLE, 0, world);
  const std::string elements = nep_lmp::bcast_string(comm->me == 0 ? nep_lmp::join(impl->cfg.elements) : "", world);
  const std::vector<std::string> nep_elements = utils::split_words(elements);
  std::vector<std::string> &type_elements = opt->type_elements;
  if (type_elements.empty()) {
    if ((int) nep_elements.size() != atom->ntypes)
      error->all(FLERR, "fix nep/train: {} atom types but {} lists {} elements ({}): give 'elements El1 ... El{}'",
                 atom->ntypes, opt->input_path, nep_elements.size(), elements, atom->ntypes);
    type_elements = nep_elements;
  }
  for (int t = 0; t < atom->ntypes; ++t)
    if (std::find(nep_elements.begin(), nep_elements.end(), type_elements[t]) == nep_elements.end())
      error->all(FLERR, "fix nep/train: element '{}' (atom type {}) is not in {}'s type list ({})", type_elements[t],
                 t + 1, opt->input_path, elements);
}
