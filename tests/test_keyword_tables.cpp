// The keyword tables of fix nep/train, pair_style nep and nep.in: parsing, errors, the usage texts
// made from them, and the docs' keyword lists equal to the tables (docs/fix_nep_train.rst,
// docs/pair_nep.rst, docs/nep_train.md). NEP_PRINT_KEYWORDS=fix|pair|nep.in prints the lines the
// docs must hold.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include "fix_nep_train_settings.h"
#include "nep/error.hpp"
#include "nep/keyword_table.hpp"
#include "nep/train/config.hpp"
#include "pair_ipi_settings.h"
#include "pair_nep_settings.h"

#ifndef NEP_SOURCE_DIR
#error "NEP_SOURCE_DIR must name the source tree"
#endif

namespace {

using Args = std::vector<std::string>;

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string t; in >> t;) w.push_back(t);
  return w;
}

std::string fix_error(const std::string& args, int ntypes = 1) {
  try {
    nep_lmp::parse_fix_nep_train(words(args), ntypes);
  } catch (const nep::Error& e) {
    return e.what();
  }
  return "";
}

const std::string kBase = "every 10 buffer b.h5 model m.txt input nep.in";

// ---- docs: "*name* value(s) = VALUES = help" (rst) and "| `name VALUES` | help |" (markdown)
std::string rst_line(const nep::Keyword& k) {
  return "*" + k.name + "* " + (k.max_values > 1 ? "values" : "value") + " = " + k.values + " = " + k.help;
}

// a markdown table cell: '|' escaped
std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string md_row(const nep::Keyword& k) {
  return "| `" + md_cell(k.name + (k.values.empty() ? "" : " " + k.values)) + "` | " + md_cell(k.help) + " |";
}

std::string read_file(const std::string& rel) {
  std::ifstream in(std::string(NEP_SOURCE_DIR) + "/" + rel);
  EXPECT_TRUE(in.good()) << rel;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// the lines of `text` that match `re`, stripped of leading blanks
std::vector<std::string> lines_matching(const std::string& text, const std::regex& re) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    const size_t b = l.find_first_not_of(' ');
    if (b != std::string::npos && std::regex_search(l, re)) out.push_back(l.substr(b));
  }
  return out;
}

// section: the part of the doc from this heading line to the next heading of its level ("" = all)
void expect_docs(const nep::KeywordTable& t, const std::string& doc, const std::regex& re, bool md,
                 const char* print_key, const std::string& section = "") {
  std::vector<std::string> want;
  for (const auto& k : t.keywords()) want.push_back(md ? md_row(k) : rst_line(k));
  const char* print = std::getenv("NEP_PRINT_KEYWORDS");
  if (print && std::string(print) == print_key)
    for (const auto& l : want) std::cout << l << "\n";
  std::string text = read_file(doc);
  if (!section.empty()) {
    const size_t a = text.find("\n" + section + "\n");
    ASSERT_NE(a, std::string::npos) << doc << " has no section '" << section << "'";
    const std::string level = section.substr(0, section.find(' ') + 1);
    const size_t b = text.find("\n" + level, a + section.size() + 1);
    text = text.substr(a, b == std::string::npos ? std::string::npos : b - a);
  }
  const std::vector<std::string> got = lines_matching(text, re);
  ASSERT_EQ(got.size(), want.size()) << doc << " lists " << got.size() << " keywords, the table has " << want.size()
                                     << " (NEP_PRINT_KEYWORDS=" << print_key << " prints the table's lines)";
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(got[i], want[i]) << doc << ": keyword line " << i + 1 << " differs from the table";
}

