// The server side of the i-PI socket protocol (Ceriotti, More, Manolopoulos, Comput. Phys. Commun.
// 185, 1019 (2014)), spoken by Quantum ESPRESSO (`pw.x --ipi`), CP2K, DFTB+, FHI-aims and ASE's
// SocketClient: this process sends positions and the cell, the client (an electronic-structure code)
// answers with energy, forces and virial. Free of LAMMPS; pair_style ipi is its adapter.
//
// Wire format (native byte order, 12-byte space-padded ASCII headers):
//   server: STATUS          client: READY | NEEDINIT | HAVEDATA
//   server: INIT  int32 bead, int32 n, n bytes       (we send n = 1, one NUL: QE reads >= 1 byte)
//   server: POSDATA  9 f64 cell H (lattice vectors as columns, row-major), 9 f64 H^-1, int32 N,
//                    3N f64 positions                                      (Bohr)
//   server: GETFORCE        client: FORCEREADY f64 energy, int32 N, 3N f64 forces, 9 f64 virial,
//                                   int32 n, n bytes of extra          (Hartree, Hartree/Bohr)
//   server: EXIT
// The virial is W = -dE/d(strain) (V sigma with QE's pressure-like sigma): LAMMPS's sign.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "nep/error.hpp"

namespace nep {
namespace ipi {

// CODATA 2018, the units the protocol carries
constexpr double kBohrInAngstrom = 0.529177210903;
constexpr double kHartreeInEV = 27.211386245988;

// What can go wrong with a call; the caller decides between retrying, skipping and stopping
enum class Fault { None, Timeout, Disconnected, Protocol, AtomCount, NonFinite };
const char* fault_name(Fault f);   // "timeout", "disconnected", ...

class Error : public nep::Error {
 public:
  Error(Fault f, const std::string& what) : nep::Error(what), fault_(f) {}
  Fault fault() const { return fault_; }

 private:
  Fault fault_;
};

// One configuration in LAMMPS's metal units: the cell's lattice vectors a, b, c (Angstrom; row k
// of `cell` is vector k) and the positions (3 per atom, Angstrom)
struct Frame {
  std::array<double, 9> cell{};
  std::vector<double> positions;
};

// The client's answer in metal units: energy (eV), forces (eV/Angstrom, 3 per atom), virial W
// (eV, row-major 3x3) and the extra string some clients send
struct Result {
  double energy = 0.0;
  std::vector<double> forces;
  std::array<double, 9> virial{};
  std::string extra;
};

struct ServerOptions {
  // UNIX socket: `path` (the socket file; empty: inet). i-PI clients take a name NAME and connect
  // to /tmp/ipi_NAME, so a path there is reachable as NAME (see Server::client_name).
  std::string path;
  std::string host = "127.0.0.1";   // inet: the address to bind (never all interfaces unless asked)
  int port = 0;                     // inet: 0 picks a free port
};

class Server {
 public:
  explicit Server(const ServerOptions& o);   // binds and listens; throws nep::ipi::Error
  ~Server();                                 // EXIT to a connected client, close, remove the socket file
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  bool is_unix() const { return !o_.path.empty(); }
  int port() const { return port_; }
  const std::string& path() const { return o_.path; }
  // the name an i-PI client is given for a UNIX socket under /tmp/ipi_ (empty otherwise)
  std::string client_name() const;

  bool connected() const { return conn_ >= 0; }
  // Waits up to `seconds` for a client to connect (true when one did)
  bool accept(double seconds);
  // One call: the client's energy, forces and virial for `f`. Throws nep::ipi::Error naming the
  // fault (the connection is dropped on any fault: the client must connect again).
  Result compute(const Frame& f, double seconds);
  void disconnect();     // drop the client without EXIT
  void send_exit();      // tell the client to stop, then drop it

 private:
  void send_header(const char* h, double deadline);
  std::string recv_header(double deadline);
  void send_bytes(const void* p, size_t n, double deadline);
  void recv_bytes(void* p, size_t n, double deadline);
  [[noreturn]] void fail(Fault f, const std::string& what);

  ServerOptions o_;
  int listen_ = -1, conn_ = -1, port_ = 0;
};

}  // namespace ipi
}  // namespace nep
