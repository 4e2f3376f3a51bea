// nep::StateRecord, the named-field text record of restart states (fix nep/train, the active
// controller): texts, reals and integers round-trip bit for bit; a truncated record is an error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nep/error.hpp"
#include "nep/train/state_record.hpp"

namespace {

TEST(StateRecord, TextsAndRealsRoundTripExactly) {
  nep::StateRecord r("x", 2);
  const std::string model = "nep4 2 Te Pb\ncutoff 8 4\n\nline with trailing newline\n";
  r.set_text("model", model);
  r.set_text("empty", "");
  r.set_reals("v", {0.1, -1e-300, 1.0 / 3.0, 6.02214076e23});
  r.set_real("third", 1.0 / 3.0);
  r.set_integer("big", -9007199254740993LL);
  const nep::StateRecord q = nep::StateRecord::parse(r.str(), "x", 2, "test");
  EXPECT_EQ(q.text("model"), model);
  EXPECT_EQ(q.text("empty", "fallback"), "");
  EXPECT_EQ(q.reals("v"), (std::vector<double>{0.1, -1e-300, 1.0 / 3.0, 6.02214076e23}));
  EXPECT_EQ(q.real("third", 0.0), 1.0 / 3.0);
  EXPECT_EQ(q.integer("big", 0), -9007199254740993LL);
  EXPECT_EQ(q.str(), r.str());
  const std::string s = r.str();
  EXPECT_THROW(nep::StateRecord::parse(s.substr(0, s.size() - 20), "x", 2, "test"), nep::Error);
}

}  // namespace
