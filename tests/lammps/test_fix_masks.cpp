// fix nep/train under the KOKKOS package declares what it reads (issue #16 item 2): LAMMPS's
// ModifyKokkos syncs a fix's datamask_read to the host before each of its calls and marks
// datamask_modify modified there afterwards. With the defaults (all data, both ways) that is a
// full device-host round trip on every step. The fix must read nothing on ordinary steps, only
// x, f, type and tag on sampling steps, and modify nothing, ever.
// Runs LAMMPS in-process (-k on t 1 -sf kk, SW teacher) and checks the masks after every step.
//   usage: test_fix_masks PLUGIN.so WORKDIR
#include <mpi.h>

#include <cstdio>
#include <string>

#include "atom_masks.h"
#include "fix.h"
#include "input.h"
#include "lammps.h"
#include "modify.h"
#include "update.h"

using namespace LAMMPS_NS;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: test_fix_masks PLUGIN.so WORKDIR Si.sw\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  const std::string plugin = argv[1], dir = argv[2], sw = argv[3];    // sw: LAMMPS's own Si.sw
  FILE* fp = std::fopen((dir + "/nep.in").c_str(), "w");
  std::fputs("type 1 Si\ncutoff 4.2 3.7\nn_max 4 4\nbasis_size 6 6\nl_max 4 2 0\nneuron 8\nbatch 2\nepoch 2\n", fp);
  std::fclose(fp);
  const char* lmp_argv[] = {"lmp", "-log", "none", "-screen", "none", "-k", "on", "t", "1", "-sf", "kk"};
  auto* lmp = new LAMMPS(11, const_cast<char**>(lmp_argv), MPI_COMM_WORLD);
  const char* deck[] = {"units metal", "boundary p p p", "lattice diamond 5.431", "region box block 0 2 0 2 0 2",
                        "create_box 1 box", "create_atoms 1 box", "mass 1 28.0855",
                        "velocity all create 1500 7 loop geom", "pair_style sw"};
  for (const char* c : deck) lmp->input->one(c);
  lmp->input->one(("pair_coeff * * " + sw + " Si").c_str());
  lmp->input->one(("plugin load " + plugin).c_str());
  lmp->input->one("fix nve all nve");
  lmp->input->one(("fix learn all nep/train every 3 buffer " + dir + "/masks.h5 model " + dir +
                   "/masks.nep.txt input " + dir + "/nep.in train_every 1000 history none")
                      .c_str());
  Fix* fix = lmp->modify->fix[lmp->modify->find_fix("learn")];
  const auto sampling = static_cast<decltype(fix->datamask_read)>(X_MASK | F_MASK | TYPE_MASK | TAG_MASK);
  int bad = 0;
  lmp->input->one("run 0");
  for (int s = 1; s <= 10; ++s) {
    lmp->input->one("run 1 pre no post no");
    const bigint step = lmp->update->ntimestep;
    // the next call is the next step's pre_reverse: it samples when step + 1 is a multiple of 3
    const auto want = (step + 1) % 3 == 0 ? sampling : static_cast<decltype(sampling)>(EMPTY_MASK);
    const bool ok = fix->datamask_read == want && fix->datamask_modify == EMPTY_MASK;
    std::printf("%s step %lld: datamask_read %#llx (want %#llx), datamask_modify %#llx (want 0)\n", ok ? "ok  " : "FAIL",
                static_cast<long long>(step), static_cast<unsigned long long>(fix->datamask_read),
                static_cast<unsigned long long>(want), static_cast<unsigned long long>(fix->datamask_modify));
    bad += !ok;
  }
  delete lmp;
  MPI_Finalize();
  std::printf("%d failed\n", bad);
  return bad ? 1 : 0;
}
