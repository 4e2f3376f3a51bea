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
  double memory_usage() override;
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
