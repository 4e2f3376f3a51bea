// A client program of pair_style ipi started and supervised by this process: `/bin/sh -c COMMAND`
// in a process group of its own (a client that is an mpirun of pw.x stops as a whole), output to a
// log file, without the MPI launcher variables of this process (OMPI_*, PMIX_*, PMI_*, HYDRA_*,
// I_MPI_HYDRA_*: a pw.x started from inside an mpirun would otherwise try to join that MPI job).
#pragma once
#include <sys/types.h>

#include <string>

namespace nep {
namespace ipi {

// COMMAND with {name} (the UNIX socket name under /tmp/ipi_), {host}, {port} and {address} (the
// address as pw.x --ipi takes it: NAME:UNIX or HOST:PORT) replaced
std::string expand_command(const std::string& command, const std::string& name, const std::string& host, int port);

class ClientProcess {
 public:
  ClientProcess() = default;
  ~ClientProcess();    // stop()
  ClientProcess(const ClientProcess&) = delete;
  ClientProcess& operator=(const ClientProcess&) = delete;

  // Starts COMMAND (output appended to `log`); throws nep::Error when it cannot
  void start(const std::string& command, const std::string& log);
  bool running();                 // started and not exited (reaps it when it has)
  std::string exit_status() const;    // how it ended ("exit 1", "signal 9"), empty while running
  // Stops it: waits up to `grace` seconds for it to end by itself (after an EXIT message), then
  // SIGTERM to its process group, then SIGKILL
  void stop(double grace = 5.0);
  int starts() const { return starts_; }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool ended_ = false;
  int starts_ = 0;
};

}  // namespace ipi
}  // namespace nep
