#include "nep/fault.hpp"

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <sstream>
#include <string>

namespace nep {
namespace {

struct Faults {
  std::mutex mutex;
  std::map<std::string, std::set<long>> fail_at;  // site -> call numbers that fail
  std::map<std::string, long> calls;
  bool any = false;

  Faults() {
    const char* env = std::getenv("NEP_FAULT");
    if (!env || !*env) return;
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ',')) {
      // "site:n" when what follows the last ':' is a number (site names contain ':' themselves)
      const auto colon = item.rfind(':');
      long n = 1;
      std::string site = item;
      if (colon != std::string::npos && colon + 1 < item.size() &&
          item.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
        n = std::strtol(item.c_str() + colon + 1, nullptr, 10);
        site = item.substr(0, colon);
      }
      fail_at[site].insert(n);
    }
    any = !fail_at.empty();
  }
};

Faults& faults() {
  static Faults f;
  return f;
}

}  // namespace

void maybe_fail(const char* site) {
  Faults& f = faults();
  if (!f.any) return;
  std::lock_guard<std::mutex> lock(f.mutex);
  auto it = f.fail_at.find(site);
  if (it == f.fail_at.end()) return;
  if (it->second.count(++f.calls[site])) throw std::bad_alloc();
}

}  // namespace nep
