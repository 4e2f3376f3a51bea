// Keyword tables (include/nep/keyword_table.hpp).
#include "nep/keyword_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "nep/error.hpp"

namespace nep {

namespace {
std::string fmt_real(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

std::string quoted_list(std::initializer_list<const char*> words) {
  std::string s;
  size_t k = 0;
  for (const char* w : words) {
    s += (k == 0 ? "" : k + 1 == words.size() ? " or " : ", ") + std::string(w);
    ++k;
  }
  return s;
}
}  // namespace

double KeywordValues::real(size_t k, double lo, double hi) const {
  const std::string& s = word(k);
  size_t pos = 0;
  double v = 0.0;
  try {
    v = std::stod(s, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos == 0 || pos != s.size() || !std::isfinite(v)) throw Error("'" + key_ + "': '" + s + "' is not a number");
  if (v < lo || v > hi)
    throw Error("'" + key_ + "': " + s + " is out of range [" + fmt_real(lo) + ", " + fmt_real(hi) + "]");
  return v;
}

long long KeywordValues::integer(size_t k, long long lo, long long hi) const {
  const std::string& s = word(k);
  size_t pos = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos == 0 || pos != s.size()) throw Error("'" + key_ + "': '" + s + "' is not an integer");
  if (v < lo || v > hi)
    throw Error("'" + key_ + "': " + s + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

bool KeywordValues::yes_no(size_t k) const { return choice(k, {"yes", "no"}) == 0; }

size_t KeywordValues::choice(size_t k, std::initializer_list<const char*> words) const {
  size_t i = 0;
  for (const char* w : words) {
    if (word(k) == w) return i;
    ++i;
  }
  throw Error(key_ + " must be " + quoted_list(words) + ", not '" + word(k) + "'");
}

KeywordTable::KeywordTable(std::string command, std::vector<Keyword> keywords)
    : command_(std::move(command)), keywords_(std::move(keywords)) {
  std::set<std::string> names;
  for (const auto& k : keywords_)
    if (!names.insert(k.name).second || k.min_values < 0 || k.max_values < k.min_values || !k.parse)
      throw Error(command_ + ": keyword table entry '" + k.name + "' is malformed");
}

const Keyword* KeywordTable::find(const std::string& name) const {
  for (const auto& k : keywords_)
    if (k.name == name) return &k;
  return nullptr;
}

std::string KeywordTable::usage(const std::string& head) const {
  std::string req, opt;
  for (const auto& k : keywords_) {
    const std::string item = k.name + (k.values.empty() ? "" : " " + k.values);
    if (k.required) req += " " + item;
    else opt += " [" + item + "]";
  }
  return head + req + opt;
}

std::vector<std::string> KeywordTable::parse_args(const std::vector<std::string>& args) const {
  std::vector<std::string> given;
  size_t i = 0;
  while (i < args.size()) {
    const Keyword* k = find(args[i]);
    if (!k) throw Error("unknown keyword '" + args[i] + "'");
    size_t n = 0;
    while (n < static_cast<size_t>(k->min_values) && i + 1 + n < args.size()) ++n;
    if (n < static_cast<size_t>(k->min_values)) {
      const int m = k->min_values;
      throw Error("'" + k->name + "' needs " + (m == 1 ? std::string("a value") : std::to_string(m) + " values") +
                  " (" + k->name + " " + k->values + ")");
    }
    while (n < static_cast<size_t>(k->max_values) && i + 1 + n < args.size() && !find(args[i + 1 + n])) ++n;
    k->parse(KeywordValues(k->name, std::vector<std::string>(args.begin() + i + 1, args.begin() + i + 1 + n)));
    given.push_back(k->name);
    i += 1 + n;
  }
  for (const auto& k : keywords_)
    if (k.required && std::find(given.begin(), given.end(), k.name) == given.end())
      throw Error("keyword '" + k.name + "' is required");
  return given;
}

void KeywordTable::parse_one(const std::string& key, std::vector<std::string> values) const {
  const Keyword* k = find(key);
  if (!k) throw Error("unknown keyword '" + key + "'");
  const size_t n = values.size(), lo = k->min_values, hi = k->max_values;
  if (n < lo || n > hi) {
    const std::string want = lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
    throw Error("'" + key + "' takes " + want + " value(s), got " + std::to_string(n));
  }
  k->parse(KeywordValues(key, std::move(values)));
}

}  // namespace nep
