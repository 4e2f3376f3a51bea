/* ----------------------------------------------------------------------
   lammps-nep: pair_style nep with a NEP charge model (qNEP, docs/pair_nep.rst "Charge models").

   Each step: the network gives short-range energies and raw charges Q_i; q_i = Q_i - <Q> goes into
   atom->q; the real-space Coulomb terms are computed here; the reciprocal part comes from the
   kspace style (ewald, pppm) or, without one, from NEP_CPU's own Ewald sum (mpi-reduced structure
   factors). The forces need dE/dq_i: the real-space part's is summed here, the kspace solver's is
   2 eatom_i / q_i (its per-atom energy is q_i times half its potential, self and net-charge terms
   included), which exists once the solver has run, so the internal fix NEP_CHARGE calls
   finish_charge_step() before the ghost forces are communicated, and keeps per-atom energies on
   every step through an internal compute pe/atom.
------------------------------------------------------------------------- */

#include "pair_nep.h"
#include "pair_nep_charge.h"

#include "atom.h"
#include "comm.h"
#include "compute.h"
#include "domain.h"
#include "error.h"
#include "fix_nep_charge.h"
#include "force.h"
#include "kspace.h"
#include "modify.h"
#include "neigh_list.h"
#include "update.h"
#include "utils.h"

#include "nep/coulomb.hpp"
#include "nep/host_core.hpp"
#include "nep/model.hpp"
#include "nep_lammps_compat.h"
#include "nep_plugin_common.h"

#include <cmath>
#include <exception>

using namespace LAMMPS_NS;


namespace {
// unique ids for the internal fix and compute of each charge-model pair style in one LAMMPS
int next_charge_id()
{
  static int count = 0;
  return count++;
}
}    // namespace

// pair_coeff with a charge model: the electrostatics of the model; for modes 1 and 2 the internal fix
// and compute exist from here on, before the first run's integrator set-up looks for per-atom energy
void PairNEP::setup_charge_model()
{
  if (!model || model->kind != nep::ModelKind::Charge) {
    release_charge_model();
    cut_coul = 0.0;
    return;
  }
  if (!charge) charge = std::make_unique<ChargeState>();
  charge->setup = nep::charge_setup(*model);
  charge->setup.exact_two_pi();    // periodic k-sum (atoms are remapped into the box)
  cut_coul = charge->setup.rc;
  comm_forward = 1;
  if (charge->setup.mode == 3 || !charge->fix_id.empty()) return;
  const int id = next_charge_id();
  charge->compute_id = fmt::format("NEP_CHARGE_PE_{}", id);
  charge->fix_id = fmt::format("NEP_CHARGE_{}", id);
  Compute *pe = modify->add_compute(charge->compute_id + " all pe/atom");
  auto *fix = dynamic_cast<FixNEPCharge *>(modify->add_fix(charge->fix_id + " all NEP_CHARGE"));
  if (!fix) error->all(FLERR, "pair_coeff: could not create the internal fix NEP_CHARGE");
  fix->attach(this, pe);
}

void PairNEP::release_charge_model()
{
  if (!charge) return;
  if (!charge->fix_id.empty() && modify && modify->find_fix(charge->fix_id) >= 0) modify->delete_fix(charge->fix_id);
  if (!charge->compute_id.empty() && modify && modify->find_compute(charge->compute_id) >= 0)
    modify->delete_compute(charge->compute_id);
  charge.reset();
}

