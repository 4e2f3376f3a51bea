/* ----------------------------------------------------------------------
   lammps-nep: pair_style ipi (docs/pair_ipi.rst)

   Each compute: the atoms of every rank are gathered to rank 0 in atom-ID order, rank 0 sends
   positions and cell to the connected i-PI client (nep::ipi::Server) and receives energy, forces
   and virial, the forces go back to the ranks that own the atoms. Energy and virial are tallied on
   rank 0 (LAMMPS sums the ranks). No neighbour list, no ghost forces. A launched client is
   restarted after a failed call (retries), an external one is waited for (wait); then LAMMPS stops
   with the reason.
------------------------------------------------------------------------- */

#include "pair_ipi.h"

#include "atom.h"
#include "comm.h"
#include "domain.h"
#include "error.h"
#include "force.h"
#include "memory.h"
#include "update.h"
#include "utils.h"

#include "nep/ipi/at_exit.hpp"
#include "nep/ipi/client_input.hpp"
#include "nep/ipi/client_process.hpp"
#include "nep/ipi/server.hpp"
#include "nep/carve.hpp"
#include "nep/elements.hpp"
#include "nep_plugin_common.h"
#include "pair_ipi_settings.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <unistd.h>

using namespace LAMMPS_NS;

// rank 0's connection to the client
struct PairIPI::Link {
  std::string folder;                       // the private folder of an auto UNIX socket (removed at the end)
  std::unique_ptr<nep::ipi::Server> server;
  nep::ipi::ClientProcess process;
  std::string command;                      // the launch command, placeholders replaced
  std::vector<int> order;                   // gathered index of the atom with the k-th smallest ID
  int calls = 0;                            // calls answered
  int failures = 0;                         // failed attempts (each retry counts)
  ~Link()
  {
    server.reset();    // EXIT to the client
    process.stop();
    if (!folder.empty()) {
      ::rmdir(folder.c_str());
      nep::ipi::forget_at_exit(folder);
    }
  }
};


PairIPI::PairIPI(LAMMPS *lmp) : Pair(lmp), opt(new nep_lmp::PairIPISettings)
{
  single_enable = 0;
  restartinfo = 0;
  one_coeff = 1;
  manybody_flag = 1;
  no_virial_fdotr_compute = 1;
  centroidstressflag = CENTROID_NOTAVAIL;
  unit_convert_flag = utils::NOCONVERT;
  // for compute pair ipi (rank 0's counts; the other ranks hold zeros, the compute sums the ranks):
  // 1 calls answered, 2 seconds spent in calls (connecting, launching, retries included), 3 failed attempts
  nextra = 3;
  pvector = new double[nextra]();
}

PairIPI::~PairIPI()
{
  delete[] pvector;
  if (allocated) {
    memory->destroy(setflag);
    memory->destroy(cutsq);
  }
}

void PairIPI::allocate()
{
  allocated = 1;
  const int n = atom->ntypes;
  memory->create(setflag, n + 1, n + 1, "pair:setflag");
  memory->create(cutsq, n + 1, n + 1, "pair:cutsq");
}

// pair_style ipi [unix auto|NAME | inet PORT [host ADDRESS]] [launch "COMMAND"] [log FILE] [timeout S]
//                [wait S] [retries N] [input FILE]        (the table: pair_ipi_settings.cpp)
void PairIPI::settings(int narg, char **arg)
{
  nep_lmp::check_units(lmp, "pair_style ipi");
  try {
    *opt = nep_lmp::parse_pair_ipi(std::vector<std::string>(arg, arg + narg));
  } catch (std::exception &e) {
    error->all(FLERR, "Illegal pair_style ipi command: {}. Usage: {}", e.what(), nep_lmp::pair_ipi_usage());
  }
  link.reset();    // a new pair_style command: a new server (the old client is stopped)
  std::fill(pvector, pvector + nextra, 0.0);
  input_checked = false;
}

// pair_coeff * * El1 ... ElN: the element of each atom type (the client's input must agree)
void PairIPI::coeff(int narg, char **arg)
{
  if (!allocated) allocate();
  const int ntypes = atom->ntypes;
  if (narg != 2 + ntypes || strcmp(arg[0], "*") != 0 || strcmp(arg[1], "*") != 0)
    error->all(FLERR, "Incorrect args for pair coefficients: pair_coeff * * El1 ... El{} (one element per atom type)",
               ntypes);
  type_elements.clear();
  for (int t = 1; t <= ntypes; ++t) {
    const std::string el = arg[1 + t];
    if (nep::atomic_number(el) == 0)
      error->all(FLERR, "pair_coeff: '{}' (atom type {}) is not an element: pair_style ipi computes every atom, "
                 "so every type needs its element", el, t);
    type_elements.push_back(el);
  }
  for (int i = 1; i <= ntypes; ++i)
    for (int j = i; j <= ntypes; ++j) setflag[i][j] = 1;
  input_checked = false;
}

