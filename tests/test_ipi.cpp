// The i-PI server library without LAMMPS (include/nep/ipi/): against tests/ipi/lj_client.py, forces
// and virial are the derivatives of the client's energy (finite differences through the socket, so
// the units, the cell layout and the virial's sign are the protocol's), every fault comes back as
// its kind, the client's input files are read for the species check, and launched clients lose
// the MPI launcher's variables and stop as a whole process group.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "nep/error.hpp"
#include "nep/ipi/client_input.hpp"
#include "nep/ipi/client_process.hpp"
#include "nep/ipi/server.hpp"
#include "test_support.hpp"

#ifndef NEP_IPI_CLIENT
#error "NEP_IPI_CLIENT must name tests/ipi/lj_client.py and NEP_TEST_PYTHON its python3"
#endif

namespace {

using nep::ipi::Fault;

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A server on a UNIX socket in the test's scratch folder reached as /tmp/ipi_<name>, and the LJ
// client launched with `extra` options
struct Session {
  std::string dir = nep_test::scratch_dir("nep_ipi_test_");
  std::string name;
  std::unique_ptr<nep::ipi::Server> server;
  nep::ipi::ClientProcess client;
  explicit Session(const std::string& extra = "", const std::string& tag = "s") {
    name = "nep_test_" + std::to_string(::getpid()) + "_" + tag;
    nep::ipi::ServerOptions o;
    o.path = "/tmp/ipi_" + name;
    server = std::make_unique<nep::ipi::Server>(o);
    client.start(nep::ipi::expand_command(std::string(NEP_TEST_PYTHON) + " " + NEP_IPI_CLIENT +
                                              " --unix {name} --cutoff 6.0 --needinit-every " + extra,
                                          server->client_name(), "", 0),
                 dir + "/client.log");
    EXPECT_TRUE(server->accept(30.0)) << read_all(dir + "/client.log");
  }
};

// 32 atoms of a rattled fcc cell, triclinic
nep::ipi::Frame frame() {
  nep::ipi::Frame f;
  const double a = 5.3;
  f.cell = {2 * a, 0, 0, 0.7, 2 * a, 0, -0.5, 0.4, 2 * a};
  const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  uint64_t s = 12345;
  auto rnd = [&s]() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(s >> 11) * 0x1.0p-53 - 0.5;
  };
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k)
        for (const auto& b : basis) {
          const double fr[3] = {(i + b[0]) / 2, (j + b[1]) / 2, (k + b[2]) / 2};
          for (int d = 0; d < 3; ++d)
            f.positions.push_back(fr[0] * f.cell[d] + fr[1] * f.cell[3 + d] + fr[2] * f.cell[6 + d] + 0.2 * rnd());
        }
  return f;
}

TEST(IpiServer, ForcesAndVirialAreTheEnergysDerivatives) {
  Session s;
  const nep::ipi::Frame f0 = frame();
  const nep::ipi::Result r = s.server->compute(f0, 30.0);
  ASSERT_EQ(r.forces.size(), f0.positions.size());
  const double h = 1e-5;
  double worst = 0.0, fmax = 0.0;
  for (int k : {0, 4, 17, 50, 95}) {    // F_k = -dE/dx_k
    nep::ipi::Frame p = f0, m = f0;
    p.positions[k] += h;
    m.positions[k] -= h;
    const double fd = -(s.server->compute(p, 30.0).energy - s.server->compute(m, 30.0).energy) / (2 * h);
    worst = std::max(worst, std::fabs(fd - r.forces[k]));
    fmax = std::max(fmax, std::fabs(r.forces[k]));
  }
  EXPECT_LT(worst, 1e-6 * std::max(1.0, fmax));
  // W_ab = -dE/d(eps_ab) with every vector (cell and positions) strained by (1 + eps)
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      auto strained = [&](double e) {
        nep::ipi::Frame g = f0;
        auto apply = [&](double* v) { v[a] += e * v[b]; };
        for (int k = 0; k < 3; ++k) apply(&g.cell[3 * k]);
        for (size_t i = 0; i < g.positions.size() / 3; ++i) apply(&g.positions[3 * i]);
        return s.server->compute(g, 30.0).energy;
      };
      const double fd = -(strained(h) - strained(-h)) / (2 * h);
      EXPECT_NEAR(r.virial[3 * a + b], fd, 1e-6 * std::max(1.0, std::fabs(fd))) << "W[" << a << "][" << b << "]";
    }
  // translating every atom changes nothing
  nep::ipi::Frame t = f0;
  for (size_t i = 0; i < t.positions.size(); ++i) t.positions[i] += 0.37 * static_cast<double>(i % 3 + 1);
  EXPECT_NEAR(s.server->compute(t, 30.0).energy, r.energy, 1e-9 * std::fabs(r.energy));
}

