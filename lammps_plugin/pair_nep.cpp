/* ----------------------------------------------------------------------
   lammps-nep: pair_style nep — NEP (GPUMD nep.txt) through the lammps-nep core
------------------------------------------------------------------------- */

#include "pair_nep.h"
#include "pair_nep_charge.h"

#include "atom.h"
#include "comm.h"
#include "error.h"
#include "force.h"
#include "memory.h"
#include "neigh_list.h"
#include "neigh_request.h"
#include "neighbor.h"
#include "update.h"
#include "utils.h"

#include "nep/elements.hpp"
#include "nep/fault.hpp"
#include "nep/host_core.hpp"
#include "nep/model.hpp"
#include "nep_lammps_compat.h"
#include "nep_plugin_common.h"
#include "pair_nep_settings.h"

#include <cmath>
#include <cstring>
#include <exception>

using namespace LAMMPS_NS;

PairNEP::PairNEP(LAMMPS *lmp, const char *style) : Pair(lmp), style_name(style)
{
  single_enable = 0;
  ewaldflag = pppmflag = 1;    // charge models take the reciprocal part from kspace_style ewald or pppm
  restartinfo = 0;
  one_coeff = 1;
  manybody_flag = 1;
  no_virial_fdotr_compute = 1;
  centroidstressflag = CENTROID_AVAIL;
  unit_convert_flag = utils::NOCONVERT;
  comm_reverse = 3 + 9;    // forces + per-atom virial of ghosts, used when newton_pair is off
  comm_reverse_off = 3 + 9;
}

PairNEP::~PairNEP()
{
  release_charge_model();
  if (allocated) {
    memory->destroy(setflag);
    memory->destroy(cutsq);
  }
}

void PairNEP::allocate()
{
  allocated = 1;
  int n = atom->ntypes;
  memory->create(setflag, n + 1, n + 1, "pair:setflag");
  memory->create(cutsq, n + 1, n + 1, "pair:cutsq");
}

// pair_style nep [precision double|float] [cutoff R]     (also: pair_style nep FILE, NEP_CPU's form);
// the keywords are pair_nep_settings.cpp's table
void PairNEP::settings(int narg, char **arg)
{
  nep_lmp::PairNEPSettings ps;
  try {
    ps = nep_lmp::parse_pair_nep(std::vector<std::string>(arg, arg + narg));
  } catch (std::exception &e) {
    error->all(FLERR, "Illegal pair_style {} command: {}. Usage: {}", style_name, e.what(),
               nep_lmp::pair_nep_usage(style_name));
  }
  single_precision = ps.single_precision;
  legacy_model_file = ps.legacy_model_file;
  cutoff_setting = ps.cutoff;
}