void PairNEP::init_charge_model()
{
  const int mode = charge->setup.mode;
  if (!atom->q_flag)
    error->all(FLERR, "Pair style {}: model {} sets per-atom charges: it needs an atom style with charge "
               "(atom_style charge or full)", style_name, model->tag());
  if (std::fabs(force->qqrd2e - nep::kCoulombK) > 1e-9 * nep::kCoulombK)
    error->all(FLERR, "Pair style {}: charge models need units metal and dielectric 1 (qqrd2e = {}, the models "
               "use {})", style_name, force->qqrd2e, nep::kCoulombK);
  if (utils::strmatch(update->integrate_style, "^respa"))
    error->all(FLERR, "Pair style {} with a charge model does not support run_style respa", style_name);
  charge->kspace = force->kspace != nullptr;
  if (mode == 3 && charge->kspace)
    error->all(FLERR, "Pair style {}: {} is a real-space-only charge model (damped shifted-force Coulomb); "
               "remove the kspace_style", style_name, model->tag());
  charge->g_ewald = charge->setup.alpha;
  if (!charge->kspace) {
    if (comm->me == 0 && mode != 3)
      utils::logmesg(lmp, "NEP: charge model {}: reciprocal sum by NEP_CPU's Ewald k-set (alpha = pi/rc = {:.6} 1/A, "
                     "exact 2 pi), cost ~ N x k-vectors; for large systems add kspace_style pppm\n",
                     model->tag(), charge->setup.alpha);
    return;
  }
  const std::string ks = force->kspace_style;
  if (ks != "ewald" && ks != "pppm" && ks != "ewald/omp" && ks != "pppm/omp")
    error->all(FLERR, "Pair style {}: kspace_style {} is not supported with charge models (ewald or pppm, and their "
               "/omp forms: their per-atom energies give the charge forces)", style_name, force->kspace_style);
  if (!force->kspace->compute_flag)
    error->all(FLERR, "Pair style {}: a charge model needs the kspace solver on every step (kspace_modify compute yes)",
               style_name);
  // a kspace solver sizes its mesh / k-vectors by the charges it sees at init: all zero (a data file
  // without the model's charges) gives a useless one, so it is set up again on the first step
  double q2 = 0.0, q2all = 0.0;
  for (int i = 0; i < atom->nlocal; ++i)
    if (type_map[atom->type[i]] >= 0) q2 += atom->q[i] * atom->q[i];
  MPI_Allreduce(&q2, &q2all, 1, MPI_DOUBLE, MPI_SUM, world);
  charge->reinit_kspace = q2all == 0.0;
  check_kspace_splitting();
  if (comm->me == 0 && charge->reinit_kspace)
    utils::logmesg(lmp, "NEP: the atoms have no charges yet: kspace_style {} is set up again with the model's "
                   "charges on the first step\n", force->kspace_style);
}

// the splitting parameter of the kspace solver: the real-space and self terms use it; mode 2 needs pi/rc
void PairNEP::check_kspace_splitting()
{
  const int mode = charge->setup.mode;
  charge->g_ewald = force->kspace->g_ewald;
  if (mode == 2 && std::fabs(charge->g_ewald - charge->setup.alpha) > 1e-12 * charge->setup.alpha)
    error->all(FLERR, "Pair style {}: {} is a reciprocal-space-only model, defined with the Ewald parameter "
               "pi/rc: use kspace_modify gewald {:.17g} (now {})", style_name, model->tag(), charge->setup.alpha,
               charge->g_ewald);
  if (comm->me == 0)
    utils::logmesg(lmp, "NEP: charge model {}: real space to {} A with g_ewald {:.8} 1/A{}, reciprocal part by "
                   "kspace_style {}\n", model->tag(), cut_coul, charge->g_ewald,
                   std::fabs(charge->g_ewald - charge->setup.alpha) < 1e-12 * charge->setup.alpha
                       ? " (the model's pi/rc)" : fmt::format(" (the model's pi/rc is {:.17g})", charge->setup.alpha),
                   force->kspace_style);
}

namespace {
// mean over the listed local atoms of every rank
double global_mean(const std::vector<int> &atoms, const double *v, MPI_Comm world)
{
  double local[2] = {0.0, static_cast<double>(atoms.size())}, total[2];
  for (int i : atoms) local[0] += v[i];
  MPI_Allreduce(local, total, 2, MPI_DOUBLE, MPI_SUM, world);
  return total[1] > 0.0 ? total[0] / total[1] : 0.0;
}

// LAMMPS's box as a cell (rows a, b, c) for the built-in k-sum
nep::Cell box_cell(Domain *domain)
{
  nep::Cell c;
  const double *h = domain->h;    // xprd yprd zprd yz xz xy
  c.h[0] = h[0];
  c.h[3] = domain->triclinic ? h[5] : 0.0;
  c.h[4] = h[1];
  c.h[6] = domain->triclinic ? h[4] : 0.0;
  c.h[7] = domain->triclinic ? h[3] : 0.0;
  c.h[8] = h[2];
  return c;
}
}    // namespace

