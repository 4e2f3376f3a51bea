/* -*- c++ -*- ----------------------------------------------------------
   lammps-nep: compute nep/dipole and compute nep/polarizability (docs/compute_nep_tensor.rst):
   a NEP dipole or polarizability model (GPUMD's nep4_dipole, nep4_polarizability, NEP3 forms)
   evaluated beside whatever pair style drives the MD, per atom and in total over the group.
------------------------------------------------------------------------- */
#ifndef LMP_NEP_COMPUTE_NEP_TENSOR_H
#define LMP_NEP_COMPUTE_NEP_TENSOR_H

#include "compute.h"

#include <memory>
#include <string>
#include <vector>

namespace nep {
class HostCore;
struct Model;
}    // namespace nep

namespace LAMMPS_NS {

class ComputeNEPTensor : public Compute {
 public:
  // compute ID group nep/dipole|nep/polarizability model.txt El1 El2 ...  (one element or NULL per type)
  ComputeNEPTensor(class LAMMPS *, int, char **);
  ~ComputeNEPTensor() override;
  void init() override;
  void init_list(int, class NeighList *) override;
  void compute_vector() override;
  void compute_peratom() override;
  int pack_reverse_comm(int, int, double *) override;
  void unpack_reverse_comm(int, int *, double *) override;
  double memory_usage() override;

 private:
  bool dipole = true;
  std::string file;
  std::unique_ptr<nep::Model> model;
  std::unique_ptr<nep::HostCore> core;
  std::vector<int> type_map;    // LAMMPS type -> model type (-1: NULL)
  std::vector<int> model_type;  // per atom (local + ghost)
  std::vector<double> t9;       // per-atom tensors (local + ghost), row-major 3x3
  class NeighList *list = nullptr;
  bigint evaluated = -1;        // the step t9 belongs to
  int nmax = 0;
  double **tensor_atom = nullptr;
  void evaluate();
};

}    // namespace LAMMPS_NS

#endif
