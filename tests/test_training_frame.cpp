// Training-set reader (GPUMD train.xyz conventions): all shipped sets, label semantics checked
// against the core itself (NEP_CPU-labelled sets), stress->virial, exact round trip, rejections.
#include <gtest/gtest.h>

#include <cmath>

#include "nep/calculator.hpp"
#include "nep/error.hpp"
#include "nep/training_frame.hpp"
#include "test_support.hpp"

namespace {

struct SetInfo {
  const char* file;
  size_t frames;
  bool energy, forces, virial;
};

const SetInfo kSets[] = {
    {"BaTiO3_gpumd-tests_pytest_nepBaTiO3-labelled_4frames_EF_train.xyz", 4, true, true, false},
    {"C_graphene-graphite_NEP_CPU-test_dftd3_13frames_EFV_train.xyz", 13, true, true, true},
    {"CrCoNi_torchnep_5frames_nep_CrCoNi-NEP_CPU-double-labels_EFV_train.xyz", 5, true, true, true},
    {"CrCoNi_torchnep_5frames_structures-only.xyz", 5, false, false, false},
    {"PbTe_gpumd-example_25frames_EF_train.xyz", 25, true, true, false},
    {"PbTe_gpumd-example_25frames_PbTe_NEP4-NEP_CPU-double-labels_EFV_train.xyz", 25, true, true, true},
    {"mixed_Cu-WH-H2O-C_gpumd-outcar2xyz-example_4frames_EFV-bec_train.xyz", 4, true, true, true},
    {"mixed_WH-Cu-C_gpumd-outcar2xyz-multiframe-example_7frames_EFV_train.xyz", 7, true, true, true},
};

TEST(TrainingFrame, ReadsEveryShippedSet) {
  for (const auto& set : kSets) {
    const auto frames = nep::read_training_xyz(nep_test::data_path(std::string("train/") + set.file));
    ASSERT_EQ(frames.size(), set.frames) << set.file;
    for (const auto& f : frames) {
      EXPECT_EQ(f.has_energy, set.energy) << set.file;
      EXPECT_EQ(f.has_forces, set.forces) << set.file;
      EXPECT_EQ(f.has_virial, set.virial) << set.file;
      EXPECT_EQ(f.pos.size(), 3u * f.natoms());
      EXPECT_GT(f.volume(), 0.0);
    }
  }
  // capitalised Weight / Config_type keys
  const auto mixed = nep::read_training_xyz(
      nep_test::data_path("train/mixed_WH-Cu-C_gpumd-outcar2xyz-multiframe-example_7frames_EFV_train.xyz"));
  EXPECT_FALSE(mixed[0].config_type.empty());
}

// The labels mean what the core computes: NEP_CPU-labelled PbTe frames reproduce exactly.
TEST(TrainingFrame, LabelsAgreeWithTheCoreOnNepCpuLabelledFrames) {
  const auto model = nep::read_model(nep_test::data_path("potentials/PbTe_NEP4.txt"));
  const auto frames = nep::read_training_xyz(
      nep_test::data_path("train/PbTe_gpumd-example_25frames_PbTe_NEP4-NEP_CPU-double-labels_EFV_train.xyz"));
  nep::Calculator calc(model);
  for (size_t k = 0; k < frames.size(); k += 6) {
    const auto& f = frames[k];
    nep::Structure s;
    s.x = f.pos;
    std::copy(f.cell, f.cell + 9, s.cell.h);
    for (const auto& el : f.species) s.type.push_back(el == model.elements[0] ? 0 : 1);
    const auto p = calc.compute(s, false);
    EXPECT_NEAR(p.energy, f.energy, 1e-10 * std::fabs(f.energy));
    double wmax = 0;
    for (double w : f.virial) wmax = std::max(wmax, std::fabs(w));
    for (int c = 0; c < 9; ++c) EXPECT_NEAR(p.virial[c], f.virial[c], 1e-10 * wmax);
    EXPECT_LE(nep_test::max_rel_dev(p.force, f.forces), 1e-10);
  }
}

const std::string kHead = "2\nLattice=\"4 0 0 0 5 0 0 0 6\" Properties=species:S:1:pos:R:3:force:R:3";
const std::string kAtoms = "\nSi 0 0 0 0.1 0.2 0.3\nSi 1 1 1 -0.1 -0.2 -0.3\n";

TEST(TrainingFrame, StressBecomesMinusStressTimesVolumeAndVirialWins) {
  auto f = nep::parse_training_xyz(kHead + " energy=-1.5 stress=\"1 0 0 0 2 0 0 0 3\"" + kAtoms, "s.xyz");
  ASSERT_TRUE(f[0].has_virial);
  EXPECT_DOUBLE_EQ(f[0].virial[0], -120.0);  // V = 120 A^3
  EXPECT_DOUBLE_EQ(f[0].virial[4], -240.0);
  EXPECT_DOUBLE_EQ(f[0].virial[8], -360.0);
  f = nep::parse_training_xyz(kHead + " virial=\"9 0 0 0 9 0 0 0 9\" stress=\"1 0 0 0 2 0 0 0 3\"" + kAtoms, "s.xyz");
  EXPECT_DOUBLE_EQ(f[0].virial[0], 9.0);
}

TEST(TrainingFrame, RoundTripIsExact) {
  for (const auto& set : kSets) {
    const auto a = nep::read_training_xyz(nep_test::data_path(std::string("train/") + set.file));
    const auto b = nep::parse_training_xyz(nep::format_training_xyz(a), "roundtrip");
    ASSERT_EQ(a.size(), b.size());
    for (size_t k = 0; k < a.size(); ++k) {
      EXPECT_EQ(a[k].species, b[k].species);
      EXPECT_EQ(a[k].pos, b[k].pos);
      EXPECT_EQ(a[k].forces, b[k].forces);
      EXPECT_EQ(a[k].energy, b[k].energy);
      EXPECT_EQ(a[k].weight, b[k].weight);
      EXPECT_EQ(a[k].config_type, b[k].config_type);
      for (int c = 0; c < 9; ++c) {
        EXPECT_EQ(a[k].virial[c], b[k].virial[c]);
        EXPECT_EQ(a[k].cell[c], b[k].cell[c]);
      }
    }
    EXPECT_EQ(nep::format_training_xyz(b), nep::format_training_xyz(a)) << set.file;
  }
}

// found by tests/fuzz/fuzz_xyz: a quoted config_type with spaces was written bare and came back cut
TEST(TrainingFrame, ConfigTypesWithSpacesAndQuotesRoundTrip) {
  const std::string atoms = " Properties=species:S:1:pos:R:3\nSi 0 0 0\n";
  const std::string lattice = "1\nLattice=\"5 0 0 0 5 0 0 0 5\" config_type=";
  for (const std::string& v : {std::string("\"bulk liquid 3000K\""), std::string("'say \"hi\" twice'"),
                               std::string("a\"b'c"), std::string("\"'quoted'\"")}) {
    const auto a = nep::parse_training_xyz(lattice + v + atoms, "t.xyz");
    const auto b = nep::parse_training_xyz(nep::format_training_xyz(a), "roundtrip");
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(a[0].config_type, b[0].config_type) << v;
    EXPECT_NE(a[0].config_type, "") << v;
  }
}

// per-atom force weights (lammps-nep's force_weight:R:1 column): read, written after the forces,
// exact round trip; frames without the column keep force_weight empty
TEST(TrainingFrame, ForceWeightColumnRoundTrips) {
  const std::string head = "2\nLattice=\"4 0 0 0 5 0 0 0 6\" Properties=species:S:1:pos:R:3:force:R:3:force_weight:R:1";
  const auto a = nep::parse_training_xyz(head + "\nSi 0 0 0 0.1 0.2 0.3 0\nSi 1 1 1 -0.1 -0.2 -0.3 0.25\n" + kHead +
                                             kAtoms, "w.xyz");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].force_weight, (std::vector<double>{0.0, 0.25}));
  EXPECT_EQ(a[0].force_weight_of(1), 0.25);
  EXPECT_TRUE(a[1].force_weight.empty());
  EXPECT_EQ(a[1].force_weight_of(1), 1.0);
  auto frames = a;
  frames[1].force_weight = {1.0 / 3.0, 7e-300};
  const std::string text = nep::format_training_xyz(frames);
  EXPECT_NE(text.find("force:R:3:force_weight:R:1"), std::string::npos) << text;
  const auto b = nep::parse_training_xyz(text, "roundtrip");
  ASSERT_EQ(b.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(b[k].force_weight, frames[k].force_weight);
    EXPECT_EQ(b[k].forces, frames[k].forces);
  }
  EXPECT_EQ(nep::format_training_xyz(b), text);
  // without weights no column is written
  frames[0].force_weight.clear();
  EXPECT_EQ(nep::format_training_xyz({frames[0]}).find("force_weight"), std::string::npos);
}