void PairNEP::compute_charge_model()
{
  ChargeState &cs = *charge;
  if (cs.pending)
    error->all(FLERR, "Pair style {}: the previous step's charge forces were never completed (the internal fix "
               "NEP_CHARGE was not called: an integrator without the pre_reverse stage?)", style_name);
  const int nlocal = atom->nlocal, nall = nlocal + atom->nghost, inum = list->inum;
  double **f = atom->f;
  double *q = atom->q;
  cs.want_w9 = vflag_atom || cvflag_atom;
  double e_short = 0.0;
  std::string failure;
  try {
    model_type.resize(nall);
    for (int i = 0; i < nall; ++i) model_type[i] = type_map[atom->type[i]];
    if (cs.want_w9) w9.assign(9 * static_cast<size_t>(nall), 0.0);
    cs.raw.assign(nall, 0.0);
    cs.phi.assign(nall, 0.0);
    e_short = core->compute_charges(inum, list->ilist, nall, &atom->x[0][0], model_type.data(), list->numneigh,
                                    list->firstneigh, eflag_atom ? eatom : nullptr, cs.raw.data());
  } catch (std::exception &e) {
    failure = e.what();
  }
  if (!failure.empty())
    nep_lmp::error_one(lmp, FLERR, fmt::format("NEP evaluation failed at step {}: {}", update->ntimestep, failure));

  // charges: the network's, less their mean over all of the model's atoms (NEP_CPU, GPUMD)
  cs.model_atoms.clear();
  for (int ii = 0; ii < inum; ++ii)
    if (model_type[list->ilist[ii]] >= 0) cs.model_atoms.push_back(list->ilist[ii]);
  const double mean = global_mean(cs.model_atoms, cs.raw.data(), world);
  for (int i : cs.model_atoms) {
    q[i] = cs.raw[i] - mean;
    if (q[i] == 0.0) q[i] = 1e-200;    // kspace: dE/dq_i is read as 2 eatom_i / q_i
  }
  nep_lmp::forward_comm_pair(lmp, this);    // the ghosts' charges for the real-space pairs
  if (force->kspace) force->kspace->qsum_qsq();
  if (cs.reinit_kspace) {    // (init_charge_model) mesh / k-vectors for these charges
    cs.reinit_kspace = false;
    force->kspace->init();
    force->kspace->setup();
    check_kspace_splitting();
  }

  // real-space Coulomb (modes 1, 3) over the model's pairs: eng_coul, forces on the locals, dE/dq
  const int mode = cs.setup.mode;
  nep::EnergyVirial el;
  auto add = [&el](const nep::EnergyVirial &t) {
    el.energy += t.energy;
    for (int c = 0; c < 9; ++c) el.virial[c] += t.virial[c];
  };
  double *w = cs.want_w9 ? w9.data() : nullptr;
  double *ea = eflag_atom ? eatom : nullptr;
  const int nm = static_cast<int>(cs.model_atoms.size());
  if (mode == 1 || mode == 3)
    add(nep::coulomb_real_space(mode, cs.g_ewald, cut_coul, cs.setup.A, cs.setup.B, nm, cs.model_atoms.data(),
                                &atom->x[0][0], q, list->numneigh, list->firstneigh, &f[0][0], ea, w, cs.phi.data()));
  if (cs.kspace && mode == 2)    // the solver includes the self term, which this model does not have
    el.energy += nep::coulomb_self(cs.g_ewald, -1.0, nm, cs.model_atoms.data(), q, ea, cs.phi.data());
  if (!cs.kspace && mode != 3) {    // NEP_CPU's reciprocal sum, structure factors summed over ranks
    if (mode == 1) el.energy += nep::coulomb_self(cs.g_ewald, 1.0, nm, cs.model_atoms.data(), q, ea, cs.phi.data());
    const nep::EwaldKVectors kv = nep::ewald_kvectors(cs.setup, box_cell(domain));
    std::vector<double> xs(3 * nm), qs(nm), s(2 * kv.size(), 0.0), stot(2 * kv.size());
    for (int k = 0; k < nm; ++k) {
      const int i = cs.model_atoms[k];
      for (int d = 0; d < 3; ++d) xs[3 * k + d] = atom->x[i][d];
      qs[k] = q[i];
    }
    nep::ewald_structure_factor(kv, nm, xs.data(), qs.data(), s.data(), s.data() + kv.size());
    MPI_Allreduce(s.data(), stot.data(), 2 * kv.size(), MPI_DOUBLE, MPI_SUM, world);
    std::vector<double> fs(3 * nm, 0.0), es(nm, 0.0), ws(cs.want_w9 ? 9 * nm : 0, 0.0), ps(nm, 0.0);
    add(nep::ewald_reciprocal(kv, stot.data(), stot.data() + kv.size(), nm, xs.data(), qs.data(), fs.data(), es.data(),
                              cs.want_w9 ? ws.data() : nullptr, ps.data()));
    for (int k = 0; k < nm; ++k) {
      const int i = cs.model_atoms[k];
      for (int d = 0; d < 3; ++d) f[i][d] += fs[3 * k + d];
      if (ea) ea[i] += es[k];
      if (w)
        for (int c = 0; c < 9; ++c) w[9 * static_cast<size_t>(i) + c] += ws[9 * k + c];
      cs.phi[i] += ps[k];
    }
  }
  if (eflag_global) {
    eng_vdwl += e_short;
    eng_coul += el.energy;
  }
  if (vflag_global) nep_lmp::tally_totals(el, nullptr, virial);
  cs.pending = true;
  if (!cs.kspace) finish_charge_step();    // dE/dq is complete: stage 2 now
}

