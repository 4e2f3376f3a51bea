/* -*- c++ -*- ----------------------------------------------------------
   lammps-nep: pair_style nep's keywords, one table (docs/pair_nep.rst, Syntax). Free of LAMMPS
   headers, so tests/test_keyword_tables.cpp checks it against the docs without LAMMPS.
------------------------------------------------------------------------- */
#ifndef LMP_NEP_PAIR_NEP_SETTINGS_H
#define LMP_NEP_PAIR_NEP_SETTINGS_H

#include "nep/keyword_table.hpp"

#include <string>
#include <vector>

namespace nep_lmp {

struct PairNEPSettings {
  bool single_precision = false;
  double cutoff = 0.0;               // pair_style ... cutoff R (0: the model's)
  std::string legacy_model_file;     // NEP_CPU form: pair_style nep FILE
};

nep::KeywordTable pair_nep_keywords(PairNEPSettings &s);

// The arguments of pair_style nep (nep/gpu, nep/kk): an optional model file first (NEP_CPU's
// form), then keywords. Throws nep::Error with the message (the caller adds the command).
PairNEPSettings parse_pair_nep(const std::vector<std::string> &args);

// "pair_style STYLE [file] [precision double|float] [cutoff R]" from the table
std::string pair_nep_usage(const std::string &style);

}    // namespace nep_lmp

#endif
