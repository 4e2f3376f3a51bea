/* -*- c++ -*- ----------------------------------------------------------
   lammps-nep: pair_style nep (and nep/gpu when LAMMPS runs without Kokkos)
   A thin adapter from LAMMPS to the lammps-nep core (no Kokkos or core internals in this header).
------------------------------------------------------------------------- */
#ifndef LMP_NEP_PAIR_NEP_H
#define LMP_NEP_PAIR_NEP_H

#include "pair.h"

#include <memory>
#include <string>
#include <vector>

namespace nep {
class HostCore;
struct Model;
}  // namespace nep

namespace LAMMPS_NS {

class PairNEP : public Pair {
 public:
  // style: the name it was created as ("nep", or "nep/gpu" when LAMMPS runs without -k on: then
  // this same host evaluation serves it, and the log says so)
  PairNEP(class LAMMPS *, const char *style = "nep");
  ~PairNEP() override;
  void compute(int, int) override;
  void settings(int, char **) override;
  void coeff(int, char **) override;
  void init_style() override;
  double init_one(int, int) override;
  int pack_reverse_comm(int, int, double *) override;
  void unpack_reverse_comm(int, int *, double *) override;
  int pack_forward_comm(int, int *, double *, int, int *) override;
  void unpack_forward_comm(int, int, double *) override;
  void *extract(const char *, int &) override;
  double memory_usage() override;
  // charge models with a kspace style (pair_nep_charge.cpp): the rest of this step's forces once the
  // kspace solver has run (its per-atom energies give dE/dq), called by the internal fix NEP_CHARGE
  // before the ghost forces are communicated
  void finish_charge_step();
  // fix nep/train `deploy yes`: use model `m` from now on, atom types keeping their elements.
  // Returns false (with the reason) when it cannot: an element missing, or a larger cutoff than
  // the neighbour lists were built for.
  bool replace_model(const nep::Model &m, std::string &why);

 protected:
  std::string style_name;
  bool single_precision = false;
  double cutoff_setting = 0.0;         // pair_style ... cutoff R (0: the model's)
  std::string legacy_model_file;       // NEP_CPU form: pair_style nep FILE
  std::unique_ptr<nep::Model> model;
  std::unique_ptr<nep::HostCore> core;
  std::vector<int> type_map;           // LAMMPS type -> model type (-1 = NULL)
  std::vector<std::string> type_names; // element per LAMMPS type from pair_coeff ("NULL" = skipped)
  std::vector<int> model_type;         // per atom (local + ghost)
  std::vector<double> w9;              // per-atom 9-component virial (local + ghost)
  double cutmax = 0.0;
  bool reverse_virial = false;         // what pack/unpack_reverse_comm carry this step

  std::string core_failure;            // why there is no usable evaluator (a failed model swap)

  // charge models (qNEP, pair_nep_charge.cpp): the electrostatics set up from the model and the
  // kspace solver; this step's raw network charges, charges and dE/dq of all atoms
  struct ChargeState;
  std::unique_ptr<ChargeState> charge;
  double cut_coul = 0.0;               // real-space Coulomb cutoff (the model's largest radial cutoff)
  void setup_charge_model();           // pair_coeff: the internal fix and per-atom-energy compute
  void init_charge_model();            // init_style: checks, the kspace solver's splitting parameter
  void compute_charge_model();         // compute(): stage 1, charges, real-space terms [, stage 2]
  void check_kspace_splitting();       // the solver's g_ewald: read, and checked for reciprocal-only models
  void release_charge_model();

  void allocate();
  // build the evaluator for the current model and precision (the Kokkos variant overrides); throws
  virtual void create_core();
  virtual void release_core();
  virtual bool core_ready() const;
  // newton_pair off: fold ghost forces (and per-atom virials) onto their owners
  void reverse_ghosts(bool with_virial);
};

}    // namespace LAMMPS_NS

#endif
