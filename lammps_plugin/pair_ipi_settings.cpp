/* ----------------------------------------------------------------------
   lammps-nep: pair_style ipi's keyword table (pair_ipi_settings.h)
------------------------------------------------------------------------- */

#include "pair_ipi_settings.h"

#include "nep/error.hpp"

#include <limits>

namespace nep_lmp {

nep::KeywordTable pair_ipi_keywords(PairIPISettings &s)
{
  const double inf = std::numeric_limits<double>::infinity();
  using V = nep::KeywordValues;
  std::vector<nep::Keyword> k = {
      {"unix", "auto|NAME", 1, 1,
       "UNIX socket: auto = a private (0700) folder /tmp/ipi_XXXXXX, the client's name XXXXXX/sock; NAME = "
       "/tmp/ipi_NAME, the i-PI convention (default auto)",
       [&s](const V &v) {
         s.inet = false;
         s.unix_name = v.word(0) == "auto" ? "" : v.word(0);
         if (s.unix_name.find("..") != std::string::npos) throw nep::Error("unix NAME must not contain '..'");
       }},
      {"inet", "PORT", 1, 1, "a TCP socket on this port (0: a free one, printed in the log) instead of a UNIX socket",
       [&s](const V &v) {
         s.inet = true;
         s.port = static_cast<int>(v.integer(0, 0, 65535));
       }},
      {"host", "ADDRESS", 1, 1,
       "the IPv4 address an inet socket binds (default 127.0.0.1: this machine only; name another for a client on "
       "another node)",
       [&s](const V &v) { s.host = v.word(0); }},
      {"launch", "COMMAND", 1, 1,
       "start the client: the command (one quoted argument) with {address}, {name}, {host} and {port} replaced; "
       "restarted when it dies, stopped when LAMMPS ends (default: the user starts it)",
       [&s](const V &v) { s.launch = v.word(0); }},
      {"log", "FILE", 1, 1, "the launched client's output, appended (default ipi_client.log)",
       [&s](const V &v) { s.log = v.word(0); }},
      {"timeout", "S", 1, 1, "seconds one call may take before the client counts as hung (default 3600)",
       [&s, inf](const V &v) {
         s.timeout = v.real(0, -inf, inf);
         if (!(s.timeout > 0.0)) throw nep::Error("timeout must be positive (seconds)");
       }},
      {"wait", "S", 1, 1, "seconds to wait for a client to connect (default 600)",
       [&s, inf](const V &v) {
         s.wait = v.real(0, -inf, inf);
         if (!(s.wait > 0.0)) throw nep::Error("wait must be positive (seconds)");
       }},
      {"retries", "N", 1, 1, "retries of a failed call (a launched client is restarted, an external one waited for) before LAMMPS stops (default 2)",
       [&s](const V &v) { s.retries = static_cast<int>(v.integer(0, 0, 1000)); }},
      {"input", "FILE", 1, 1,
       "the client's input (pw.x input or extended XYZ): its atoms' species, in order, must be LAMMPS's in atom-ID "
       "order (checked before the first call)",
       [&s](const V &v) { s.input = v.word(0); }},
  };
  return nep::KeywordTable("pair_style ipi", std::move(k));
}

PairIPISettings parse_pair_ipi(const std::vector<std::string> &args)
{
  PairIPISettings s;
  pair_ipi_keywords(s).parse_args(args);
  return s;
}

std::string pair_ipi_usage()
{
  PairIPISettings s;
  return pair_ipi_keywords(s).usage("pair_style ipi");
}

}    // namespace nep_lmp
