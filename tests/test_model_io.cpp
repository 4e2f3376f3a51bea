// nep.txt reader/writer: every shipped model parses with the right sizes, our own round trip is
// exact and byte-stable, and every malformed input is rejected with file and line.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "nep/angular_basis.hpp"
#include "nep/error.hpp"
#include "nep/model.hpp"
#include "test_support.hpp"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n + (!s.empty() && s.back() != '\n');
}

const char* kModels[] = {"C_2022_NEP4", "PbTe_NEP3", "PbTe_NEP4", "Si_2022_NEP4_3body", "Si_2022_NEP4_4body",
                         "Si_2022_NEP4_5body", "Song-2024-UNEP-v1-AgAlAuCrCuMgMoNiPbPdPtTaTiVWZr",
                         "nep_BaTiO3", "nep_BaZrO3", "nep_CrCoNi", "nep_water"};

TEST(ModelIo, ReadsEveryShippedModelWithConsistentSizes) {
  for (const char* name : kModels) {
    const std::string path = nep_test::data_path(std::string("potentials/") + name + ".txt");
    const nep::Model m = nep::read_model(path);
    // header lines + parameters = line count of the file (no trailing/missing numbers)
    const int header = 6 + (m.zbl != nep::ZblMode::None ? 1 : 0);
    EXPECT_EQ(header + m.ann.size() + m.c.size() + m.q_scaler.size() + m.zbl_flexible.size(),
              static_cast<size_t>(count_lines(slurp(path))))
        << name;
  }
}

TEST(ModelIo, HeaderSemantics) {
  const auto pbte = nep::read_model(nep_test::data_path("potentials/PbTe_NEP4.txt"));
  EXPECT_EQ(pbte.version, 4);
  EXPECT_EQ(pbte.elements, (std::vector<std::string>{"Te", "Pb"}));
  EXPECT_EQ(pbte.dim(), 42);
  EXPECT_EQ(pbte.num_ann_parameters(), 44 * 30 * 2 + 1);
  const auto nep3 = nep::read_model(nep_test::data_path("potentials/PbTe_NEP3.txt"));
  EXPECT_EQ(nep3.version, 3);
  EXPECT_EQ(nep3.num_ann_parameters(), 961);
  const auto c = nep::read_model(nep_test::data_path("potentials/C_2022_NEP4.txt"));
  EXPECT_TRUE(c.flags[nep::kQ222]);
  EXPECT_TRUE(c.flags[nep::kQ1111]);
  EXPECT_EQ(c.dim(), 65);
  const auto si3 = nep::read_model(nep_test::data_path("potentials/Si_2022_NEP4_3body.txt"));
  EXPECT_FALSE(si3.flags[nep::kQ222]);
  const auto unep = nep::read_model(nep_test::data_path("potentials/Song-2024-UNEP-v1-AgAlAuCrCuMgMoNiPbPdPtTaTiVWZr.txt"));
  EXPECT_EQ(unep.zbl, nep::ZblMode::Universal);
  EXPECT_DOUBLE_EQ(unep.zbl_rc_outer, 2.0);
  const auto crconi = nep::read_model(nep_test::data_path("potentials/nep_CrCoNi.txt"));
  EXPECT_EQ(crconi.zbl, nep::ZblMode::Typewise);
  EXPECT_DOUBLE_EQ(crconi.zbl_typewise_factor, 0.7);
  EXPECT_EQ(crconi.atomic_numbers, (std::vector<int>{24, 27, 28}));
}

TEST(ModelIo, RoundTripIsExactAndByteStable) {
  for (const char* name : kModels) {
    const nep::Model m = nep::read_model(nep_test::data_path(std::string("potentials/") + name + ".txt"));
    const std::string once = nep::format_model(m);
    const nep::Model back = nep::parse_model(once, "roundtrip");
    EXPECT_EQ(back.ann, m.ann) << name;
    EXPECT_EQ(back.c, m.c) << name;
    EXPECT_EQ(back.q_scaler, m.q_scaler) << name;
    EXPECT_EQ(back.rc_radial, m.rc_radial) << name;
    EXPECT_EQ(back.flags, m.flags) << name;
    EXPECT_EQ(nep::format_model(back), once) << name;
  }
}

