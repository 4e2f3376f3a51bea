// Start and supervise an i-PI client program (include/nep/ipi/client_process.hpp).
#include "nep/ipi/client_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "nep/error.hpp"
#include "nep/ipi/at_exit.hpp"

extern char** environ;

namespace nep {
namespace ipi {

namespace {
bool launcher_variable(const char* e) {
  for (const char* p : {"OMPI_", "PMIX_", "PMI_", "HYDRA_", "I_MPI_HYDRA_", "MPI_LOCALRANKID=", "MPI_LOCALNRANKS="})
    if (std::strncmp(e, p, std::strlen(p)) == 0) return true;
  return false;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}
}  // namespace

std::string expand_command(const std::string& command, const std::string& name, const std::string& host, int port) {
  const std::string address = name.empty() ? host + ":" + std::to_string(port) : name + ":UNIX";
  std::string s = replace_all(command, "{name}", name);
  s = replace_all(s, "{host}", host);
  s = replace_all(s, "{port}", std::to_string(port));
  return replace_all(s, "{address}", address);
}

ClientProcess::~ClientProcess() { stop(0.5); }

void ClientProcess::start(const std::string& command, const std::string& log) {
  stop(0.5);
  std::vector<char*> env;
  for (char** e = environ; e && *e; ++e)
    if (!launcher_variable(*e)) env.push_back(*e);
  env.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);    // none of LAMMPS's files (log, dumps, MPI's) go along
#endif
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  // the client starts with no blocked signals and default handlers (whatever LAMMPS or MPI set here)
  sigset_t none, reset;
  sigemptyset(&none);
  sigemptyset(&reset);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM}) sigaddset(&reset, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &reset);
  std::string cmd = command;
  char sh[] = "/bin/sh", dash_c[] = "-c";
  char* argv[] = {sh, dash_c, &cmd[0], nullptr};
  const int rc = posix_spawn(&pid_, "/bin/sh", &fa, &attr, argv, env.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    pid_ = -1;
    throw Error("i-PI: cannot start the client '" + command + "': " + std::strerror(rc));
  }
  ended_ = false;
  ++starts_;
  kill_group_at_exit(pid_);  // LAMMPS's main exits on an error without destroying this object
}

bool ClientProcess::running() {
  if (pid_ < 0 || ended_) return false;
  const pid_t r = ::waitpid(pid_, &status_, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) ended_ = true;    // (ECHILD: reaped by someone else)
  return !ended_;
}

std::string ClientProcess::exit_status() const {
  if (!ended_) return "";
  if (WIFEXITED(status_)) return "exit " + std::to_string(WEXITSTATUS(status_));
  if (WIFSIGNALED(status_)) return "signal " + std::to_string(WTERMSIG(status_));
  return "ended";
}

void ClientProcess::stop(double grace) {
  if (pid_ < 0) return;
  auto wait_until = [&](double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (running() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return !running();
  };
  if (!wait_until(grace)) {
    ::kill(-pid_, SIGTERM);
    if (!wait_until(3.0)) {
      ::kill(-pid_, SIGKILL);
      wait_until(10.0);
    }
  }
  ::kill(-pid_, SIGKILL);    // anything the shell left in the group
  forget_group_at_exit(pid_);
  pid_ = -1;
}

}  // namespace ipi
}  // namespace nep
