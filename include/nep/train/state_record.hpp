// A named, versioned record of keyed values: how restartable state (fix nep/train, its active
// learning controller) is written, so a reader finds each value by its name, not its position,
// and a newer writer may add keys an older reader's defaults cover.
//
// Text form, one entry per line:
//   nep-state NAME VERSION
//   KEY i INTEGER | KEY r REAL | KEY R N REAL... | KEY s BYTES\n<BYTES raw bytes>
// Reals are written with 17 significant digits, so they read back bit for bit.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nep {

class StateRecord {
 public:
  StateRecord(std::string name, int version) : name_(std::move(name)), version_(version) {}
  const std::string& name() const { return name_; }
  int version() const { return version_; }

  void set_integer(const std::string& key, int64_t v);
  void set_real(const std::string& key, double v);
  void set_reals(const std::string& key, const std::vector<double>& v);
  void set_text(const std::string& key, const std::string& v);

  bool has(const std::string& key) const { return values_.count(key) > 0; }
  // The value of `key` (the default when absent); throws nep::Error when it holds another kind
  int64_t integer(const std::string& key, int64_t fallback) const;
  double real(const std::string& key, double fallback) const;
  std::vector<double> reals(const std::string& key) const;      // empty when absent
  std::string text(const std::string& key, const std::string& fallback = "") const;

  std::string str() const;
  // Throws nep::Error "CONTEXT: ..." when the text is not a record, its name is not `name`, its
  // version is above max_version, or an entry is malformed.
  static StateRecord parse(const std::string& text, const std::string& name, int max_version,
                           const std::string& context);

 private:
  struct Value {
    char kind = 'i';    // i, r, R, s
    std::string data;   // the encoded value (s: the raw bytes)
  };
  const Value* get(const std::string& key, char kind) const;
  double parse_real(const std::string& key, const std::string& s) const;
  std::string name_;
  int version_;
  std::map<std::string, Value> values_;
};

}  // namespace nep
