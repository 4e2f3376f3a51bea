// Uses the installed core: the energy per atom of a diamond Si cell (8 atoms) for a model file,
// printed for install_checks.sh to compare with nep-predict's.
#include <cstdio>
#include <exception>

#include "nep/calculator.hpp"
#include "nep/model.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: nep_consumer SI_MODEL\n");
    return 2;
  }
  try {
    nep::KokkosSession session(1);
    const nep::Model model = nep::read_model(argv[1]);
    nep::Calculator calc(model, nep::Precision::Double, nep::Backend::Host);
    const double a = 5.431;
    const double basis[8][3] = {{0, 0, 0}, {0, .5, .5}, {.5, 0, .5}, {.5, .5, 0},
                                {.25, .25, .25}, {.25, .75, .75}, {.75, .25, .75}, {.75, .75, .25}};
    nep::Structure s;
    for (const auto& b : basis) {
      s.type.push_back(0);
      for (double f : b) s.x.push_back(f * a);
    }
    s.cell.h[0] = s.cell.h[4] = s.cell.h[8] = a;
    const nep::Prediction p = calc.compute(s, false);
    std::printf("energy per atom %.12f\n", p.energy / 8);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nep_consumer: %s\n", e.what());
    return 1;
  }
  return 0;
}