// pair_coeff * * model.txt El1 El2 ...   (NULL for types not handled here)
// NEP_CPU form: pair_style nep FILE + pair_coeff * *  (types map to the model's elements in order)
void PairNEP::coeff(int narg, char **arg)
{
  if (!allocated) allocate();
  if (narg < 2 || strcmp(arg[0], "*") != 0 || strcmp(arg[1], "*") != 0)
    error->all(FLERR, "Incorrect args for pair coefficients: pair_coeff * * model.txt El1 El2 ...");
  const int ntypes = atom->ntypes;
  std::string file;
  std::vector<std::string> names;
  if (!legacy_model_file.empty() && narg == 2) {
    file = legacy_model_file;
  } else {
    if (narg != 3 + ntypes)
      error->all(FLERR, "Incorrect args for pair coefficients: expected pair_coeff * * model.txt and {} element names "
                 "(one per atom type, NULL to skip), got {} arguments", ntypes, narg);
    file = arg[2];
    for (int i = 3; i < narg; ++i) names.emplace_back(arg[i]);
  }
  if (file == "none") {    // no model yet (fix nep/train mode active trains and deploys one)
    if (names.empty() || cutoff_setting <= 0.0)
      error->all(FLERR, "pair_coeff * * none El1 ...: a nep style without a model needs 'pair_style {} cutoff R' "
                        "(the neighbour cutoff the future model will use) and one element per type", style_name);
    model.reset();
    core.reset();
    release_core();
    release_charge_model();
    type_names = names;
    type_map.assign(ntypes + 1, -1);
    for (int t = 1; t <= ntypes; ++t) {
      if (names[t - 1] == "NULL") continue;
      if (nep::atomic_number(names[t - 1]) == 0)
        error->all(FLERR, "pair_coeff: unknown element '{}' (atom type {})", names[t - 1], t);
      type_map[t] = 0;
    }
    for (int i = 1; i <= ntypes; ++i)
      for (int j = i; j <= ntypes; ++j) setflag[i][j] = (type_map[i] >= 0 && type_map[j] >= 0) ? 1 : 0;
    cutmax = cutoff_setting;
    if (comm->me == 0)
      utils::logmesg(lmp, "NEP: no model yet (pair_coeff none): cutoff {} A, this style contributes nothing until a "
                     "model is deployed\n", cutmax);
    return;
  }
  try {
    model = std::make_unique<nep::Model>(nep::read_model(file));
  } catch (std::exception &e) {
    error->all(FLERR, "pair_coeff: cannot use NEP model: {}", e.what());
  }
  if (model->kind == nep::ModelKind::Dipole || model->kind == nep::ModelKind::Polarizability)
    error->all(FLERR, "pair_coeff: {} is a {} model ({}), not a potential: evaluate it beside a potential with "
               "compute nep/{}", file, nep::kind_name(model->kind), model->tag(), nep::kind_name(model->kind));
  if (names.empty()) {
    if (ntypes > model->num_types())
      error->all(FLERR, "pair_style nep {}: {} atom types but the model has only {} elements",
                 file, ntypes, model->num_types());
    for (int t = 0; t < ntypes; ++t) names.push_back(model->elements[t]);
    if (comm->me == 0)
      utils::logmesg(lmp, "NEP: NEP_CPU-style 'pair_style nep FILE': atom types 1..{} mapped to the model's elements {}\n",
                     ntypes, nep_lmp::join(names));
  }
  type_names = names;
  int missing = -1;
  type_map = nep::map_types(*model, names, &missing);
  if (missing >= 0)
    error->all(FLERR, "pair_coeff: element '{}' (atom type {}) is not in NEP model {} (elements: {})", names[missing],
               missing + 1, file, nep_lmp::join(model->elements));
  for (int i = 1; i <= ntypes; ++i)
    for (int j = i; j <= ntypes; ++j) setflag[i][j] = (type_map[i] >= 0 && type_map[j] >= 0) ? 1 : 0;
  try {
    create_core();
  } catch (std::exception &e) {
    error->all(FLERR, "pair_coeff: cannot set up the NEP core: {}", e.what());
  }
  setup_charge_model();
  cutmax = model->cutoff_max();
  if (cutoff_setting > 0.0) {
    if (cutmax > cutoff_setting + 1e-12)
      error->all(FLERR, "pair_coeff: model {} has cutoff {} A, more than pair_style cutoff {}", file, cutmax,
                 cutoff_setting);
    cutmax = cutoff_setting;    // room for deployed models with larger cutoffs
  }
  if (comm->me == 0) {
    utils::logmesg(lmp, "NEP: {} ({} elements, {}), cutoff {} A, {} precision, pair style {}\n", file,
                   model->num_types(), model->tag(), cutmax, single_precision ? "float" : "double", force->pair_style);
    if (style_name == "nep/gpu" && core)
      utils::logmesg(lmp, "NEP: nep/gpu without the KOKKOS package active (-k on): evaluating on the host ({}), "
                     "like pair_style nep; for the GPU start LAMMPS with -k on g 1 -sf kk\n", core->space_name());
  }
}

bool PairNEP::replace_model(const nep::Model &m, std::string &why)
{
  if (!model && type_names.empty()) {
    why = "the pair style has no model yet (pair_coeff not given)";
    return false;
  }
  if (!m.is_potential() || (model && !model->is_potential())) {
    why = fmt::format("models are swapped only between potentials (this one is a {} model)",
                      nep::kind_name(m.is_potential() ? model->kind : m.kind));
    return false;
  }
  if (m.cutoff_max() > cutmax + 1e-12) {
    why = fmt::format("the new model's cutoff {} A exceeds the {} A the neighbour lists use", m.cutoff_max(), cutmax);
    return false;
  }
  int missing = -1;
  const std::vector<int> new_map = nep::map_types(m, type_names, &missing);
  if (missing >= 0) {
    why = fmt::format("element '{}' (atom type {}) is not in the new model", type_names[missing], missing + 1);
    return false;
  }
  auto old_model = std::move(model);
  auto old_map = type_map;
  try {
    model = std::make_unique<nep::Model>(m);
    type_map = new_map;
    create_core();
  } catch (std::exception &e) {
    why = e.what();
    model = std::move(old_model);
    type_map = old_map;
    try {    // back to the previous model (the evaluator is rebuilt, which can fail in turn)
      if (model) create_core();
      else release_core();
    } catch (std::exception &e2) {
      release_core();
      core_failure = fmt::format("the model swap failed ({}) and restoring the previous model failed too ({})",
                                 why, e2.what());
      why = core_failure;
    }
    return false;
  }
  return true;    // cutmax stays: the lists keep the cutoff they were built for
}

void PairNEP::create_core()
{
  nep::maybe_fail("pair:create_core");
  core.reset();
  core = std::make_unique<nep::HostCore>(*model, single_precision);
  core_failure.clear();
}

void PairNEP::release_core()
{
  core.reset();
}

bool PairNEP::core_ready() const
{
  return core != nullptr;
}

