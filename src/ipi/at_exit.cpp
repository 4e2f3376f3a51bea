// The exit clean-up of the i-PI server side (include/nep/ipi/at_exit.hpp).
#include "nep/ipi/at_exit.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace nep {
namespace ipi {

namespace {
struct Leftovers {
  std::vector<pid_t> groups;
  std::vector<std::string> paths;
};

Leftovers& leftovers() {
  static Leftovers l;
  return l;
}

void clean_up() {
  const Leftovers& l = leftovers();
  for (pid_t g : l.groups) ::kill(-g, SIGKILL);  // no client computing on after LAMMPS has gone
  for (auto p = l.paths.rbegin(); p != l.paths.rend(); ++p)
    if (::unlink(p->c_str()) != 0) ::rmdir(p->c_str());
}

Leftovers& registered() {
  Leftovers& l = leftovers();  // built first, so the handler runs before its destructor
  static const bool once = std::atexit(clean_up) == 0;
  (void) once;
  return l;
}

template <class T>
void forget(std::vector<T>& v, const T& x) {
  auto it = std::find(v.begin(), v.end(), x);
  if (it != v.end()) v.erase(it);
}
}  // namespace

void kill_group_at_exit(pid_t group) { registered().groups.push_back(group); }
void forget_group_at_exit(pid_t group) { forget(leftovers().groups, group); }
void remove_at_exit(const std::string& path) { registered().paths.push_back(path); }
void forget_at_exit(const std::string& path) { forget(leftovers().paths, path); }

}  // namespace ipi
}  // namespace nep