void PairIPI::init_style()
{
  if (atom->tag_enable == 0) error->all(FLERR, "pair_style ipi needs atom IDs (the client's atoms are in ID order)");
  // the client sees a periodic cell of the box's size: a shrink-wrapped box would put the periodic
  // images of the atoms next to them
  if (domain->nonperiodic == 2)
    error->all(FLERR, "pair_style ipi: the client treats the box as periodic; shrink-wrapped boundaries (s, m) "
                      "would bring the atoms' images next to them: use p, or f with room around the atoms");
  if (domain->nonperiodic == 1 && comm->me == 0)
    error->warning(FLERR, "pair_style ipi: the client treats the box as periodic in every direction: a fixed (f) "
                          "boundary needs room (vacuum) enough that the atoms do not see their images");
  // no neighbour list: the client computes the whole cell
}

// No interaction range of its own (the client sees the whole cell); a nominal 1 Angstrom keeps
// LAMMPS's communication cutoff above 0 (ghost shell = skin + 1 A), so a deck with this style alone
// gets no "no ghost atoms, atoms may get lost" warning
double PairIPI::init_one(int, int)
{
  return 1.0;
}

// Atoms of every rank to rank 0 (collective); there in atom-ID order: types and positions
bool PairIPI::gather_atoms(std::vector<int> &types, std::vector<double> &x)
{
  const int nlocal = atom->nlocal;
  constexpr int W = 5;    // tag, type, x, y, z
  std::vector<double> mine(static_cast<size_t>(W) * nlocal);
  for (int i = 0; i < nlocal; ++i) {
    double *m = &mine[static_cast<size_t>(W) * i];
    m[0] = static_cast<double>(atom->tag[i]);
    m[1] = atom->type[i];
    for (int d = 0; d < 3; ++d) m[2 + d] = atom->x[i][d];
  }
  gathered = nep_lmp::gather_to_root(mine, world, counts, displs);
  if (comm->me != 0) return true;
  const size_t natoms = gathered.size() / W;
  std::vector<int> &order = link->order;
  order.resize(natoms);
  for (size_t k = 0; k < natoms; ++k) order[k] = static_cast<int>(k);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return gathered[W * a] < gathered[W * b]; });
  types.resize(natoms);
  x.resize(3 * natoms);
  for (size_t k = 0; k < natoms; ++k) {
    const double *m = &gathered[static_cast<size_t>(W) * order[k]];
    types[k] = static_cast<int>(m[1]);
    for (int d = 0; d < 3; ++d) x[3 * k + d] = m[2 + d];
  }
  return true;
}

// dx (a difference of positions) to its image nearest in fractional coordinates, periodic directions
// only (nep::MinimumImage; LAMMPS's own Domain::minimum_image changed its arguments in 2026 and
// rejects far images)
void PairIPI::nearest_image(double *dx) const
{
  double h[9];
  bool pbc[3];
  nep_lmp::cell_rows(domain, h, pbc);
  nep::MinimumImage(h, pbc).apply(dx);
}

// Rank 0: the client's input file against LAMMPS's atoms (ID order): species must agree (else the
// error text), positions should (else a warning: the file may describe another starting point)
std::string PairIPI::check_input(const std::vector<int> &types, const std::vector<double> &x, std::string &warning)
{
  if (opt->input.empty()) {
    warning = "pair_style ipi: no 'input FILE': the client's atom order and species cannot be checked (the protocol "
              "carries neither); a client whose atoms are in another order computes another system";
    return "";
  }
  const nep::ipi::ClientInput c = nep::ipi::read_client_input(opt->input);
  if (c.species.size() != types.size())
    return fmt::format("{} lists {} atoms, LAMMPS has {}", c.file, c.species.size(), types.size());
  for (size_t k = 0; k < types.size(); ++k)
    if (c.species[k] != type_elements[types[k] - 1])
      return fmt::format("{}:{}: atom {} of the client is {}, but LAMMPS's atom with the {}th smallest ID is {} "
                         "(type {}): the client's atoms must be LAMMPS's in atom-ID order", c.file, c.lines[k], k + 1,
                         c.species[k], k + 1, type_elements[types[k] - 1], types[k]);
  // pw.x keeps the symmetry of its starting positions for the whole run: from a perfect crystal
  // every later call would return symmetrized (wrong) forces for displaced atoms
  if (c.pw_uses_symmetry)
    return fmt::format("{}: no 'nosym = .true.' in &SYSTEM: pw.x imposes the symmetry of these starting positions "
                       "on every configuration LAMMPS sends (symmetrized, wrong forces once the atoms move); add "
                       "nosym = .true.", c.file);
  if (!c.has_positions) return "";
  // largest distance between the file's atom k and LAMMPS's, nearest periodic image
  double worst = 0.0;
  size_t worst_k = 0;
  for (size_t k = 0; k < types.size(); ++k) {
    double dx[3];
    for (int d = 0; d < 3; ++d) dx[d] = x[3 * k + d] - c.positions[3 * k + d];
    nearest_image(dx);
    const double r = std::sqrt(dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]);
    if (r > worst) {
      worst = r;
      worst_k = k;
    }
  }
  if (worst > 0.05)
    warning = fmt::format("pair_style ipi: atom {} of {} (line {}) is {:.3g} Angstrom from LAMMPS's atom of that place "
                          "in ID order at step {}: fine if the file is another starting point of the same atoms, "
                          "wrong if its atom order differs", worst_k + 1, c.file, c.lines[worst_k], worst,
                          update->ntimestep);
  return "";
}

