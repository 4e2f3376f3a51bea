// Keyword tables: one table per command (pair_style nep, fix nep/train, nep.in), each keyword with
// its name, how many values it takes, how they read in the usage text and the docs, a one-line
// help and the function that parses and checks them. The usage texts are made from the tables and
// the docs' keyword lists are tested against them (tests/test_keyword_tables.cpp), so a keyword
// is defined in one place.
#pragma once
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace nep {

// The values given to one keyword, with checked conversions. Every failure throws nep::Error
// naming the keyword and the value, e.g. "'every': 'ten' is not an integer".
class KeywordValues {
 public:
  KeywordValues(std::string key, std::vector<std::string> values)
      : key_(std::move(key)), values_(std::move(values)) {}
  const std::string& key() const { return key_; }
  size_t size() const { return values_.size(); }
  const std::string& word(size_t k) const { return values_.at(k); }
  double real(size_t k, double lo, double hi) const;            // finite, in [lo, hi]
  long long integer(size_t k, long long lo, long long hi) const;  // in [lo, hi]
  bool yes_no(size_t k) const;                                  // "yes" or "no"
  // index of word k in `words`, else "'key' must be a, b or c, not 'x'"
  size_t choice(size_t k, std::initializer_list<const char*> words) const;

 private:
  std::string key_;
  std::vector<std::string> values_;
};

struct Keyword {
  std::string name;
  std::string values;   // the values as the usage and docs spell them, e.g. "LO HI [true]" ("" none)
  int min_values = 1;   // at least this many values follow the name
  int max_values = 1;   // at most this many (optional ones are taken while they are not keywords)
  std::string help;     // one line
  std::function<void(const KeywordValues&)> parse;
  bool required = false;
};

class KeywordTable {
 public:
  KeywordTable(std::string command, std::vector<Keyword> keywords);
  const std::string& command() const { return command_; }
  const std::vector<Keyword>& keywords() const { return keywords_; }
  const Keyword* find(const std::string& name) const;

  // "HEAD k1 V1 k2 V2 [k3 V3] ...": the required keywords first, then the optional ones in brackets
  std::string usage(const std::string& head) const;

  // An argument list (a LAMMPS command's keywords): each keyword takes min_values values, then
  // optional values up to max_values while the next argument is not a keyword of this table. A
  // keyword given again overrides the earlier one (LAMMPS's rule). Throws nep::Error for an
  // unknown keyword, missing values or a missing required keyword (messages without the command
  // name: the caller adds it). Returns the keywords given, in order.
  std::vector<std::string> parse_args(const std::vector<std::string>& args) const;

  // One keyword and its values (a line of nep.in): throws for an unknown keyword or a value count
  // outside [min_values, max_values]
  void parse_one(const std::string& key, std::vector<std::string> values) const;

 private:
  std::string command_;
  std::vector<Keyword> keywords_;
};

}  // namespace nep