TEST(KeywordTable, ArgumentListsAndValues) {
  double x = 0;
  std::vector<std::string> opt;
  nep::KeywordTable t("cmd", {{"a", "X", 1, 1, "", [&](const nep::KeywordValues& v) { x = v.real(0, 0, 10); }, true},
                              {"b", "W [V]", 1, 3, "", [&](const nep::KeywordValues& v) {
                                 opt.clear();
                                 for (size_t k = 0; k < v.size(); ++k) opt.push_back(v.word(k));
                               }}});
  EXPECT_EQ(t.parse_args({"b", "p", "q", "a", "2.5"}), (Args{"b", "a"}));
  EXPECT_EQ(x, 2.5);
  EXPECT_EQ(opt, (Args{"p", "q"}));    // optional values stop at the next keyword
  t.parse_args({"a", "1", "b", "a", "9"});    // a required value may be a keyword's name
  EXPECT_EQ(opt, (Args{"a", "9"}));
  EXPECT_EQ(x, 1.0);
  EXPECT_EQ(t.usage("cmd"), "cmd a X [b W [V]]");
  auto msg = [&](const Args& a) {
    try {
      t.parse_args(a);
    } catch (const nep::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(msg({"b", "p"}), "keyword 'a' is required");
  EXPECT_EQ(msg({"a"}), "'a' needs a value (a X)");
  EXPECT_EQ(msg({"a", "11"}), "'a': 11 is out of range [0, 10]");
  EXPECT_EQ(msg({"a", "1x"}), "'a': '1x' is not a number");
  EXPECT_EQ(msg({"a", "nan"}), "'a': 'nan' is not a number");
  EXPECT_EQ(msg({"c"}), "unknown keyword 'c'");
  EXPECT_THROW(t.parse_one("b", {}), nep::Error);
  EXPECT_THROW(nep::KeywordTable("bad", {{"a", "", 2, 1, "", [](const nep::KeywordValues&) {}}}), nep::Error);
}

TEST(FixNEPTrainKeywords, ParsesEveryKeyword) {
  const auto s = nep_lmp::parse_fix_nep_train(
      words(kBase + " seed 5 train_every 7 epochs 3 min_updates 2 capacity 50 heldout 0.2 threads 2 nice 4 "
                    "start s.txt elements Si C history none keep_rounds yes mode active teacher sw committee 3 "
                    "threshold 0.1 0.4 true gap 20 budget 9 audit 0.05 adopt_after 30 60 first_round 4 fmax 12 "
                    "deviation rms"),
      2);
  EXPECT_EQ(s.every, 10);
  EXPECT_EQ(s.buffer_path, "b.h5");
  EXPECT_EQ(s.seed, 5);
  EXPECT_EQ(s.train_every, 7);
  EXPECT_EQ(s.epochs, 3);
  EXPECT_EQ(s.min_updates, 2);
  EXPECT_EQ(s.capacity, 50);
  EXPECT_DOUBLE_EQ(s.heldout, 0.2);
  EXPECT_EQ(s.threads, 2);
  EXPECT_EQ(s.nice, 4);
  EXPECT_EQ(s.start_path, "s.txt");
  EXPECT_EQ(s.type_elements, (Args{"Si", "C"}));
  EXPECT_EQ(s.history_path, "");
  EXPECT_TRUE(s.keep_rounds);
  EXPECT_TRUE(s.active);
  EXPECT_TRUE(s.deploy);    // mode active deploys
  EXPECT_EQ(s.teacher, "sw");
  EXPECT_EQ(s.act.members, 3);
  EXPECT_DOUBLE_EQ(s.act.lo, 0.1);
  EXPECT_DOUBLE_EQ(s.act.hi, 0.4);
  EXPECT_TRUE(s.act.true_units);
  EXPECT_FALSE(s.act.grade);
  EXPECT_EQ(s.act.gap, 20);
  EXPECT_EQ(s.act.budget, 9);
  EXPECT_DOUBLE_EQ(s.act.audit, 0.05);
  EXPECT_EQ(s.act.adopt_after, 30);
  EXPECT_EQ(s.act.adopt_after_student, 60);
  EXPECT_EQ(s.act.first_round, 4);
  EXPECT_DOUBLE_EQ(s.act.fmax, 12.0);
  EXPECT_TRUE(s.act.rms);
}

TEST(FixNEPTrainKeywords, Defaults) {
  const auto s = nep_lmp::parse_fix_nep_train(words(kBase), 1);
  EXPECT_EQ(s.seed, 1);
  EXPECT_EQ(s.train_every, 10);
  EXPECT_EQ(s.capacity, 1000);
  EXPECT_DOUBLE_EQ(s.heldout, 0.1);
  EXPECT_LT(s.select_threshold, 0.0);
  EXPECT_FALSE(s.deploy);
  EXPECT_FALSE(s.active);
  EXPECT_EQ(s.history_path, "m.txt.history.jsonl");
  const auto a = nep_lmp::parse_fix_nep_train(words(kBase + " mode active teacher sw select every"), 1);
  EXPECT_EQ(a.act.members, 4);
  EXPECT_DOUBLE_EQ(a.act.lo, 0.05);    // threshold 0.05 0.25 (eV/Angstrom)
  EXPECT_DOUBLE_EQ(a.act.hi, 0.25);
  EXPECT_FALSE(a.act.grade);
  EXPECT_FALSE(a.act.true_units);
  const auto ev = nep_lmp::parse_fix_nep_train(words(kBase + " mode active teacher sw threshold 0.1 0.5"), 1);
  EXPECT_FALSE(ev.act.grade);    // two values: eV/Angstrom
  EXPECT_FALSE(ev.act.true_units);
  const auto gr = nep_lmp::parse_fix_nep_train(words(kBase + " mode active teacher sw threshold 1.5 4 grade"), 1);
  EXPECT_TRUE(gr.act.grade);
  EXPECT_DOUBLE_EQ(gr.act.lo, 1.5);
  EXPECT_DOUBLE_EQ(gr.act.hi, 4.0);
  EXPECT_EQ(a.act.budget, -1);
  EXPECT_EQ(a.act.adopt_after, 0);               // at once while the teacher drives
  EXPECT_EQ(a.act.adopt_after_student, 1000);    // 100 x every
  EXPECT_EQ(a.act.first_round, 1);
  // an explicit M = 0 stays 0 (at once), N alone leaves M its default
  const auto z = nep_lmp::parse_fix_nep_train(words(kBase + " mode active teacher sw adopt_after 0 0"), 1);
  EXPECT_EQ(z.act.adopt_after_student, 0);
  const auto n = nep_lmp::parse_fix_nep_train(words(kBase + " mode active teacher sw adopt_after 30"), 1);
  EXPECT_EQ(n.act.adopt_after, 30);
  EXPECT_EQ(n.act.adopt_after_student, 1000);
  EXPECT_DOUBLE_EQ(a.act.fmax, 20.0);
  EXPECT_FALSE(a.act.rms);    // deviation max
  EXPECT_EQ(s.carve_regions, 0);    // carve none
  const auto c = nep_lmp::parse_fix_nep_train(words(kBase + " carve 2.6 4"), 1);
  EXPECT_DOUBLE_EQ(c.carve_core, 2.6);
  EXPECT_EQ(c.carve_regions, 4);
  EXPECT_EQ(nep_lmp::parse_fix_nep_train(words(kBase + " carve 2.6 4 carve none"), 1).carve_regions, 0);
  EXPECT_LT(a.act.handback, 0.0);    // LO
  EXPECT_EQ(a.act.probe, 0);          // hand-backs on check steps only
  EXPECT_EQ(nep_lmp::parse_fix_nep_train(words(kBase + " mode active teacher sw probe 3"), 1).act.probe, 3);
  EXPECT_DOUBLE_EQ(nep_lmp::parse_fix_nep_train(words(kBase + " mode active teacher sw threshold 0.1 0.5 handback 0.5"), 1)
                       .act.handback, 0.5);
  EXPECT_DOUBLE_EQ(nep_lmp::parse_fix_nep_train(words(kBase + " select error 0.2"), 1).select_threshold, 0.2);
  EXPECT_EQ(nep_lmp::parse_fix_nep_train(words(kBase + " budget 5 budget none mode active teacher sw"), 1).act.budget,
            -1);    // the last one given
}

TEST(FixNEPTrainKeywords, ErrorsNameTheProblem) {
  const std::string act = kBase + " mode active teacher sw ";
  struct Case {
    std::string args, message;
    int ntypes;
  };
  const Case cases[] = {
      {"every 10 buffer b.h5 model m.txt", "keyword 'input' is required", 1},
      {kBase + " foo 1", "unknown keyword 'foo'", 1},
      {kBase + " select maybe", "select must be 'every' or 'error X', not 'maybe'", 1},
      {kBase + " select error -1", "select error X needs X >= 0 (eV/Angstrom)", 1},
      {kBase + " select error seed 3", "select error X needs X (eV/Angstrom)", 1},
      {kBase + " heldout 1.5", "heldout must be in [0, 1)", 1},
      {kBase + " min_updates -5", "min_updates must be >= 0", 1},
      {kBase + " deploy maybe", "deploy must be yes or no, not 'maybe'", 1},
      {kBase + " mode lazy", "mode must be passive or active, not 'lazy'", 1},
      {kBase + " epochs ten", "'epochs': 'ten' is not an integer", 1},
      {kBase + " train_every 0", "train_every must be positive", 1},
      {kBase + " capacity 0", "capacity must be at least 1", 1},
      {kBase + " threads 0", "threads must be at least 1", 1},
      {"every 0 buffer b.h5 model m.txt input nep.in", "'every N' with N > 0 is required", 1},
      {kBase + " elements Si", "'elements' needs 2 values (elements El1 ... ElN)", 2},
      {kBase + " mode active", "mode active needs 'teacher STYLE' (the teacher sub-style of pair_style hybrid/overlay)", 1},
      {kBase + " audit 0.1", "keyword 'audit' needs 'mode active'", 1},
      {kBase + " history teacher", "", 1},    // a value named like a keyword is a value
      {act + "select error 1", "mode active selects by the committee; drop 'select'", 1},
      {act + "threshold 0.6 0.15", "threshold LO HI needs 0 < LO < HI", 1},
      {act + "threshold 0.1 0.5 maybe", "threshold LO HI [grade|true]: the third value must be 'grade' or 'true', not 'maybe'", 1},
      {act + "committee 1", "committee needs at least 2 models", 1},
      {act + "handback 0", "handback H needs H > 0", 1},
      {act + "threshold 0.1 0.5 handback 0.6", "handback H needs H <= HI of threshold: above HI the teacher would take over again at once", 1},
      {kBase + " handback 0.2", "keyword 'handback' needs 'mode active'", 1},
      {act + "probe -1", "probe must be >= 0", 1},
      {kBase + " probe 1", "keyword 'probe' needs 'mode active'", 1},
      {act + "gap -1", "gap must be >= 0", 1},
      {act + "budget -2", "budget must be >= 0 or none", 1},
      {act + "audit 2", "audit P needs 0 <= P <= 1", 1},
      {act + "fmax 0", "fmax must be positive (eV/Angstrom)", 1},
      {act + "deviation mean", "deviation must be max or rms, not 'mean'", 1},
      {kBase + " deviation rms", "keyword 'deviation' needs 'mode active'", 1},
      {act + "adopt_after 10 -5", "adopt_after N M needs M >= 0", 1},
  };
  for (const auto& c : cases) EXPECT_EQ(fix_error(c.args, c.ntypes), c.message) << c.args;
  try {    // an empty file name (a quoted "" in the deck)
    nep_lmp::parse_fix_nep_train({"every", "10", "buffer", "", "model", "m.txt", "input", "nep.in"}, 1);
    ADD_FAILURE() << "an empty buffer name was taken";
  } catch (const nep::Error& e) {
    EXPECT_EQ(std::string(e.what()), "'buffer' needs a file name, not an empty string");
  }
}

TEST(FixNEPTrainKeywords, UsageAndDocs) {
  const std::string u = nep_lmp::fix_nep_train_usage(2);
  EXPECT_EQ(u.rfind("fix ID all nep/train every N buffer file.h5 model file.txt input nep.in [seed S]", 0), 0u) << u;
  EXPECT_NE(u.find("[threshold LO HI [grade|true]]"), std::string::npos);
  nep_lmp::FixNEPTrainSettings s;
  expect_docs(nep_lmp::fix_nep_train_keywords(s, 2), "docs/fix_nep_train.rst", std::regex(R"(^\s+\*\w+\* values? = )"),
              false, "fix");
}

TEST(PairNEPKeywords, ParsesAndDocs) {
  auto p = nep_lmp::parse_pair_nep({"precision", "float", "cutoff", "5.5"});
  EXPECT_TRUE(p.single_precision);
  EXPECT_DOUBLE_EQ(p.cutoff, 5.5);
  EXPECT_TRUE(p.legacy_model_file.empty());
  p = nep_lmp::parse_pair_nep({"PbTe_NEP4.txt", "precision", "double"});
  EXPECT_EQ(p.legacy_model_file, "PbTe_NEP4.txt");
  EXPECT_FALSE(p.single_precision);
  auto msg = [](const Args& a) {
    try {
      nep_lmp::parse_pair_nep(a);
    } catch (const nep::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(msg({"precision", "half"}), "unknown precision 'half' (double or float)");
  EXPECT_EQ(msg({"cutoff", "-1"}), "cutoff must be positive");
  EXPECT_EQ(msg({"cutoff"}), "'cutoff' needs a value (cutoff R)");
  EXPECT_EQ(msg({"a.txt", "b.txt"}), "unknown keyword 'b.txt'");
  EXPECT_EQ(nep_lmp::pair_nep_usage("nep"), "pair_style nep [file] [precision double|float] [cutoff R]");
  nep_lmp::PairNEPSettings s;
  expect_docs(nep_lmp::pair_nep_keywords(s), "docs/pair_nep.rst", std::regex(R"(^\s+\*\w+\* values? = )"), false,
              "pair");
}

TEST(PairIPIKeywords, ParsesAndDocs) {
  auto p = nep_lmp::parse_pair_ipi({"inet", "31415", "host", "10.1.2.3", "launch", "pw.x --ipi {address}", "retries", "0"});
  EXPECT_TRUE(p.inet);
  EXPECT_EQ(p.port, 31415);
  EXPECT_EQ(p.host, "10.1.2.3");
  EXPECT_EQ(p.launch, "pw.x --ipi {address}");
  EXPECT_EQ(p.retries, 0);
  p = nep_lmp::parse_pair_ipi({});
  EXPECT_FALSE(p.inet);
  EXPECT_EQ(p.unix_name, "");    // auto: a private folder
  EXPECT_EQ(p.host, "127.0.0.1");
  EXPECT_DOUBLE_EQ(p.timeout, 3600.0);
  auto msg = [](const Args& a) {
    try {
      nep_lmp::parse_pair_ipi(a);
    } catch (const nep::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(msg({"inet", "70000"}), "'inet': 70000 is out of range [0, 65535]");
  EXPECT_EQ(msg({"unix", "../x"}), "unix NAME must not contain '..'");
  EXPECT_EQ(msg({"wait", "0"}), "wait must be positive (seconds)");
  nep_lmp::PairIPISettings s;
  expect_docs(nep_lmp::pair_ipi_keywords(s), "docs/pair_ipi.rst", std::regex(R"(^\s+\*\w+\* values? = )"), false, "ipi");
}

TEST(TrainConfigKeywords, Docs) {
  nep::TrainConfig c;
  std::vector<double> cut;
  expect_docs(nep::train_config_keywords(c, cut), "docs/nep_train.md", std::regex(R"(^\| `\w+[^`]*` \| )"), true,
              "nep.in", "## nep.in");
}

}  // namespace
