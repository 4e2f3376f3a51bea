/* ----------------------------------------------------------------------
   lammps-nep: pair_style nep's keyword table (pair_nep_settings.h)
------------------------------------------------------------------------- */

#include "pair_nep_settings.h"

#include "nep/error.hpp"

#include <limits>

namespace nep_lmp {

nep::KeywordTable pair_nep_keywords(PairNEPSettings &s)
{
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<nep::Keyword> k = {
      {"precision", "double|float", 1, 1,
       "double: all NEP arithmetic in double precision (default); float: descriptor, network and pair terms in "
       "single precision, positions differenced and forces, energies and virials accumulated in double (GPUMD's "
       "choice)",
       [&s](const nep::KeywordValues &v) {
         if (v.word(0) != "double" && v.word(0) != "float")
           throw nep::Error("unknown precision '" + v.word(0) + "' (double or float)");
         s.single_precision = v.word(0) == "float";
       }},
      {"cutoff", "R", 1, 1,
       "neighbour cutoff in Angstrom: at least the model's; needed by a style without a model yet (pair_coeff * * "
       "none El1 ...), and room for models of a larger cutoff that fix nep/train deploys later (default: the model's)",
       [&s, inf](const nep::KeywordValues &v) {
         s.cutoff = v.real(0, -inf, inf);
         if (!(s.cutoff > 0.0)) throw nep::Error("cutoff must be positive");
       }},
  };
  return nep::KeywordTable("pair_style nep", std::move(k));
}

PairNEPSettings parse_pair_nep(const std::vector<std::string> &args)
{
  PairNEPSettings s;
  const nep::KeywordTable table = pair_nep_keywords(s);
  std::vector<std::string> rest = args;
  if (!rest.empty() && !table.find(rest[0])) {    // NEP_CPU's "pair_style nep FILE"
    s.legacy_model_file = rest[0];
    rest.erase(rest.begin());
  }
  table.parse_args(rest);
  return s;
}

std::string pair_nep_usage(const std::string &style)
{
  PairNEPSettings s;
  return pair_nep_keywords(s).usage("pair_style " + style + " [file]");
}

}    // namespace nep_lmp
