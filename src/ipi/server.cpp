// i-PI protocol server (include/nep/ipi/server.hpp): sockets with deadlines (poll), no signals
// (MSG_NOSIGNAL: a client that died raises no SIGPIPE in the host process).
#include "nep/ipi/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "nep/ipi/at_exit.hpp"

namespace nep {
namespace ipi {

namespace {
constexpr size_t kHeader = 12;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// poll one descriptor for `events` until the deadline; false on timeout
bool wait_for(int fd, short events, double deadline) {
  for (;;) {
    const double left = deadline - now();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int ms = left > 2e6 ? 2000000000 : static_cast<int>(std::ceil(left * 1e3));
    const int r = ::poll(&p, 1, ms);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

// 3x3 inverse (row-major)
std::array<double, 9> inverse(const std::array<double, 9>& m) {
  const double a = m[0], b = m[1], c = m[2], d = m[3], e = m[4], f = m[5], g = m[6], h = m[7], k = m[8];
  const double det = a * (e * k - f * h) - b * (d * k - f * g) + c * (d * h - e * g);
  if (!(std::fabs(det) > 0.0)) throw Error(Fault::Protocol, "i-PI: the cell is singular");
  const double s = 1.0 / det;
  return {(e * k - f * h) * s, (c * h - b * k) * s, (b * f - c * e) * s, (f * g - d * k) * s, (a * k - c * g) * s,
          (c * d - a * f) * s, (d * h - e * g) * s, (b * g - a * h) * s, (a * e - b * d) * s};
}
// A socket file left at `path` by a run that ended is removed; a live server there (another run
// with the same `unix NAME`) or a file that is not a socket is an error, never deleted
void remove_stale_socket(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;
  if (!S_ISSOCK(st.st_mode))
    throw Error(Fault::Protocol, "i-PI: " + path + " exists and is not a socket (not removed; choose another unix NAME)");
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strcpy(a.sun_path, path.c_str());
  const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool live = probe >= 0 && ::connect(probe, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  if (probe >= 0) ::close(probe);
  if (live) throw Error(Fault::Protocol, "i-PI: " + path + " is in use by another server (another run with this unix NAME?)");
  ::unlink(path.c_str());
}

}  // namespace

const char* fault_name(Fault f) {
  switch (f) {
    case Fault::Timeout: return "timeout";
    case Fault::Disconnected: return "disconnected";
    case Fault::Protocol: return "protocol";
    case Fault::AtomCount: return "atom count";
    case Fault::NonFinite: return "non-finite";
    default: return "none";
  }
}

Server::Server(const ServerOptions& o) : o_(o) {
  if (is_unix()) {
    sockaddr_un a{};
    if (o_.path.size() >= sizeof(a.sun_path))
      throw Error(Fault::Protocol, "i-PI: socket path " + o_.path + " is too long");
    remove_stale_socket(o_.path);
    listen_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    a.sun_family = AF_UNIX;
    std::strcpy(a.sun_path, o_.path.c_str());
    if (listen_ < 0 || ::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || ::listen(listen_, 1) != 0) {
      const std::string why = std::strerror(errno);
      if (listen_ >= 0) ::close(listen_);
      throw Error(Fault::Protocol, "i-PI: cannot listen on UNIX socket " + o_.path + ": " + why);
    }
    remove_at_exit(o_.path);
    return;
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(o_.port));
  if (::inet_pton(AF_INET, o_.host.c_str(), &a.sin_addr) != 1)
    throw Error(Fault::Protocol, "i-PI: '" + o_.host + "' is not an IPv4 address");
  listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int one = 1;
  if (listen_ >= 0) ::setsockopt(listen_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (listen_ < 0 || ::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || ::listen(listen_, 1) != 0) {
    const std::string why = std::strerror(errno);
    if (listen_ >= 0) ::close(listen_);
    throw Error(Fault::Protocol, "i-PI: cannot listen on " + o_.host + ":" + std::to_string(o_.port) + ": " + why);
  }
  socklen_t len = sizeof(a);
  ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
}

Server::~Server() {
  try {
    send_exit();
  } catch (...) {
  }
  if (listen_ >= 0) ::close(listen_);
  if (is_unix()) {
    ::unlink(o_.path.c_str());
    forget_at_exit(o_.path);
  }
}

std::string Server::client_name() const {
  const std::string prefix = "/tmp/ipi_";
  return is_unix() && o_.path.compare(0, prefix.size(), prefix) == 0 ? o_.path.substr(prefix.size()) : "";
}

bool Server::accept(double seconds) {
  if (connected()) return true;
  if (!wait_for(listen_, POLLIN, now() + seconds)) return false;
  // (non-blocking: a connection aborted between poll and accept gives EAGAIN, not a hang)
  conn_ = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (conn_ >= 0 && !is_unix()) {
    const int one = 1;
    ::setsockopt(conn_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return conn_ >= 0;
}

void Server::disconnect() {
  if (conn_ >= 0) ::close(conn_);
  conn_ = -1;
}

void Server::send_exit() {
  if (!connected()) return;
  try {
    send_header("EXIT", now() + 2.0);
  } catch (...) {
  }
  disconnect();
}

void Server::fail(Fault f, const std::string& what) {
  disconnect();
  throw Error(f, "i-PI client: " + what);
}

void Server::send_bytes(const void* p, size_t n, double deadline) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    if (!wait_for(conn_, POLLOUT, deadline)) fail(Fault::Timeout, "no room to send for too long (client hung?)");
    const ssize_t w = ::send(conn_, c, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w <= 0) fail(Fault::Disconnected, std::string("connection lost while sending (") + std::strerror(errno) + ")");
    c += w;
    n -= static_cast<size_t>(w);
  }
}

void Server::recv_bytes(void* p, size_t n, double deadline) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    if (!wait_for(conn_, POLLIN, deadline)) fail(Fault::Timeout, "no answer within the timeout (client hung?)");
    const ssize_t r = ::recv(conn_, c, n, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) fail(Fault::Disconnected, "connection closed (the client died or stopped)");
    c += r;
    n -= static_cast<size_t>(r);
  }
}

void Server::send_header(const char* h, double deadline) {
  char b[kHeader];
  std::memset(b, ' ', kHeader);
  std::memcpy(b, h, std::strlen(h));
  send_bytes(b, kHeader, deadline);
}

std::string Server::recv_header(double deadline) {
  char b[kHeader + 1] = {};
  recv_bytes(b, kHeader, deadline);
  std::string s(b, kHeader);
  const size_t end = s.find_last_not_of(std::string(" \0", 2));
  s.erase(end == std::string::npos ? 0 : end + 1);
  return s;
}

Result Server::compute(const Frame& f, double seconds) {
  if (!connected()) throw Error(Fault::Disconnected, "i-PI: no client connected");
  const double deadline = now() + seconds;
  const int32_t n = static_cast<int32_t>(f.positions.size() / 3);
  // H: the lattice vectors as columns (Bohr); row k of f.cell is vector k
  std::array<double, 9> h{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) h[3 * r + c] = f.cell[3 * c + r] / kBohrInAngstrom;
  const std::array<double, 9> ih = inverse(h);
  for (;;) {
    send_header("STATUS", deadline);
    const std::string st = recv_header(deadline);
    if (st == "READY") break;
    if (st == "NEEDINIT") {
      send_header("INIT", deadline);
      const int32_t bead = 0, len = 1;
      const char nul = '\0';
      send_bytes(&bead, 4, deadline);
      send_bytes(&len, 4, deadline);
      send_bytes(&nul, 1, deadline);
      continue;
    }
    if (st == "HAVEDATA") fail(Fault::Protocol, "says HAVEDATA before it was sent positions");
    fail(Fault::Protocol, "unexpected status '" + st + "'");
  }
  send_header("POSDATA", deadline);
  send_bytes(h.data(), sizeof(double) * 9, deadline);
  send_bytes(ih.data(), sizeof(double) * 9, deadline);
  send_bytes(&n, 4, deadline);
  std::vector<double> x(f.positions.size());
  for (size_t k = 0; k < x.size(); ++k) x[k] = f.positions[k] / kBohrInAngstrom;
  send_bytes(x.data(), sizeof(double) * x.size(), deadline);
  send_header("STATUS", deadline);
  const std::string st = recv_header(deadline);    // the client computes before it answers
  if (st != "HAVEDATA") fail(Fault::Protocol, "status '" + st + "' after positions (HAVEDATA expected)");
  send_header("GETFORCE", deadline);
  const std::string fr = recv_header(deadline);
  if (fr != "FORCEREADY") fail(Fault::Protocol, "answer '" + fr + "' to GETFORCE (FORCEREADY expected)");
  Result r;
  int32_t got = 0, extra = 0;
  recv_bytes(&r.energy, 8, deadline);
  recv_bytes(&got, 4, deadline);
  if (got != n)
    fail(Fault::AtomCount, "returned forces on " + std::to_string(got) + " atoms, LAMMPS has " + std::to_string(n) +
                               " (the client's input describes another system)");
  r.forces.resize(3 * static_cast<size_t>(n));
  recv_bytes(r.forces.data(), sizeof(double) * r.forces.size(), deadline);
  recv_bytes(r.virial.data(), sizeof(double) * 9, deadline);
  recv_bytes(&extra, 4, deadline);
  if (extra < 0 || extra > (1 << 26)) fail(Fault::Protocol, "sent an extra string of " + std::to_string(extra) + " bytes");
  r.extra.resize(static_cast<size_t>(extra));
  if (extra > 0) recv_bytes(&r.extra[0], r.extra.size(), deadline);
  bool finite = std::isfinite(r.energy);
  r.energy *= kHartreeInEV;
  for (double& v : r.forces) {
    finite = finite && std::isfinite(v);
    v *= kHartreeInEV / kBohrInAngstrom;
  }
  for (double& v : r.virial) {
    finite = finite && std::isfinite(v);
    v *= kHartreeInEV;
  }
  if (!finite) throw Error(Fault::NonFinite, "i-PI client: returned a non-finite energy, force or virial");
  return r;
}

}  // namespace ipi
}  // namespace nep