void PairNEP::reverse_ghosts(bool with_virial)
{
  reverse_virial = with_virial;
  nep_lmp::reverse_comm_pair(lmp, this);
  // folded: clear the ghost copies, or LAMMPS adds them a second time when only newton_bond is on
  double **f = atom->f;
  for (int i = atom->nlocal; i < atom->nlocal + atom->nghost; ++i) f[i][0] = f[i][1] = f[i][2] = 0.0;
}

void PairNEP::init_style()
{
  nep_lmp::check_units(lmp, "nep");
  if (!model && type_names.empty())
    error->all(FLERR, "Pair style nep: pair_coeff * * model.txt ... has not been given");
  nep_lmp::request_full_list(lmp, this, instance_me);
  if (charge) init_charge_model();
}

double PairNEP::init_one(int i, int j)
{
  if (setflag[i][j] == 0) return 0.0;    // type pair not handled by this style (hybrid)
  return cutmax;
}

void PairNEP::compute(int eflag, int vflag)
{
  ev_init(eflag, vflag);
  if (!model && core_failure.empty()) return;    // pair_coeff none: nothing until a model is deployed
  if (!core_ready()) nep_lmp::error_one(lmp, FLERR, "Pair style nep has no usable model: " + core_failure);
  const int nlocal = atom->nlocal;
  const int nall = nlocal + atom->nghost;
  const bool newton = force->newton_pair;
  double **f = atom->f;
  int *type = atom->type;

  // a NaN or inf coordinate fails every cutoff test and would silently drop the atom's neighbours
  double **x = atom->x;
  for (int i = 0; i < nlocal; ++i)
    if (!std::isfinite(x[i][0]) || !std::isfinite(x[i][1]) || !std::isfinite(x[i][2]))
      nep_lmp::error_one(lmp, FLERR,
                         fmt::format("Pair style nep: atom {} has a non-finite position at step {} (the run has "
                                     "blown up, or the input set NaN coordinates)", atom->tag[i], update->ntimestep));
  // ghost forces are ours to fold when newton_pair is off: start them from zero
  if (!newton)
    for (int i = nlocal; i < nall; ++i) f[i][0] = f[i][1] = f[i][2] = 0.0;
  // per-atom virials for compute stress/atom (vflag_atom) and/or centroid/stress/atom
  // (cvflag_atom: LAMMPS sets only this one when a style declares centroid support)
  const bool want_w9 = vflag_atom || cvflag_atom;
  if (charge) {    // qNEP: pair_nep_charge.cpp
    compute_charge_model();
    return;
  }

  nep::EnergyVirial ev;
  std::string failure;
  try {    // allocations included: nothing may escape into LAMMPS
    model_type.resize(nall);
    for (int i = 0; i < nall; ++i) model_type[i] = type_map[type[i]];
    if (want_w9) w9.assign(9 * static_cast<size_t>(nall), 0.0);
    ev = core->compute(list->inum, list->ilist, nall, &atom->x[0][0], model_type.data(), list->numneigh,
                       list->firstneigh, &f[0][0], eflag_atom ? eatom : nullptr, want_w9 ? w9.data() : nullptr);
  } catch (std::exception &e) {
    failure = e.what();
  }
  if (!failure.empty())
    nep_lmp::error_one(lmp, FLERR, fmt::format("NEP evaluation failed at step {}: {}", update->ntimestep, failure));

  if (!newton) reverse_ghosts(want_w9);
  nep_lmp::tally_totals(ev, eflag_global ? &eng_vdwl : nullptr, vflag_global ? virial : nullptr);
  if (want_w9) {
    const int n = newton ? nall : nlocal;
    nep_lmp::store_peratom_virial(w9.data(), n, vflag_atom ? vatom : nullptr, cvflag_atom ? cvatom : nullptr);
  }
}

int PairNEP::pack_reverse_comm(int n, int first, double *buf)
{
  int m = 0;
  double **f = atom->f;
  for (int i = first; i < first + n; ++i) {
    buf[m++] = f[i][0];
    buf[m++] = f[i][1];
    buf[m++] = f[i][2];
    if (reverse_virial)
      for (int c = 0; c < 9; ++c) buf[m++] = w9[9 * static_cast<size_t>(i) + c];
  }
  return m;
}

void PairNEP::unpack_reverse_comm(int n, int *list_, double *buf)
{
  int m = 0;
  double **f = atom->f;
  for (int k = 0; k < n; ++k) {
    const int j = list_[k];
    f[j][0] += buf[m++];
    f[j][1] += buf[m++];
    f[j][2] += buf[m++];
    if (reverse_virial)
      for (int c = 0; c < 9; ++c) w9[9 * static_cast<size_t>(j) + c] += buf[m++];
  }
}

double PairNEP::memory_usage()
{
  double bytes = Pair::memory_usage();
  bytes += model_type.capacity() * sizeof(int) + w9.capacity() * sizeof(double);
  if (core) bytes += core->memory_bytes();
  return bytes;
}