void expect_reject(const std::string& text, const std::string& where, const std::string& what) {
  try {
    nep::parse_training_xyz(text, "t.xyz");
    FAIL() << "accepted";
  } catch (const nep::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("t.xyz:" + where + ":"), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

TEST(TrainingFrameReject, MissingLattice) {
  expect_reject("1\nProperties=species:S:1:pos:R:3 energy=1\nSi 0 0 0\n", "2", "no Lattice");
}
TEST(TrainingFrameReject, BadEnergy) { expect_reject(kHead + " energy=abc" + kAtoms, "2", "bad number 'abc' in energy"); }
TEST(TrainingFrameReject, ShortVirial) {
  expect_reject(kHead + " virial=\"1 2 3 4 5 6 7 8\"" + kAtoms, "2", "virial needs 9 number(s), got 8");
}
TEST(TrainingFrameReject, NanStress) {
  expect_reject(kHead + " stress=\"1 2 3 4 nan 6 7 8 9\"" + kAtoms, "2", "non-finite value 'nan' in stress");
}
TEST(TrainingFrameReject, ZeroWeight) { expect_reject(kHead + " weight=0" + kAtoms, "2", "weight must be positive"); }
TEST(TrainingFrameReject, ForceColumnWidth) {
  expect_reject("1\nLattice=\"4 0 0 0 5 0 0 0 6\" Properties=species:S:1:pos:R:3:force:R:2\nSi 0 0 0 1 2\n", "2",
                "column 'force' must be R:3");
}
TEST(TrainingFrameReject, BothForceColumns) {
  expect_reject("1\nLattice=\"4 0 0 0 5 0 0 0 6\" Properties=species:S:1:pos:R:3:force:R:3:forces:R:3\nSi 0 0 0 1 2 3 1 2 3\n",
                "2", "both force and forces");
}
TEST(TrainingFrameReject, FlatCell) {
  expect_reject("1\nLattice=\"4 0 0 8 0 0 0 0 6\" Properties=species:S:1:pos:R:3\nSi 0 0 0\n", "2", "zero volume");
}
TEST(TrainingFrameReject, NanForce) {
  expect_reject(kHead + "\nSi 0 0 0 0.1 nan 0.3\nSi 1 1 1 0 0 0\n", "3", "non-finite value 'nan' in column 'force'");
}

const std::string kWeightHead =
    "2\nLattice=\"4 0 0 0 5 0 0 0 6\" Properties=species:S:1:pos:R:3:force:R:3:force_weight:R:1\nSi 0 0 0 1 2 3 1\n";
TEST(TrainingFrameReject, NegativeForceWeight) {
  expect_reject(kWeightHead + "Si 1 1 1 0 0 0 -0.5\n", "4", "force_weight must be >= 0, got -0.5");
}
TEST(TrainingFrameReject, NanForceWeight) {
  expect_reject(kWeightHead + "Si 1 1 1 0 0 0 nan\n", "4", "non-finite value 'nan' in column 'force_weight'");
}
TEST(TrainingFrameReject, ForceWeightWithoutForces) {
  expect_reject("1\nLattice=\"4 0 0 0 5 0 0 0 6\" Properties=species:S:1:pos:R:3:force_weight:R:1\nSi 0 0 0 1\n", "2",
                "column 'force_weight' needs a force column");
}
TEST(TrainingFrameReject, ForceWeightWidth) {
  expect_reject("1\nLattice=\"4 0 0 0 5 0 0 0 6\" Properties=species:S:1:pos:R:3:force:R:3:force_weight:R:2\n"
                "Si 0 0 0 1 2 3 1 1\n",
                "2", "column 'force_weight' must be R:1");
}

}  // namespace
