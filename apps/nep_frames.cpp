// nep-frames IN OUT: convert labelled frames between GPUMD extended XYZ (.xyz) and the HDF5
// frame store (.h5), by file extension (docs/frame_store.md).
#include <iostream>
#include <string>

#include "nep/data/frame_store.hpp"
#include "nep/training_frame.hpp"

namespace {
bool is_h5(const std::string& p) { return p.size() > 3 && p.compare(p.size() - 3, 3, ".h5") == 0; }
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: nep-frames IN.xyz|IN.h5 OUT.xyz|OUT.h5\n";
    return 2;
  }
  try {
    const std::string in = argv[1], out = argv[2];
    const auto frames = is_h5(in) ? nep::read_frame_store(in) : nep::read_training_xyz(in);
    if (is_h5(out)) {
      auto store = nep::FrameStore::create(out);
      for (const auto& f : frames) store.append(f);
    } else {
      nep::write_training_xyz(out, frames);
    }
    std::cout << frames.size() << " frame(s) written to " << out << "\n";
  } catch (const std::exception& e) {
    std::cerr << "nep-frames: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