TEST(ModelIo, PerTypeCutoffAndFlexibleZblRoundTrip) {
  std::string text = nep::format_model(nep::read_model(nep_test::data_path("potentials/nep_BaTiO3.txt")));
  // per-type cutoff line (2T+3 tokens) and flexible ZBL ("zbl 0 0" + 10*T(T+1)/2 numbers)
  text.replace(text.find("zbl 0.75 1.5"), 12, "zbl 0 0");
  const size_t c0 = text.find("cutoff"), c1 = text.find('\n', c0);
  text.replace(c0, c1 - c0, "cutoff 6 4 5.5 4 6.5 3.5 100 50");
  for (int k = 0; k < 60; ++k) text += std::to_string(0.5 + 0.01 * k) + "\n";
  const nep::Model m = nep::parse_model(text, "flex");
  EXPECT_EQ(m.zbl, nep::ZblMode::Flexible);
  EXPECT_TRUE(m.per_type_cutoff);
  EXPECT_EQ(m.rc_radial, (std::vector<double>{6, 5.5, 6.5}));
  EXPECT_EQ(m.zbl_flexible.size(), 60u);
  EXPECT_EQ(nep::format_model(nep::parse_model(nep::format_model(m), "again")), nep::format_model(m));
}

TEST(ModelIo, AngularTablesMatchKnownNormalisations) {
  const auto& t = nep::angular_tables();
  const double pi = 3.14159265358979323846;
  EXPECT_NEAR(t.c3b[0], 3.0 / (4 * pi), 1e-15);  // L=1, m=0
  EXPECT_NEAR(t.c3b[1], 3.0 / (8 * pi), 1e-15);  // L=1, m=1
  EXPECT_NEAR(t.c3b[3], 5.0 / (16 * pi), 1e-15);  // L=2, m=0: P_20 = 3z^2-1 = 2 P_2
  // P_40 = 35 z^4 - 30 z^2 + 3, P_41 = 7 z^3 - 3 z
  EXPECT_EQ(t.poly[4][0][4], 35);
  EXPECT_EQ(t.poly[4][0][2], -30);
  EXPECT_EQ(t.poly[4][1][3], 7);
  EXPECT_EQ(t.poly[4][1][1], -3);
  EXPECT_EQ(t.poly[8][0][8], 6435);
}

// ---- rejections ---------------------------------------------------------------------------
std::string good_text() { return slurp(nep_test::data_path("potentials/PbTe_NEP4.txt")); }

