// Writes the small seed corpora of the fuzz targets from the hand-built test
// packages: every version as binary (raw and zstd) and ZIP (STORED and
// DEFLATE), the 1.4 explicit-target form, a folder-wrapped ZIP and a
// collection bundle. Usage: make_fuzz_corpus <fuzz/corpus>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "package_builder.h"

namespace fs = std::filesystem;
using charkit::testkit::ByteVec;

namespace {

bool write(const fs::path& dir, const std::string& name, const ByteVec& bytes) {
  fs::create_directories(dir);
  std::FILE* f = std::fopen((dir / name).c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

ByteVec text(const std::string& s) {
  return ByteVec(s.begin(), s.end());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus-dir>\n", argv[0]);
    return 2;
  }
  namespace tk = charkit::testkit;
  fs::path root = argv[1];
  fs::path pkg = root / "bem_package", zip = root / "bem_zip", json = root / "json";
  bool ok = true;
  for (int minor = 0; minor <= 5; ++minor) {
    tk::TestPackage p = tk::make_valid_package(minor);
    std::string v = "v1" + std::to_string(minor);
    ok &= write(pkg, v + "_raw.bem", p.binary(false));
    ok &= write(pkg, v + "_zstd.bem", p.binary(true));
    ok &= write(zip, v + "_stored.zip", p.zip(false));
    ok &= write(zip, v + "_deflate.zip", p.zip(true, false));
    ok &= write(json, v + ".json", text(p.manifest.dump()));
  }
  tk::TestPackage v14 = tk::make_valid_package_v14();
  ok &= write(pkg, "v14_explicit.bem", v14.binary(true));
  ok &= write(json, "v14_explicit.json", text(v14.manifest.dump(1)));
  ok &= write(zip, "v13_folder.zip", tk::make_valid_package(3).zip(false, true, "pkg/"));
  ok &= write(zip, "collection.zip",
              tk::build_zip({{"a.bem", tk::make_valid_package(0).binary()},
                             {"b.bem", tk::make_valid_package(2).zip(true), 8}}));
  std::vector<tk::ZipEntry> z64;
  tk::TestPackage p1 = tk::make_valid_package(1);
  std::string m = p1.manifest.dump();
  z64.push_back({"manifest.json", ByteVec(m.begin(), m.end()), 8, 0, true});
  for (std::size_t i = 0; i < p1.payloads.size(); ++i)
    z64.push_back({std::to_string(i) + ".bin", p1.payloads[i], 0, 0, true});
  ok &= write(zip, "v11_zip64_root_payloads.zip", tk::build_zip(z64, {true}));
  // The package target also starts from the ZIP seeds.
  ok &= write(pkg, "v12_stored.zip", tk::make_valid_package(2).zip(false));
  ok &= write(pkg, "collection.zip",
              tk::build_zip({{"a.bem", tk::make_valid_package(1).binary(true)}}));
  if (!ok) {
    std::fprintf(stderr, "make_fuzz_corpus: cannot write under %s\n", root.c_str());
    return 1;
  }
  return 0;
}
