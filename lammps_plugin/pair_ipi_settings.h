/* -*- c++ -*- ----------------------------------------------------------
   lammps-nep: pair_style ipi's keywords, one table (docs/pair_ipi.rst, Syntax). Free of LAMMPS
   headers: tests/test_keyword_tables.cpp checks it against the docs.
------------------------------------------------------------------------- */
#ifndef LMP_NEP_PAIR_IPI_SETTINGS_H
#define LMP_NEP_PAIR_IPI_SETTINGS_H

#include "nep/keyword_table.hpp"

#include <string>
#include <vector>

namespace nep_lmp {

struct PairIPISettings {
  bool inet = false;
  std::string unix_name;             // "" (auto): a private 0700 folder /tmp/ipi_XXXXXX
  int port = 0;                      // inet: 0 = a free port
  std::string host = "127.0.0.1";    // inet: the address to bind
  std::string launch;                // the client command this process starts ("" = the user starts it)
  std::string log = "ipi_client.log";    // the launched client's output
  double timeout = 3600.0;           // seconds one call may take
  double wait = 600.0;               // seconds to wait for a client to connect
  int retries = 2;                   // restarts of a launched client after a failed call
  std::string input;                 // the client's input file, for the species and order check
};

nep::KeywordTable pair_ipi_keywords(PairIPISettings &s);
PairIPISettings parse_pair_ipi(const std::vector<std::string> &args);    // throws nep::Error
std::string pair_ipi_usage();

}    // namespace nep_lmp

#endif
