// Named, versioned keyed records for restart state (include/nep/train/state_record.hpp).
#include "nep/train/state_record.hpp"

#include <cstdio>
#include <sstream>

#include "nep/error.hpp"

namespace nep {

namespace {
std::string real_text(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

bool valid_key(const std::string& k) {
  if (k.empty()) return false;
  for (char c : k)
    if (c == ' ' || c == '\n' || c == '\t') return false;
  return true;
}
}  // namespace

void StateRecord::set_integer(const std::string& key, int64_t v) { values_[key] = {'i', std::to_string(v)}; }
void StateRecord::set_real(const std::string& key, double v) { values_[key] = {'r', real_text(v)}; }

void StateRecord::set_reals(const std::string& key, const std::vector<double>& v) {
  std::string s = std::to_string(v.size());
  for (double x : v) s += " " + real_text(x);
  values_[key] = {'R', s};
}

void StateRecord::set_text(const std::string& key, const std::string& v) { values_[key] = {'s', v}; }

double StateRecord::parse_real(const std::string& key, const std::string& s) const {
  size_t used = 0;
  double x = 0.0;
  try {
    x = std::stod(s, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != s.size()) throw Error(name_ + " state: '" + key + "' holds '" + s + "', not a number");
  return x;
}

const StateRecord::Value* StateRecord::get(const std::string& key, char kind) const {
  const auto it = values_.find(key);
  if (it == values_.end()) return nullptr;
  if (it->second.kind != kind)
    throw Error(name_ + " state: '" + key + "' holds kind '" + std::string(1, it->second.kind) + "', not '" +
                std::string(1, kind) + "'");
  return &it->second;
}

int64_t StateRecord::integer(const std::string& key, int64_t fallback) const {
  const Value* v = get(key, 'i');
  if (!v) return fallback;
  size_t used = 0;
  int64_t x = 0;
  try {
    x = std::stoll(v->data, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != v->data.size()) throw Error(name_ + " state: '" + key + "' is not an integer");
  return x;
}

double StateRecord::real(const std::string& key, double fallback) const {
  const Value* v = get(key, 'r');
  return v ? parse_real(key, v->data) : fallback;
}

std::vector<double> StateRecord::reals(const std::string& key) const {
  const Value* v = get(key, 'R');
  std::vector<double> out;
  if (!v) return out;
  std::istringstream in(v->data);
  size_t n = 0;
  in >> n;
  out.resize(n);
  for (auto& x : out) {
    std::string t;
    in >> t;
    x = parse_real(key, t);
  }
  return out;
}

std::string StateRecord::text(const std::string& key, const std::string& fallback) const {
  const Value* v = get(key, 's');
  return v ? v->data : fallback;
}

std::string StateRecord::str() const {
  std::string out = "nep-state " + name_ + " " + std::to_string(version_) + "\n";
  for (const auto& [key, v] : values_) {
    if (v.kind == 's') out += key + " s " + std::to_string(v.data.size()) + "\n" + v.data + "\n";
    else out += key + " " + v.kind + " " + v.data + "\n";
  }
  return out;
}

StateRecord StateRecord::parse(const std::string& text, const std::string& name, int max_version,
                               const std::string& context) {
  auto fail = [&](const std::string& msg) { return Error(context + ": " + msg); };
  size_t pos = 0;
  auto line = [&]() {
    const size_t end = text.find('\n', pos);
    if (end == std::string::npos) throw fail("truncated " + name + " state");
    std::string l = text.substr(pos, end - pos);
    pos = end + 1;
    return l;
  };
  std::istringstream head(line());
  std::string magic, got_name;
  int version = 0;
  if (!(head >> magic >> got_name >> version) || magic != "nep-state") throw fail("not a lammps-nep state record");
  if (got_name != name) throw fail("holds '" + got_name + "' state, not '" + name + "'");
  if (version < 1 || version > max_version)
    throw fail(name + " state version " + std::to_string(version) + " is not supported (this build reads 1 to " +
               std::to_string(max_version) + ")");
  StateRecord r(name, version);
  while (pos < text.size()) {
    const std::string l = line();
    const size_t a = l.find(' ');
    if (a == std::string::npos || a + 2 > l.size() || (a + 2 < l.size() && l[a + 2] != ' '))
      throw fail("malformed entry '" + l.substr(0, 60) + "' in " + name + " state");
    const std::string key = l.substr(0, a), rest = a + 3 <= l.size() ? l.substr(a + 3) : "";
    const char kind = l[a + 1];
    if (!valid_key(key)) throw fail("malformed key in " + name + " state");
    if (kind == 's') {
      size_t n = 0, used = 0;
      try {
        n = std::stoull(rest, &used);
      } catch (...) {
        used = 0;
      }
      if (used == 0 || used != rest.size()) throw fail("malformed length of text '" + key + "' in " + name + " state");
      if (n > text.size() || pos + n + 1 > text.size() || text[pos + n] != '\n') throw fail("truncated text '" + key + "' in " + name + " state");
      r.values_[key] = {'s', text.substr(pos, n)};
      pos += n + 1;
    } else if (kind == 'i' || kind == 'r' || kind == 'R') {
      r.values_[key] = {kind, rest};
    } else {
      throw fail("entry '" + key + "' of unknown kind in " + name + " state");
    }
  }
  return r;
}

}  // namespace nep
