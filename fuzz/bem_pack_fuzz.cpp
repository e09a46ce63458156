// libFuzzer target: `bem pack` inputs. The bytes are a glTF scene (GLB or
// glTF JSON; the reader bounded to 1 MiB), optionally after a spec file
// ("SPEC", UInt32 LE length, the spec's JSON: bem pack --spec) and/or a
// JSON template ("TMPL", UInt32 LE length, the template: packed into it
// with PackOptions::fresh instead), packed into a fixed template, the
// game-layout example (packed normal/tangent word, SNorm8×4 outline data,
// 12-byte skin). A packed result goes through the writer, whose validation
// must accept it or refuse it with an error, never crash; an accepted one
// must keep the template's mesh count.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include "charkit/bem/load.h"
#include "charkit/bem/pack.h"
#include "charkit/bem/pack_spec.h"
#include "charkit/bem/writer.h"
#include "charkit/core/json.h"
#include "charkit/scene/gltf_document.h"

using namespace charkit;

namespace {

struct Template {
  std::vector<std::uint8_t> file;
  bem::LoadedPackage loaded;
  bem::PackageContent content;
};

const Template& the_template() {
  static const std::unique_ptr<Template> t = [] {
    auto out = std::make_unique<Template>();
    std::ifstream in(CHARKIT_PACK_TEMPLATE, std::ios::binary);
    out->file.assign(std::istreambuf_iterator<char>(in), {});
    out->loaded = bem::load_package(out->file);
    if (!out->loaded.ok()) __builtin_trap();  // the template must be valid
    auto c = bem::read_package_content(out->file);
    if (!c) __builtin_trap();
    out->content = std::move(*c);
    return out;
  }();
  return *t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  const Template& t = the_template();
  std::optional<bem::PackSpec> spec;
  std::optional<bem::PackTemplate> json_template;
  if (size >= 8 && std::memcmp(data, "TMPL", 4) == 0) {
    std::uint32_t n = 0;
    std::memcpy(&n, data + 4, 4);
    if (n > size - 8) return 0;
    auto made = bem::load_json_template(core::Bytes(data + 8, n));
    if (!made) {
      (void)made.error().to_string();
      return 0;
    }
    json_template = std::move(*made);
    data += 8 + n;
    size -= 8 + n;
  }
  if (size >= 8 && std::memcmp(data, "SPEC", 4) == 0) {
    std::uint32_t n = 0;
    std::memcpy(&n, data + 4, 4);
    if (n > size - 8) return 0;
    auto parsed = bem::parse_pack_spec(core::Bytes(data + 8, n));
    if (parsed)
      spec = std::move(*parsed);
    else
      (void)parsed.error().to_string();
    data += 8 + n;
    size -= 8 + n;
  }
  scene::GltfLoadOptions lo;
  lo.max_total_bytes = std::size_t{1} << 20;
  lo.max_zero_accessor_bytes = std::size_t{1} << 20;
  auto doc = scene::GltfDocument::load(core::Bytes(data, size), lo);
  if (!doc) return 0;
  bem::PackOptions po;
  po.raw_axes = size % 2 == 0;
  po.max_vertices = 1u << 14;
  if (spec) po.spec = &*spec;
  po.fresh = json_template.has_value();
  auto packed = json_template
                    ? bem::pack_scene(json_template->content, json_template->model, *doc, po)
                    : bem::pack_scene(t.content, *t.loaded.model, *doc, po);
  if (!packed) {
    (void)packed.error().to_string();
    return 0;
  }
  if (!json_template &&
      packed->content.manifest["meshes"].size() != t.content.manifest["meshes"].size())
    __builtin_trap();
  // Every string the manifest holds must serialise (no invalid UTF-8 from the spec or scene).
  try {
    (void)packed->content.manifest.dump(-1, ' ', false, core::Json::error_handler_t::strict);
  } catch (const std::exception&) {
    return 0;  // the writer refuses it with BEM_WRITE_MANIFEST
  }
  auto written = bem::write_binary(packed->content);
  if (written) {
    bem::LoadedPackage back = bem::load_package(written->bytes);
    if (!back.ok()) __builtin_trap();  // the writer validated it
  }
  return 0;
}
