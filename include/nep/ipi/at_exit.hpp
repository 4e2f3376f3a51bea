// What this process leaves behind if it exits without destroying its objects (LAMMPS's main exits
// on an error that way): the process groups of launched i-PI clients, killed, and socket files and
// private folders under /tmp, removed (in the reverse order of registration: a socket before its
// folder). One handler does both, clients first; each owner forgets what it cleaned itself. A
// process killed outright leaves them; a later server with the same `unix NAME` removes a dead
// socket file.
#pragma once
#include <sys/types.h>

#include <string>

namespace nep {
namespace ipi {

void kill_group_at_exit(pid_t group);
void forget_group_at_exit(pid_t group);
void remove_at_exit(const std::string& path);
void forget_at_exit(const std::string& path);

}  // namespace ipi
}  // namespace nep
