// The cost of one pair_style ipi call that is not the client's computing: nep::ipi::Server::compute
// against a client (a thread of this program) that answers at once with zero forces, over a UNIX
// socket, for N atoms: the message exchange, the unit conversions and the copies.
// usage: bench_ipi [atoms=64] [calls=2000]      prints microseconds per call
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "nep/ipi/server.hpp"

namespace {
void read_exact(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, c, n);
    if (r <= 0) std::exit(0);
    c += r;
    n -= static_cast<size_t>(r);
  }
}

void write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w <= 0) std::exit(0);
    c += w;
    n -= static_cast<size_t>(w);
  }
}

// a client that says READY, takes the positions and returns zeros
void zero_client(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strcpy(a.sun_path, path.c_str());
  while (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  bool have = false;
  std::vector<double> buf;
  int32_t n = 0;
  for (;;) {
    char h[13] = {};
    read_exact(fd, h, 12);
    const std::string m(h);
    auto answer = [&](const char* s) {
      char o[12];
      std::memset(o, ' ', 12);
      std::memcpy(o, s, std::strlen(s));
      write_all(fd, o, 12);
    };
    if (m.rfind("STATUS", 0) == 0) {
      answer(have ? "HAVEDATA" : "READY");
    } else if (m.rfind("POSDATA", 0) == 0) {
      double cell[18];
      read_exact(fd, cell, sizeof(cell));
      read_exact(fd, &n, 4);
      buf.resize(3 * static_cast<size_t>(n));
      read_exact(fd, buf.data(), buf.size() * sizeof(double));
      have = true;
    } else if (m.rfind("GETFORCE", 0) == 0) {
      answer("FORCEREADY");
      const double e = 0.0, vir[9] = {0};
      const int32_t extra = 0;
      std::fill(buf.begin(), buf.end(), 0.0);
      write_all(fd, &e, 8);
      write_all(fd, &n, 4);
      write_all(fd, buf.data(), buf.size() * sizeof(double));
      write_all(fd, vir, sizeof(vir));
      write_all(fd, &extra, 4);
      have = false;
    } else {
      ::close(fd);
      return;
    }
  }
}
}  // namespace

int main(int argc, char** argv) {
  const int atoms = argc > 1 ? std::atoi(argv[1]) : 64;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 2000;
  nep::ipi::ServerOptions o;
  o.path = "/tmp/ipi_bench_" + std::to_string(::getpid());
  nep::ipi::Server server(o);
  std::thread client(zero_client, o.path);
  if (!server.accept(10.0)) return 1;
  nep::ipi::Frame f;
  f.cell = {10, 0, 0, 0, 10, 0, 0, 0, 10};
  f.positions.assign(3 * static_cast<size_t>(atoms), 1.0);
  for (int k = 0; k < 20; ++k) server.compute(f, 10.0);    // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < calls; ++k) server.compute(f, 10.0);
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
  server.send_exit();
  client.join();
  std::printf("bench_ipi: %d atoms, %d calls: %.1f us per call (UNIX socket, a client answering at once)\n", atoms, calls, us);
  return 0;
}