TEST(IpiServer, FaultsComeBackAsTheirKind) {
  auto fault_of = [](const std::string& extra, double timeout, const std::string& tag) {
    Session s(extra, tag);
    try {
      s.server->compute(frame(), timeout);
    } catch (const nep::ipi::Error& e) {
      return e.fault();
    }
    return Fault::None;
  };
  EXPECT_EQ(fault_of("--die-at 1", 30.0, "die"), Fault::Disconnected);
  EXPECT_EQ(fault_of("--hang-at 1", 1.0, "hang"), Fault::Timeout);
  EXPECT_EQ(fault_of("--nan-at 1", 30.0, "nan"), Fault::NonFinite);
  EXPECT_EQ(fault_of("--count-off-at 1", 30.0, "count"), Fault::AtomCount);
  // a NaN leaves the connection usable; the next call is fine
  Session s("--nan-at 1", "nan2");
  EXPECT_THROW(s.server->compute(frame(), 30.0), nep::ipi::Error);
  EXPECT_TRUE(s.server->connected());
  EXPECT_NO_THROW(s.server->compute(frame(), 30.0));
}

TEST(IpiServer, InetBindsLoopbackByDefault) {
  nep::ipi::Server sv(nep::ipi::ServerOptions{});
  EXPECT_GT(sv.port(), 0);
  EXPECT_FALSE(sv.is_unix());
  EXPECT_EQ(nep::ipi::ServerOptions{}.host, "127.0.0.1");
  nep::ipi::ServerOptions bad;
  bad.host = "localhost";    // names are not resolved: an address is asked for
  EXPECT_THROW(nep::ipi::Server{bad}, nep::ipi::Error);
}

