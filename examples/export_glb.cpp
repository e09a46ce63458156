// Export the default selection of a BEM package (or the one given as
// option/parameter strings, as `charkit bem export` takes them) to GLB:
//   export_glb FILE.bem OUT.glb ["group:choice&…"] ["name:value&…"]
#include <charkit/bem/export_gltf.h>
#include <charkit/bem/load.h>
#include <charkit/bem/settings.h>
#include <charkit/core/mapped_file.h>

#include <fstream>
#include <iostream>

namespace ck = charkit;

int main(int argc, char** argv) {
  if (argc < 3 || argc > 5) {
    std::cerr << "usage: export_glb FILE.bem OUT.glb [OPTIONS] [PARAMETERS]\n";
    return 2;
  }
  auto file = ck::core::MappedFile::open(argv[1]);
  if (!file) {
    std::cerr << argv[1] << ": error " << file.error().code << ": " << file.error().message << "\n";
    return 2;
  }
  ck::bem::LoadedPackage loaded = ck::bem::load_package(file->bytes());
  if (!loaded.ok()) {
    std::cerr << argv[1] << ": error: " << loaded.error << "\n";
    return 1;
  }
  auto settings =
      ck::bem::parse_settings(*loaded.model, argc > 3 ? argv[3] : "", argc > 4 ? argv[4] : "");
  if (!settings) {
    std::cerr << argv[1] << ": " << settings.error().to_string() << "\n";
    return 2;
  }
  ck::bem::ExportOptions options;
  options.generator = "charkit export_glb example";
  auto glb = ck::bem::export_glb(*loaded.model, *loaded.package, *settings, options);
  if (!glb) {
    std::cerr << argv[1] << ": " << glb.error().to_string() << "\n";
    return 1;
  }
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(glb->glb.data()),
            static_cast<std::streamsize>(glb->glb.size()));
  if (!out.flush()) {
    std::cerr << argv[2] << ": error IO_WRITE: cannot write\n";
    return 2;
  }
  std::cout << argv[2] << ": " << glb->glb.size() << " bytes\n";
  return 0;
}
