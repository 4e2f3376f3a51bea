// fix nep/train's two threads: the MD thread evaluates the model (pair style nep through HostCore,
// the fix's selection through Calculator on the host backend, and Serial) while the training
// thread runs a round, whose validation and descriptor passes use the core on Kokkos::Serial.
// Neither may disturb the other: the MD thread's numbers equal those computed alone, and the
// round's model has the same bytes as the same round run alone. tools/sanitize.sh tsan runs this
// under ThreadSanitizer with a Serial-only Kokkos built with TSan, where any state the two threads
// share (Kokkos 3.4's Serial reduction scratch among them) is reported as a data race. A committee
// round's models trained side by side on two workers are the bytes of one after another.
#include <gtest/gtest.h>

#include <cmath>

#include "nep/calculator.hpp"
#include "nep/host_core.hpp"
#include "nep/train/otf_round.hpp"
#include "nep/train/config.hpp"
#include "test_support.hpp"

namespace {

struct HostCoreResult {
  double energy = 0;
  std::vector<double> f;
};

// pair-style path: LAMMPS-shaped arrays from a standalone neighbour list
HostCoreResult host_core_eval(nep::HostCore& core, const nep::NeighborList& nl) {
  std::vector<int> ilist(nl.nlocal), numneigh(nl.nall, 0);
  std::vector<int*> first(nl.nall, nullptr);
  std::vector<int> neigh = nl.neighbors;
  for (int i = 0; i < nl.nlocal; ++i) {
    ilist[i] = i;
    numneigh[i] = nl.num_neighbors[i];
    first[i] = neigh.data() + static_cast<size_t>(i) * nl.max_neighbors;
  }
  HostCoreResult r;
  r.f.assign(3 * static_cast<size_t>(nl.nall), 0.0);
  r.energy = core.compute(nl.nlocal, ilist.data(), nl.nall, nl.x.data(), nl.type.data(), numneigh.data(), first.data(),
                          r.f.data(), nullptr, nullptr)
                 .energy;
  return r;
}

nep::OtfRoundInput round_input() {
  const auto all = nep::read_training_xyz(
      nep_test::data_path("train/PbTe_gpumd-example_25frames_PbTe_NEP4-NEP_CPU-double-labels_EFV_train.xyz"));
  nep::OtfRoundInput in;
  in.cfg = nep::parse_train_config(
      "type 2 Te Pb\ncutoff 5 4\nn_max 4 4\nbasis_size 4 4\nl_max 4 2 0\nneuron 8\nbatch 2\nepoch 8\n", "nep.in");
  in.train.assign(all.begin(), all.begin() + 6);
  in.heldout.assign(all.begin() + 6, all.begin() + 8);
  return in;
}

TEST(Concurrency, MdEvaluationBesideATrainingRound) {
  const auto ref = nep_test::load_reference("PbTe_NEP4__tric_24_rattled_swapped");
  const auto nl = nep::build_neighbor_list(ref.structure.x, ref.structure.type, ref.structure.cell, ref.model.cutoff_max());
  const auto in = round_input();
  std::vector<nep::Prediction> a, b;
  std::vector<HostCoreResult> c;
  nep::OtfRoundResult beside;
  {
    // nothing has run a kernel in this process yet: the two threads' first kernels meet here (a
    // first Serial reduction allocates Kokkos's shared scratch, which is what would race)
    nep::Calculator host(ref.model, nep::Precision::Double, nep::Backend::Host);
    nep::Calculator serial(ref.model, nep::Precision::Double, nep::Backend::Serial);
    nep::HostCore core(ref.model, false);
    nep::OtfWorker worker;
    worker.start(in);
    for (int k = 0; k < 20; ++k) {  // a round of 8 epochs outlasts these (~1 ms each)
      a.push_back(host.compute(ref.structure, true));
      b.push_back(serial.compute(ref.structure, true));
      c.push_back(host_core_eval(core, nl));
    }
    beside = worker.join();
  }
  // the same computations alone
  nep::Calculator host(ref.model, nep::Precision::Double, nep::Backend::Host);
  nep::Calculator serial(ref.model, nep::Precision::Double, nep::Backend::Serial);
  nep::HostCore core(ref.model, false);
  const auto p_host = host.compute(ref.structure, true);
  const auto p_serial = serial.compute(ref.structure, true);
  const auto p_core = host_core_eval(core, nl);
  EXPECT_LE(std::fabs(p_serial.energy - ref.energy), 1e-10 * std::fabs(ref.energy));
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_NEAR(a[k].energy, p_host.energy, 1e-12 * std::fabs(p_host.energy));
    EXPECT_LE(nep_test::max_rel_dev(a[k].force, p_host.force), 1e-12);
    EXPECT_EQ(b[k].energy, p_serial.energy);  // Serial: same order of sums, same bits
    EXPECT_EQ(b[k].force, p_serial.force);
    EXPECT_EQ(b[k].vatom, p_serial.vatom);
    EXPECT_NEAR(c[k].energy, p_core.energy, 1e-12 * std::fabs(p_core.energy));
    EXPECT_LE(nep_test::max_rel_dev(c[k].f, p_core.f), 1e-12);
  }
  const nep::OtfRoundResult alone = nep::train_otf_round(in, nullptr);
  EXPECT_EQ(nep::format_model(beside.model), nep::format_model(alone.model));
  EXPECT_EQ(beside.heldout_rmse_f, alone.heldout_rmse_f);
}

// A committee round's models trained side by side (threads 2: two workers of one thread, sharing
// the round's frames, neighbour lists and pair bases) are the bytes of the same models trained one
// after another on one thread; under ThreadSanitizer the two workers are watched too.
TEST(Concurrency, CommitteeModelsSideBySide) {
  auto in = round_input();
  in.committee = 3;
  in.threads = 1;
  const nep::OtfRoundResult one = nep::train_otf_round(in, nullptr);
  in.threads = 2;
  const nep::OtfRoundResult two = nep::train_otf_round(in, nullptr);
  ASSERT_EQ(one.members.size(), 2u);
  ASSERT_EQ(two.members.size(), 2u);
  EXPECT_EQ(nep::format_model(two.model), nep::format_model(one.model));
  for (size_t m = 0; m < 2; ++m) EXPECT_TRUE(nep::format_model(two.members[m]) == nep::format_model(one.members[m])) << m;
}

}  // namespace