void expect_reject(const std::string& text, const std::string& where, const std::string& what) {
  try {
    nep::parse_model(text, "model.txt");
    FAIL() << "accepted, expected error containing '" << what << "'";
  } catch (const nep::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("model.txt:" + where + (where.empty() ? "" : ":")), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

std::string replace_line(std::string text, int line, const std::string& with) {
  size_t pos = 0;
  for (int k = 1; k < line; ++k) pos = text.find('\n', pos) + 1;
  const size_t end = text.find('\n', pos);
  return text.replace(pos, end - pos, with);
}

TEST(ModelIoReject, TwoHiddenLayers) { expect_reject(replace_line(good_text(), 6, "ANN 30 10"), "6", "two-hidden-layer"); }
// the other model kinds are read (tests/test_model_kinds.cpp); a potential's numbers under their
// tags are too few where the kind has more parameters
TEST(ModelIoKinds, DipoleTagOnAPotentialsNumbers) {
  const nep::Model m = nep::parse_model(replace_line(good_text(), 1, "nep4_dipole 2 Te Pb"), "model.txt");
  EXPECT_EQ(m.kind, nep::ModelKind::Dipole);
}
TEST(ModelIoReject, PolarizabilityTooFewNumbers) {
  expect_reject(replace_line(good_text(), 1, "nep4_polarizability 2 Te Pb"), "", "file ends early");
}
TEST(ModelIoReject, ChargeTooFewNumbers) {
  expect_reject(replace_line(good_text(), 1, "nep4_charge1 2 Te Pb"), "", "file ends early");
}
TEST(ModelIoReject, NewerGpumdKinds) {
  expect_reject(replace_line(good_text(), 1, "nep4_charge_vdw 2 Te Pb"), "1", "charge model of a form this reader does not know");
  expect_reject(replace_line(good_text(), 1, "nep4_zbl_dipole 2 Te Pb"), "1", "dipole model of a form");
  expect_reject(replace_line(good_text(), 1, "nep4_vdw 2 Te Pb"), "1", "vdw model");
  expect_reject(replace_line(good_text(), 1, "nep3_charge1 2 Te Pb"), "1", "charge model of a form");
}
TEST(ModelIoReject, Temperature) {
  expect_reject(replace_line(good_text(), 1, "nep4_temperature 2 Te Pb"), "1", "temperature model");
}
TEST(ModelIoReject, UnknownTag) { expect_reject(replace_line(good_text(), 1, "nep2 2 Te Pb"), "1", "unknown model tag"); }
TEST(ModelIoReject, UnknownElement) { expect_reject(replace_line(good_text(), 1, "nep4 2 Te Xx"), "1", "unknown element 'Xx'"); }
TEST(ModelIoReject, TypeCountMismatch) { expect_reject(replace_line(good_text(), 1, "nep4 3 Te Pb"), "1", "lists 2 elements"); }
TEST(ModelIoReject, OldCutoffLine) { expect_reject(replace_line(good_text(), 2, "cutoff 8 4"), "2", "pre-2022"); }
TEST(ModelIoReject, NonFiniteNumber) { expect_reject(replace_line(good_text(), 10, "nan"), "10", "non-finite"); }
TEST(ModelIoReject, InfiniteNumber) { expect_reject(replace_line(good_text(), 3000, "-inf"), "3000", "non-finite"); }
TEST(ModelIoReject, GarbageNumber) { expect_reject(replace_line(good_text(), 12, "1.0e-3x"), "12", "expected a number"); }
TEST(ModelIoReject, TwoNumbersOnALine) { expect_reject(replace_line(good_text(), 12, "1.0 2.0"), "12", "one number per line"); }
TEST(ModelIoReject, TrailingData) { expect_reject(good_text() + "0.5\n", "3082", "trailing data"); }
TEST(ModelIoReject, Truncated) {
  std::string t = good_text();
  t.resize(t.size() / 2);
  t = t.substr(0, t.rfind('\n') + 1);
  const int lines = count_lines(t);
  expect_reject(t, std::to_string(lines), "file ends early");
}
TEST(ModelIoReject, TruncatedHeader) { expect_reject("nep4 2 Te Pb\ncutoff 8 4 100 50\n", "2", "file ends early: expected an 'n_max' line"); }
TEST(ModelIoReject, WrongKeyword) { expect_reject(replace_line(good_text(), 3, "nmax 6 6"), "3", "expected a 'n_max' line"); }
TEST(ModelIoReject, Directory) {
  const std::string dir = nep_test::data_path("potentials");
  try {
    nep::read_model(dir);
    FAIL();
  } catch (const nep::Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir + ": is a directory"), std::string::npos) << e.what();
  }
}
TEST(ModelIoReject, SizeLimitsAreTheKernelsOnes) {
  // the reader's limits and the kernels' array bounds come from one definition (model.hpp)
  expect_reject(replace_line(good_text(), 3, "n_max 20 4"), "3", "outside [0, 19]");
  expect_reject(replace_line(good_text(), 4, "basis_size 20 8"), "4", "outside [0, 19]");
  EXPECT_EQ(nep::limits::kMaxBasis, 20);
  EXPECT_EQ(nep::limits::kMaxDim, 20 + 20 * (nep::kMaxL + nep::kNumAngularFlags));
}
TEST(ModelIoReject, MissingFile) {
  try {
    nep::read_model("/nonexistent/nep.txt");
    FAIL();
  } catch (const nep::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/nep.txt: cannot open"), std::string::npos);
  }
}

}  // namespace
