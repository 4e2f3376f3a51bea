/* -*- c++ -*- ----------------------------------------------------------
   lammps-nep: pair_style ipi — the forces of an external code (Quantum ESPRESSO, CP2K, DFTB+, any
   ASE calculator) through the i-PI socket protocol, LAMMPS as the server (docs/pair_ipi.rst).
   Alone it is ab initio MD; as the teacher sub-style of pair_style hybrid/overlay it labels the
   frames of fix nep/train. A thin adapter to the LAMMPS-free nep::ipi library.
------------------------------------------------------------------------- */
#ifndef LMP_NEP_PAIR_IPI_H
#define LMP_NEP_PAIR_IPI_H

#include "pair.h"

#include <memory>
#include <string>
#include <vector>

namespace nep_lmp {
struct PairIPISettings;
}

namespace LAMMPS_NS {

class PairIPI : public Pair {
 public:
  PairIPI(class LAMMPS *);
  ~PairIPI() override;
  void compute(int, int) override;
  void settings(int, char **) override;
  void coeff(int, char **) override;
  void init_style() override;
  double init_one(int, int) override;
  double memory_usage() override;
  // "ipi_soft" (int, set by fix nep/train while the student drives): a failed call is not retried
  // and stops nothing; "ipi_failed" (int): the last compute's call failed (no forces, energy 0)
  void *extract(const char *name, int &dim) override;

  struct Link;    // rank 0: the socket server, the launched client, the private folder (pair_ipi.cpp)

 protected:
  std::unique_ptr<nep_lmp::PairIPISettings> opt;
  std::unique_ptr<Link> link;
  std::vector<std::string> type_elements;    // element of each atom type ([t-1])
  bool input_checked = false;                // the client's input file was compared with LAMMPS's atoms
  int soft = 0, failed = 0;                  // see extract()
  std::vector<double> gathered;              // rank 0: tag, type, x of every atom, in rank order
  std::vector<int> counts, displs;           // per rank: doubles gathered (4 per atom)

  void allocate();
  bool gather_atoms(std::vector<int> &types, std::vector<double> &x);    // rank 0: atoms in ID order
  std::string call(const std::vector<double> &x, int retries, double *result, bool &transient);
  std::string check_input(const std::vector<int> &types, const std::vector<double> &x, std::string &warning);
  void scatter_forces(const std::vector<double> &f_by_id);
  void nearest_image(double *dx) const;
};

}    // namespace LAMMPS_NS

#endif
