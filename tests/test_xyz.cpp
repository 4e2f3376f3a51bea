// Extended XYZ reader: GPUMD conventions and strict errors with file and line.
#include <gtest/gtest.h>

#include "nep/error.hpp"
#include "nep/xyz.hpp"
#include "test_support.hpp"

namespace {

TEST(Xyz, ReadsTrainingSetsWithVaryingKeys) {
  // capitalised keys, tab separators, per-frame Properties
  const auto a = nep::read_xyz(nep_test::data_path("train/mixed_WH-Cu-C_gpumd-outcar2xyz-multiframe-example_7frames_EFV_train.xyz"));
  EXPECT_EQ(a.size(), 7u);
  for (const auto& f : a) {
    EXPECT_TRUE(f.has_lattice);
    EXPECT_TRUE(f.info.count("energy"));
    EXPECT_EQ(f.positions().size(), 3u * f.natoms);
  }
  const auto b = nep::read_xyz(nep_test::data_path("train/C_graphene-graphite_NEP_CPU-test_dftd3_13frames_EFV_train.xyz"));
  EXPECT_EQ(b.size(), 13u);
  const auto c = nep::read_xyz(nep_test::data_path("train/mixed_Cu-WH-H2O-C_gpumd-outcar2xyz-example_4frames_EFV-bec_train.xyz"));
  EXPECT_EQ(c.size(), 4u);
}

void expect_reject(const std::string& text, const std::string& where, const std::string& what) {
  try {
    nep::parse_xyz(text, "in.xyz");
    FAIL() << "accepted";
  } catch (const nep::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("in.xyz:" + where + ":"), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

const std::string kHead = "2\nLattice=\"5 0 0 0 5 0 0 0 5\" Properties=species:S:1:pos:R:3\n";

TEST(XyzReject, BadAtomCount) { expect_reject("x\n", "1", "number of atoms"); }
// found by tests/fuzz/fuzz_xyz: an atom count of 10^8 in a short file used to reserve 3 GB first
TEST(XyzReject, HugeAtomCountInAShortFile) {
  expect_reject("100000000\nLattice=\"5 0 0 0 5 0 0 0 5\" Properties=species:S:1:pos:R:3\nSi 0 0 0\n", "3",
                "file ends inside a frame");
}
TEST(XyzReject, Truncated) { expect_reject(kHead + "Si 0 0 0\n", "3", "file ends inside a frame"); }
TEST(XyzReject, WrongColumnCount) { expect_reject(kHead + "Si 0 0 0\nSi 1 1\n", "4", "atom line has 3 columns"); }
TEST(XyzReject, BadNumber) { expect_reject(kHead + "Si 0 0 0\nSi 1 1 x\n", "4", "bad number 'x'"); }
TEST(XyzReject, NanPosition) { expect_reject(kHead + "Si 0 0 0\nSi 1 nan 1\n", "4", "non-finite"); }
TEST(XyzReject, BadLattice) {
  expect_reject("1\nLattice=\"5 0 0 0 5 0 0 0\" Properties=species:S:1:pos:R:3\nSi 0 0 0\n", "2", "Lattice needs 9");
}
TEST(XyzReject, NoProperties) { expect_reject("1\nLattice=\"5 0 0 0 5 0 0 0 5\"\nSi 0 0 0\n", "2", "no Properties"); }
TEST(XyzReject, UnterminatedQuote) { expect_reject("1\nLattice=\"5 0 0 Properties=species:S:1\nSi\n", "2", "unterminated quote"); }

}  // namespace
