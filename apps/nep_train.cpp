// nep-train [DIR] [--seed S] [--threads N] [--device cpu] [--resume] [--stop-after EPOCHS]
#include <Kokkos_Core.hpp>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "nep/calculator.hpp"
#include "nep/error.hpp"
#include "nep/trainer.hpp"

namespace {
void usage() {
  std::cerr << "usage: nep-train [DIR] [--seed S] [--threads N] [--device cpu] [--resume] [--stop-after EPOCHS]\n"
               "  DIR holds nep.in, train.xyz (or train.h5) and optionally test.xyz (or test.h5); default '.'\n";
}
}  // namespace

int main(int argc, char** argv) {
  nep::TrainOptions o;
  bool dir_set = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw nep::Error(a + " needs a value");
        return argv[++i];
      };
      if (a == "--seed") {
        o.seed = std::stoull(value());
        o.seed_given = true;
      } else if (a == "--threads") {
        o.threads = std::stoi(value());
        if (o.threads < 1) throw nep::Error("--threads must be >= 1");
      } else if (a == "--device") {
        o.device = value();
      } else if (a == "--resume") {
        o.resume = true;
      } else if (a == "--stop-after") {
        o.stop_after = std::stoi(value());
      } else if (a == "-h" || a == "--help") {
        usage();
        return 0;
      } else if (!a.empty() && a[0] != '-' && !dir_set) {
        o.dir = a;
        dir_set = true;
      } else {
        usage();
        return 2;
      }
    }
    nep::KokkosSession kokkos(o.threads);
    nep::run_training(o, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "nep-train: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
