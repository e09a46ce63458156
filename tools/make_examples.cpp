// Writes the example packages into a folder (default tests/data/examples).
// Usage: charkit_make_examples [DIR]
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "example_packages.h"

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "tests/data/examples";
  for (const auto& f : charkit::examples::make_example_packages()) {
    std::string path = dir + "/" + f.name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(f.bytes.data()),
              static_cast<std::streamsize>(f.bytes.size()));
    if (!out) {
      std::cerr << "cannot write " << path << "\n";
      return 2;
    }
    std::cout << path << " (" << f.bytes.size() << " bytes)\n";
  }
  return 0;
}