void PairNEP::finish_charge_step()
{
  if (!charge || !charge->pending) return;
  ChargeState &cs = *charge;
  cs.pending = false;
  double *q = atom->q;
  if (cs.kspace) {
    if (update->eflag_atom != update->ntimestep)
      error->all(FLERR, "Pair style {}: the kspace solver computed no per-atom energies at step {} (needed for the "
                 "charge forces; was reset_timestep used before a run with pre no?)", style_name, update->ntimestep);
    const double *ek = force->kspace->eatom;
    for (int i : cs.model_atoms) cs.phi[i] += 2.0 * ek[i] / q[i];
  }
  // the derivative of the mean removal: dE/dQ_j = phi_j - <phi>
  const double mean = global_mean(cs.model_atoms, cs.phi.data(), world);
  for (int i : cs.model_atoms) cs.phi[i] -= mean;
  nep::EnergyVirial ev;
  std::string failure;
  try {
    ev = core->compute_charge_forces(cs.phi.data(), &atom->f[0][0], cs.want_w9 ? w9.data() : nullptr);
  } catch (std::exception &e) {
    failure = e.what();
  }
  if (!failure.empty())
    nep_lmp::error_one(lmp, FLERR, fmt::format("NEP evaluation failed at step {}: {}", update->ntimestep, failure));
  const bool newton = force->newton_pair;
  if (!newton) reverse_ghosts(cs.want_w9);
  if (vflag_global) nep_lmp::tally_totals(ev, nullptr, virial);
  if (cs.want_w9) {
    const int n = newton ? atom->nlocal + atom->nghost : atom->nlocal;
    nep_lmp::store_peratom_virial(w9.data(), n, vflag_atom ? vatom : nullptr, cvflag_atom ? cvatom : nullptr);
  }
}

int PairNEP::pack_forward_comm(int n, int *list_, double *buf, int, int *)
{
  for (int k = 0; k < n; ++k) buf[k] = atom->q[list_[k]];
  return n;
}

void PairNEP::unpack_forward_comm(int n, int first, double *buf)
{
  for (int k = 0; k < n; ++k) atom->q[first + k] = buf[k];
}

void *PairNEP::extract(const char *name, int &dim)
{
  dim = 0;
  if (charge && strcmp(name, "cut_coul") == 0) return (void *) &cut_coul;
  return nullptr;
}
