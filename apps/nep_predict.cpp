// nep-predict MODEL.txt IN.xyz OUT.xyz [--precision double|float] [--threads N] [--backend host|openmp|serial|device]
//             [--ewald nep_cpu|converged]
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "nep/calculator.hpp"
#include "nep/error.hpp"
#include "nep/predict.hpp"

namespace {
int usage() {
  std::fprintf(stderr,
               "usage: nep-predict MODEL.txt IN.xyz OUT.xyz [--precision double|float] [--threads N] "
               "[--backend host|openmp|serial|device] [--ewald nep_cpu|converged]\n"
               "  --ewald (charge models): nep_cpu (default) NEP_CPU's and GPUMD's reciprocal sum, with their\n"
               "  k-set and 2 pi = 6.2831853; converged: exact 2 pi and a k-sphere twice as large (what LAMMPS's\n"
               "  kspace solvers approach at tight accuracy; docs/model_kinds.md)\n");
  return 2;
}
}  // namespace

int main(int argc, char** argv) {
  std::string pos[3];
  int npos = 0, threads = 0;
  std::string precision = "double", backend = "host";  // OpenMP when Kokkos has it, else Serial
  std::string ewald = "nep_cpu";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--precision" || a == "--threads" || a == "--backend" || a == "--ewald") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--precision") precision = v;
      else if (a == "--ewald") ewald = v;
      else if (a == "--backend") backend = v;
      else {
        char* end = nullptr;
        threads = static_cast<int>(std::strtol(v.c_str(), &end, 10));
        if (*end != '\0' || threads <= 0) {
          std::fprintf(stderr, "nep-predict: --threads needs a positive integer, got '%s'\n", v.c_str());
          return 2;
        }
      }
    } else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "nep-predict: unknown option '%s'\n", a.c_str());
      return usage();
    } else if (npos < 3) {
      pos[npos++] = a;
    } else {
      return usage();
    }
  }
  if (npos != 3) return usage();
  if (ewald != "nep_cpu" && ewald != "converged") {
    std::fprintf(stderr, "nep-predict: --ewald is nep_cpu or converged, got '%s'\n", ewald.c_str());
    return 2;
  }
  try {
    const nep::Precision prec = nep::parse_precision(precision);
    const nep::Backend be = nep::parse_backend(backend);
    nep::KokkosSession kokkos(threads);
    const nep::Model model = nep::read_model(pos[0]);
    int frames = 0;
    {
      nep::Calculator calc(model, prec, be);
      if (ewald == "converged") calc.set_ewald(2.0, true);
      frames = nep::predict_xyz(calc, model, pos[1], pos[2]);
    }
    std::printf("nep-predict: %d frame(s) written to %s\n", frames, pos[2].c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nep-predict: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
