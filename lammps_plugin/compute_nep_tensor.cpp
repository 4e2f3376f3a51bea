/* ----------------------------------------------------------------------
   lammps-nep: compute nep/dipole, compute nep/polarizability (compute_nep_tensor.h)
------------------------------------------------------------------------- */

#include "compute_nep_tensor.h"

#include "atom.h"
#include "comm.h"
#include "error.h"
#include "force.h"
#include "memory.h"
#include "neigh_list.h"
#include "neighbor.h"
#include "pair.h"
#include "update.h"

#include "nep/host_core.hpp"
#include "nep/model.hpp"
#include "nep_lammps_compat.h"
#include "nep_plugin_common.h"

#include <algorithm>
#include <cstring>
#include <exception>

using namespace LAMMPS_NS;

namespace {
// LAMMPS's order of a per-atom tensor: xx yy zz xy xz yz yx zx zy (compute centroid/stress/atom);
// of a global symmetric one: xx yy zz xy xz yz (compute pressure); the core's: row-major 3x3
constexpr int kAtomOrder[9] = {0, 4, 8, 1, 2, 5, 3, 6, 7};
}    // namespace

ComputeNEPTensor::ComputeNEPTensor(LAMMPS *lmp, int narg, char **arg) : Compute(lmp, narg, arg)
{
  dipole = strcmp(style, "nep/dipole") == 0;
  const std::string kind = dipole ? "dipole" : "polarizability";
  const int ntypes = atom->ntypes;
  if (narg != 4 + ntypes)
    error->all(FLERR, "Illegal compute {} command: compute ID group {} model.txt El1 ... El{} (one element or NULL "
               "per atom type)", style, style, ntypes);
  file = arg[3];
  try {
    model = std::make_unique<nep::Model>(nep::read_model(file));
  } catch (std::exception &e) {
    error->all(FLERR, "compute {}: cannot use NEP model: {}", style, e.what());
  }
  const nep::ModelKind want = dipole ? nep::ModelKind::Dipole : nep::ModelKind::Polarizability;
  if (model->kind != want)
    error->all(FLERR, "compute {}: {} is a {} model ({}), not a {} model", style, file, nep::kind_name(model->kind),
               model->tag(), kind);
  std::vector<std::string> names(arg + 4, arg + narg);
  int missing = -1;
  type_map = nep::map_types(*model, names, &missing);
  if (missing >= 0)
    error->all(FLERR, "compute {}: element '{}' (atom type {}) is not in NEP model {} (elements: {})", style,
               names[missing], missing + 1, file, nep_lmp::join(model->elements));
  try {
    core = std::make_unique<nep::HostCore>(*model, false);
  } catch (std::exception &e) {
    error->all(FLERR, "compute {}: cannot set up the NEP core: {}", style, e.what());
  }
  vector_flag = 1;
  size_vector = dipole ? 3 : 6;
  extvector = 1;    // totals over the group's atoms
  peratom_flag = 1;
  size_peratom_cols = dipole ? 3 : 9;
  comm_reverse = 9;
  vector = new double[size_vector];
  if (comm->me == 0)
    utils::logmesg(lmp, "NEP: compute {} with {} ({}, {} elements), cutoff {} A\n", style, file, model->tag(),
                   model->num_types(), model->cutoff_max());
}

ComputeNEPTensor::~ComputeNEPTensor()
{
  delete[] vector;
  memory->destroy(tensor_atom);
}

void ComputeNEPTensor::init()
{
  nep_lmp::check_units(lmp, style);
  const double skin = neighbor->skin;
  const double cut = model->cutoff_max() + skin;
  const double ghost = std::max(force->pair ? force->pair->cutforce + skin : 0.0, comm->cutghostuser);
  if (cut > ghost)
    error->all(FLERR, "compute {}: the model's cutoff {} A plus the neighbour skin exceeds the ghost-atom range {} A: "
               "use comm_modify cutoff {}", style, model->cutoff_max(), ghost, cut);
  nep_lmp::request_full_list(lmp, this, instance_me, cut);
}

void ComputeNEPTensor::init_list(int, NeighList *ptr)
{
  list = ptr;
}

// the per-atom tensors of this step on every local atom (ghost terms folded onto their owners)
void ComputeNEPTensor::evaluate()
{
  if (evaluated == update->ntimestep) return;
  evaluated = update->ntimestep;
  neighbor->build_one(list);
  const int nlocal = atom->nlocal, nall = nlocal + atom->nghost;
  std::string failure;
  try {
    model_type.resize(nall);
    for (int i = 0; i < nall; ++i) model_type[i] = type_map[atom->type[i]];
    t9.assign(9 * static_cast<size_t>(nall), 0.0);
    core->compute_tensor(list->inum, list->ilist, nall, &atom->x[0][0], model_type.data(), list->numneigh,
                         list->firstneigh, t9.data());
  } catch (std::exception &e) {
    failure = e.what();
  }
  if (!failure.empty())
    nep_lmp::error_one(lmp, FLERR, fmt::format("compute {}: NEP evaluation failed at step {}: {}", style,
                                               update->ntimestep, failure));
  nep_lmp::reverse_comm_compute(lmp, this);
}

void ComputeNEPTensor::compute_vector()
{
  invoked_vector = update->ntimestep;
  evaluate();
  double mine[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, all[9];
  const int *mask = atom->mask;
  for (int i = 0; i < atom->nlocal; ++i)
    if (mask[i] & groupbit)
      for (int c = 0; c < 9; ++c) mine[c] += t9[9 * static_cast<size_t>(i) + c];
  MPI_Allreduce(mine, all, 9, MPI_DOUBLE, MPI_SUM, world);
  if (dipole) {
    for (int c = 0; c < 3; ++c) vector[c] = all[c];
  } else {    // xx yy zz xy xz yz (the total of a rotation-invariant model is symmetric)
    const int order[6] = {0, 4, 8, 1, 2, 5};
    for (int c = 0; c < 6; ++c) vector[c] = all[order[c]];
  }
}

void ComputeNEPTensor::compute_peratom()
{
  invoked_peratom = update->ntimestep;
  if (atom->nmax > nmax) {
    memory->destroy(tensor_atom);
    nmax = atom->nmax;
    memory->create(tensor_atom, nmax, size_peratom_cols, "nep/tensor:tensor_atom");
    array_atom = tensor_atom;
  }
  evaluate();
  const int *mask = atom->mask;
  for (int i = 0; i < atom->nlocal; ++i)
    for (int c = 0; c < size_peratom_cols; ++c)
      tensor_atom[i][c] = (mask[i] & groupbit) ? t9[9 * static_cast<size_t>(i) + (dipole ? c : kAtomOrder[c])] : 0.0;
}

int ComputeNEPTensor::pack_reverse_comm(int n, int first, double *buf)
{
  int m = 0;
  for (int i = first; i < first + n; ++i)
    for (int c = 0; c < 9; ++c) buf[m++] = t9[9 * static_cast<size_t>(i) + c];
  return m;
}

void ComputeNEPTensor::unpack_reverse_comm(int n, int *list_, double *buf)
{
  int m = 0;
  for (int k = 0; k < n; ++k)
    for (int c = 0; c < 9; ++c) t9[9 * static_cast<size_t>(list_[k]) + c] += buf[m++];
}

double ComputeNEPTensor::memory_usage()
{
  return double(nmax) * size_peratom_cols * sizeof(double) + t9.capacity() * sizeof(double) +
         model_type.capacity() * sizeof(int) + (core ? core->memory_bytes() : 0.0);
}