TEST(IpiServer, ANamedSocketInUseOrNotASocketIsNotTaken) {
  nep::ipi::ServerOptions o;
  o.path = "/tmp/ipi_nep_test_inuse_" + std::to_string(::getpid());
  {
    nep::ipi::Server first(o);
    try {
      nep::ipi::Server second(o);
      FAIL() << "a second server took a live socket";
    } catch (const nep::ipi::Error& e) {
      EXPECT_NE(std::string(e.what()).find("is in use by another server"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(nep::ipi::Server{o});    // the first one is gone: its path is free again
  std::ofstream(o.path) << "not a socket\n";
  EXPECT_THROW(nep::ipi::Server{o}, nep::ipi::Error);
  EXPECT_EQ(read_all(o.path), "not a socket\n");    // and not deleted
  ::unlink(o.path.c_str());
}

TEST(IpiClientProcess, PlaceholdersEnvironmentAndProcessGroup) {
  EXPECT_EQ(nep::ipi::expand_command("pw.x --ipi {address} -in pw.in", "abc/sock", "", 0),
            "pw.x --ipi abc/sock:UNIX -in pw.in");
  EXPECT_EQ(nep::ipi::expand_command("x {host}:{port} {address}", "", "10.0.0.2", 31415), "x 10.0.0.2:31415 10.0.0.2:31415");
  const std::string dir = nep_test::scratch_dir("nep_ipi_proc_");
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  setenv("NEP_IPI_KEEP_ME", "1", 1);
  nep::ipi::ClientProcess p;
  p.start("env", dir + "/env.log");
  for (int k = 0; k < 200 && p.running(); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::string env = read_all(dir + "/env.log");
  EXPECT_EQ(env.find("OMPI_COMM_WORLD_RANK"), std::string::npos);
  EXPECT_NE(env.find("NEP_IPI_KEEP_ME=1"), std::string::npos);
  EXPECT_EQ(p.exit_status(), "exit 0");
  unsetenv("OMPI_COMM_WORLD_RANK");
  // a shell with a child of its own: stop() ends both
  p.start("sleep 300 & echo $! > " + dir + "/child.pid; wait", dir + "/sleep.log");
  for (int k = 0; k < 200 && read_all(dir + "/child.pid").empty(); ++k)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const int child = std::atoi(read_all(dir + "/child.pid").c_str());
  ASSERT_GT(child, 0);
  p.stop(0.2);
  EXPECT_FALSE(p.running());
  // gone: no such process, or a zombie waiting for an init that reaps
  std::string state = "?";
  for (int k = 0; k < 50; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::string stat = read_all("/proc/" + std::to_string(child) + "/stat");
    state = stat.empty() ? "gone" : stat.substr(stat.rfind(')') + 2, 1);
    if (state == "gone" || state == "Z") break;
  }
  EXPECT_TRUE(state == "gone" || state == "Z") << "the client's child is in state " << state;
}

TEST(IpiClientInput, PwInputUnitsAndLabels) {
  const std::string head = "&CONTROL\n calculation='scf'\n/\n&SYSTEM\n ibrav = 0, nat = 3, ntyp = 2,\n celldm(1) = 10.0\n/\n"
                           "ATOMIC_SPECIES\nSi1 28.086 Si.pbe-rrkj.UPF\nO 16.0 O.UPF\n"
                           "CELL_PARAMETERS {bohr}\n 10.0 0.0 0.0\n 0.0 10.0 0.0\n 0.0 0.0 10.0\n";
  const nep::ipi::ClientInput a =
      nep::ipi::parse_pw_input(head + "ATOMIC_POSITIONS {crystal}\nSi1 0.5 0 0\nO 0 0.25d0 0\nSi1 0 0 0.1 0 0 1\n", "pw.in");
  ASSERT_EQ(a.species, (std::vector<std::string>{"Si", "O", "Si"}));
  EXPECT_EQ(a.lines, (std::vector<int>{16, 17, 18}));
  ASSERT_TRUE(a.has_positions);
  const double b = nep::ipi::kBohrInAngstrom;
  EXPECT_NEAR(a.positions[0], 5.0 * b, 1e-12);
  EXPECT_NEAR(a.positions[4], 2.5 * b, 1e-12);
  EXPECT_NEAR(a.cell[8], 10.0 * b, 1e-12);
  const nep::ipi::ClientInput c = nep::ipi::parse_pw_input(head + "ATOMIC_POSITIONS alat\nSi1 0.5 0 0\nO 0 0 0\nSi1 0 0 0\n", "pw.in");
  EXPECT_NEAR(c.positions[0], 5.0 * b, 1e-12);    // alat = celldm(1) Bohr
  const nep::ipi::ClientInput d = nep::ipi::parse_pw_input(head + "ATOMIC_POSITIONS angstrom\nSi1 1 2 3\nO 0 0 0\nSi1 0 0 0\n", "pw.in");
  EXPECT_EQ(d.positions[2], 3.0);
  EXPECT_EQ(nep::ipi::element_of_label("Fe_up"), "Fe");
  EXPECT_EQ(nep::ipi::element_of_label("si2"), "Si");
  EXPECT_EQ(nep::ipi::element_of_label("H1"), "H");
  EXPECT_EQ(nep::ipi::element_of_label("Xq"), "");
  auto message = [&](const std::string& text) {
    try {
      nep::ipi::parse_pw_input(text, "pw.in");
    } catch (const nep::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message(head + "ATOMIC_POSITIONS angstrom\nSi1 1 2\n"), "pw.in:16: expected 'label x y z'");
  // several assignments to a line without commas, a namelist on one line, comments and blank
  // lines inside the cards: as pw.x reads them
  const nep::ipi::ClientInput e = nep::ipi::parse_pw_input(
      "&control calculation='scf' /\n&system ibrav=0 nat=2 ntyp=1 ecutwfc=20 /\n&electrons\n/\n"
      "ATOMIC_SPECIES\n\n! the one species\nSi 28.086 Si.UPF\nCELL_PARAMETERS angstrom\n5 0 0\n# b\n0 5 0\n\n0 0 5\n"
      "ATOMIC_POSITIONS angstrom\nSi 0 0 0\n\n! the second atom\nSi 1 1 1\n", "pw.in");
  EXPECT_EQ(e.species, (std::vector<std::string>{"Si", "Si"}));
  EXPECT_EQ(e.lines, (std::vector<int>{16, 19}));
  EXPECT_TRUE(e.has_positions);
  EXPECT_EQ(e.cell[8], 5.0);
  // nosym: without it pw.x imposes the symmetry of its starting positions on every later call
  EXPECT_TRUE(e.pw_uses_symmetry);
  for (const char* v : {".true.", ".TRUE.", "T", ".t."})
    EXPECT_FALSE(nep::ipi::parse_pw_input(std::string("&system nat=1 nosym=") + v + " /\nATOMIC_SPECIES\nSi 28 Si.UPF\n"
                                          "ATOMIC_POSITIONS angstrom\nSi 0 0 0\n", "pw.in").pw_uses_symmetry) << v;
  EXPECT_TRUE(nep::ipi::parse_pw_input("&system nat=1 nosym=.false. /\nATOMIC_SPECIES\nSi 28 Si.UPF\n"
                                       "ATOMIC_POSITIONS angstrom\nSi 0 0 0\n", "pw.in").pw_uses_symmetry);
  EXPECT_EQ(message("&system nat=1e30 /\n"), "pw.in: no 'nat' in the &SYSTEM namelist (not a pw.x input?)");
  EXPECT_EQ(message("&SYSTEM\n/\n"), "pw.in: no 'nat' in the &SYSTEM namelist (not a pw.x input?)");
  EXPECT_EQ(message(head + "ATOMIC_POSITIONS angstrom\nSi1 1 2 3\n"), "pw.in:15: ATOMIC_POSITIONS lists fewer than nat atoms");
}

TEST(IpiClientInput, ExtendedXyz) {
  const std::string dir = nep_test::scratch_dir("nep_ipi_xyz_");
  std::ofstream(dir + "/c.xyz") << "2\nLattice=\"4 0 0 0 4 0 0 0 4\" Properties=species:S:1:pos:R:3\nAr 0 0 0\nKr 1 1 1\n";
  const nep::ipi::ClientInput c = nep::ipi::read_client_input(dir + "/c.xyz");
  EXPECT_EQ(c.species, (std::vector<std::string>{"Ar", "Kr"}));
  EXPECT_EQ(c.lines, (std::vector<int>{3, 4}));
  EXPECT_TRUE(c.has_positions);
  EXPECT_EQ(c.positions[5], 1.0);
}

}  // namespace