// Rank 0: one call (connecting, launching and restarting as needed). result: energy, virial (9),
// forces by ID (3N). Returns the error text ("" = fine).
// (transient: the fault may be gone at a later call: a dead, hung or absent client; not a wrong atom
// count. In soft mode an external client is waited for 5 s at the most.)
std::string PairIPI::call(const std::vector<double> &x, int retries, double *result, bool &transient)
{
  Link &L = *link;
  transient = true;
  nep::ipi::Frame fr;
  fr.cell = {domain->xprd, 0, 0, domain->xy, domain->yprd, 0, domain->xz, domain->yz, domain->zprd};
  fr.positions = x;
  const bool launched = !opt->launch.empty();
  const std::string where = L.server->is_unix() ? "UNIX socket " + L.server->path() + " (client name " +
                                                      L.server->client_name() + ")"
                                                : fmt::format("{}:{}", opt->host, L.server->port());
  std::string last;
  for (int attempt = 0; attempt <= retries; ++attempt) {
    if (!L.server->connected()) {
      if (launched && !L.process.running()) {
        if (L.process.starts() > 0)
          utils::logmesg(lmp, "pair_style ipi: restarting the client ({}; last fault: {})\n",
                         L.process.exit_status().empty() ? "stopped" : L.process.exit_status(), last);
        L.process.start(L.command, opt->log);
      }
      const double wait = soft && !launched ? std::min(opt->wait, 5.0) : opt->wait;
      utils::logmesg(lmp, "pair_style ipi: waiting up to {} s for a client at {}\n", wait, where);
      bool ok = false;
      for (double waited = 0.0; waited < wait && !ok; waited += 0.5) {
        ok = L.server->accept(std::min(0.5, wait - waited));
        if (!ok && launched && !L.process.running()) {
          ++L.failures;
          return fmt::format("the client '{}' ended ({}) before it connected; its output is in {}", L.command,
                             L.process.exit_status(), opt->log);
        }
      }
      if (!ok) {
        ++L.failures;
        return fmt::format("no client connected to {} within {} s{}", where, wait,
                           launched ? " (see " + opt->log + ")" : "");
      }
    }
    try {
      const nep::ipi::Result r = L.server->compute(fr, opt->timeout);
      result[0] = r.energy;
      std::copy(r.virial.begin(), r.virial.end(), result + 1);
      std::copy(r.forces.begin(), r.forces.end(), result + 10);
      ++L.calls;
      return "";
    } catch (nep::ipi::Error &e) {
      ++L.failures;
      last = e.what();
      if (e.fault() == nep::ipi::Fault::AtomCount) {
        transient = false;
        return last;
      }
      if (launched) {
        L.server->disconnect();
        L.process.stop(0.0);
      }
      error->warning(FLERR, "pair_style ipi: step {}: call failed ({}); {}", update->ntimestep, last,
                     attempt < retries ? (launched ? "restarting the client" : "waiting for a client") : "giving up");
    }
  }
  return fmt::format("the client failed {} time(s) at step {}; last: {}", retries + 1, update->ntimestep, last);
}

// Forces by ID (rank 0) to the ranks that own the atoms (collective)
void PairIPI::scatter_forces(const std::vector<double> &f_by_id)
{
  std::vector<double> send;
  std::vector<int> fcounts(comm->nprocs), fdispls(comm->nprocs);
  if (comm->me == 0) {
    send.resize(3 * link->order.size());
    for (size_t k = 0; k < link->order.size(); ++k)
      for (int d = 0; d < 3; ++d) send[3 * static_cast<size_t>(link->order[k]) + d] = f_by_id[3 * k + d];
    for (int r = 0; r < comm->nprocs; ++r) {
      fcounts[r] = counts[r] / 5 * 3;
      fdispls[r] = displs[r] / 5 * 3;
    }
  }
  const int nlocal = atom->nlocal;
  std::vector<double> mine(3 * static_cast<size_t>(nlocal));
  MPI_Scatterv(send.data(), fcounts.data(), fdispls.data(), MPI_DOUBLE, mine.data(), 3 * nlocal, MPI_DOUBLE, 0, world);
  double **f = atom->f;
  for (int i = 0; i < nlocal; ++i)
    for (int d = 0; d < 3; ++d) f[i][d] += mine[3 * i + d];
}

void PairIPI::compute(int eflag, int vflag)
{
  ev_init(eflag, vflag);
  if (eflag_atom || vflag_atom || cvflag_atom)
    error->all(FLERR, "pair_style ipi: the i-PI protocol returns no per-atom energy or stress; compute pe/atom, "
                      "stress/atom and centroid/stress/atom cannot use this pair style");
  std::string err, warning;
  if (comm->me == 0 && !link) {
    try {
      auto made = std::make_unique<Link>();    // moved into `link` only when complete
      nep::ipi::ServerOptions so;
      if (opt->inet) {
        so.host = opt->host;
        so.port = opt->port;
      } else if (opt->unix_name.empty()) {    // a private folder: only this user reaches the socket
        char tmpl[] = "/tmp/ipi_XXXXXX";
        if (!mkdtemp(tmpl)) throw nep::Error(std::string("cannot create a folder /tmp/ipi_XXXXXX: ") + strerror(errno));
        made->folder = tmpl;
        nep::ipi::remove_at_exit(made->folder);    // also when LAMMPS exits on an error
        so.path = made->folder + "/sock";
      } else {
        so.path = "/tmp/ipi_" + opt->unix_name;
      }
      made->server = std::make_unique<nep::ipi::Server>(so);
      made->command = nep::ipi::expand_command(opt->launch, made->server->client_name(), opt->host, made->server->port());
      link = std::move(made);
    } catch (std::exception &e) {
      err = e.what();
    }
  }
  err = nep_lmp::bcast_string(err, world);
  if (!err.empty()) error->all(FLERR, "pair_style ipi: {}", err);
  if (comm->me != 0 && !link) link = std::make_unique<Link>();

  std::vector<int> types;
  std::vector<double> x;
  gather_atoms(types, x);
  const size_t natoms = types.size();
  std::vector<double> result;    // rank 0: energy, virial (9), forces by ID
  int transient = 0;
  if (comm->me == 0) {
    try {
      result.assign(10 + 3 * natoms, 0.0);
      if (!input_checked) err = check_input(types, x, warning);
      // soft (fix nep/train, the student driving): one attempt; the fix carries on without labels
      bool t = false;
      if (err.empty()) {
        const auto t0 = std::chrono::steady_clock::now();
        err = call(x, soft ? 0 : opt->retries, result.data(), t);
        pvector[0] = link->calls;
        pvector[1] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        pvector[2] = link->failures;
      }
      transient = t ? 1 : 0;
    } catch (std::exception &e) {
      err = e.what();
    }
  }
  nep_lmp::wait_for_root(world);    // the other ranks sleep, not spin, while the client computes
  err = nep_lmp::bcast_string(err, world);
  MPI_Bcast(&transient, 1, MPI_INT, 0, world);
  failed = 0;
  if (!err.empty() && soft && transient) {
    failed = 1;    // the caller (fix nep/train) counts it; no forces, energy or virial from this call
    if (comm->me == 0) error->warning(FLERR, "pair_style ipi: {}; fix nep/train goes on without this frame", err);
    return;
  }
  if (!err.empty()) error->all(FLERR, "pair_style ipi: {}", err);
  if (comm->me == 0 && !warning.empty()) error->warning(FLERR, warning);
  input_checked = true;
  std::vector<double> f_by_id;
  if (comm->me == 0) f_by_id.assign(result.begin() + 10, result.end());
  scatter_forces(f_by_id);
  if (comm->me == 0) {
    const double *w = result.data() + 1;    // row-major W
    if (eflag_global) eng_vdwl += result[0];
    if (vflag_global) {
      virial[0] += w[0];
      virial[1] += w[4];
      virial[2] += w[8];
      virial[3] += 0.5 * (w[1] + w[3]);
      virial[4] += 0.5 * (w[2] + w[6]);
      virial[5] += 0.5 * (w[5] + w[7]);
    }
  }
}

void *PairIPI::extract(const char *name, int &dim)
{
  dim = 0;
  if (strcmp(name, "ipi_soft") == 0) return &soft;
  if (strcmp(name, "ipi_failed") == 0) return &failed;
  return nullptr;
}

double PairIPI::memory_usage()
{
  return static_cast<double>(gathered.capacity()) * sizeof(double);
}
