// bem::pack_scene: glTF images to template textures (detail/scene_packer.h).
#include "charkit/bem/detail/scene_packer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "charkit/bem/detail/vertex_format.h"
#include "charkit/bem/error_codes.h"
#include "charkit/bem/export_gltf.h"
#include "charkit/bem/packed_tbn.h"
#include "charkit/core/bytes.h"
#include "charkit/core/half.h"
#include "charkit/core/json.h"
#include "charkit/scene/dds.h"
#include "charkit/scene/image.h"
#include "charkit/scene/texture_decode.h"
#include "charkit/scene/texture_encode.h"

namespace charkit::bem::detail {

using core::Location;
using core::make_error;
using namespace vertex_attr;  // kFormatBytes, the semantics (detail/vertex_format.h)

core::Status ScenePacker::pack_textures() {
  std::map<std::string, std::uint32_t> texture_of_name;
  for (std::uint32_t t = 0; t < model_.textures.size(); ++t) {
    const std::string& n = model_.textures[t].original_name;
    texture_of_name.emplace(n.empty() ? "texture_" + std::to_string(t) : n, t);
    texture_of_name.emplace("texture_" + std::to_string(t), t);
  }
  std::set<std::uint32_t> done;
  const std::vector<scene::GltfImage>& images = asset().images;
  for (std::size_t i = 0; i < images.size(); ++i) {
    const scene::GltfImage& im = images[i];
    const std::string& ptr = im.pointer;
    // The texture it replaces: extras.original_name (a name a tool could
    // not keep as the image's own), else the image's name.
    std::string name = im.name;
    if (im.extras)
      if (auto it = im.extras->find("original_name"); it != im.extras->end() && it->is_string())
        name = it->get<std::string>();
    auto found = texture_of_name.find(name);
    if (found == texture_of_name.end()) {
      warn(codes::BEM_PACK_TEXTURES_KEPT,
           "image " + std::to_string(i) + (name.empty() ? "" : " (\"" + name + "\")") +
               " is named after no template texture and is not packed",
           ptr);
      continue;
    }
    const std::uint32_t t = found->second;
    if (!done.insert(t).second) {
      warn(codes::BEM_PACK_TEXTURES_KEPT,
           "image " + std::to_string(i) + " names texture " + std::to_string(t) +
               " again; the first image with that name is packed",
           ptr);
      continue;
    }
    auto bytes = image_bytes(im);
    if (!bytes) return std::move(bytes).error();
    if (bytes->empty()) {
      warn(codes::BEM_PACK_TEXTURES_KEPT,
           "image " + std::to_string(i) + " is not stored in the file (a URI): texture " +
               std::to_string(t) + " is kept",
           ptr);
      continue;
    }
    auto st = pack_texture(t, static_cast<std::uint32_t>(i), *bytes, ptr);
    if (!st) return st;
  }
  return core::Ok{};
}

core::Result<std::vector<std::uint8_t>> ScenePacker::image_bytes(const scene::GltfImage& im) {
  if (!im.buffer_view) return std::vector<std::uint8_t>{};
  auto bytes = doc_.buffer_view(*im.buffer_view);
  if (!bytes) return std::move(bytes).error();
  return std::vector<std::uint8_t>(bytes->begin(), bytes->end());
}

std::size_t ScenePacker::data_channels(const Texture& tex, std::uint32_t format) {
  if (format == scene::texture_format::kR8 || format == scene::texture_format::kBC4) return 1;
  if (tex.semantic == "normal" &&
      (tex.normal_encoding == "xy-unorm" || format == scene::texture_format::kBC5))
    return 2;
  return 4;
}

core::Status ScenePacker::check_texture_format_names() const {
  for (const auto& [name, format] : options_.texture_formats) {
    if (name == "normal" || name == "color" || name == "linear") continue;
    std::string names;
    for (const Texture& t : model_.textures) {
      if (t.original_name == name) {
        names.clear();
        break;
      }
      names += (names.empty() ? "" : ", ") + ("\"" + t.original_name + "\"");
    }
    if (!names.empty() || model_.textures.empty())
      return core::error_at_pointer(codes::BEM_PACK_TEXTURE_FORMAT,
                                    "a texture format for \"" + name +
                                        "\", which is neither a texture of the template (" +
                                        (names.empty() ? std::string("none") : names) +
                                        ") nor a kind (normal, color, linear)",
                                    "/textures");
  }
  return core::Ok{};
}

std::uint32_t ScenePacker::edited_format(const Texture& tex) const {
  const auto& formats = options_.texture_formats;
  if (auto it = formats.find(tex.original_name); it != formats.end()) return it->second;
  const char* kind = tex.semantic == "normal" ? "normal" : tex.srgb ? "color" : "linear";
  if (auto it = formats.find(kind); it != formats.end()) return it->second;
  return tex.format;
}

core::Status ScenePacker::pack_dds(std::uint32_t t, std::uint32_t i,
                                   const std::vector<std::uint8_t>& file, const std::string& ptr) {
  const Texture& tex = model_.textures[t];
  auto dds = scene::parse_dds(file);
  if (!dds)
    return core::error_at_pointer(
        codes::BEM_PACK_TEXTURE,
        "texture " + std::to_string(t) + " (\"" + tex.original_name + "\"): " + dds.error().message,
        ptr);
  const bool srgb = dds->srgb.value_or(tex.srgb);
  if (srgb != tex.srgb)
    warn(codes::BEM_PACK_TEXTURE_SRGB,
         "the DDS image of texture " + std::to_string(t) + " (\"" + tex.original_name + "\") is " +
             (srgb ? "sRGB" : "linear") + " by its DXGI format; the template's is " +
             (tex.srgb ? "sRGB" : "linear") + ": the DDS's is kept",
         ptr);
  Json& tj = result_.content.manifest["textures"][t];
  tj["width"] = dds->width;
  tj["height"] = dds->height;
  tj["mips"] = dds->mips;
  tj["format"] = dds->format;
  tj["srgb"] = srgb;
  tj["payload"] = add_payload(std::move(dds->data));
  PackedTexture out{t,           i,          tex.original_name,
                    dds->format, dds->width, dds->height,
                    dds->mips,   true,       std::numeric_limits<double>::infinity()};
  out.dds = true;
  result_.textures.push_back(out);
  return core::Ok{};
}

core::Status ScenePacker::pack_texture(std::uint32_t t, std::uint32_t i,
                                       const std::vector<std::uint8_t>& png,
                                       const std::string& ptr) {
  const Texture& tex = model_.textures[t];
  if (scene::is_dds(png)) return pack_dds(t, i, png, ptr);
  auto image = scene::decode_image(png);
  if (!image) return core::error_at_pointer(codes::BEM_PACK_TEXTURE, image.error().message, ptr);
  // Unity stores the bottom row first (bem export flips to glTF's order).
  if (!options_.raw_axes) scene::flip_rows(*image);
  const std::size_t channels = data_channels(tex, tex.format);
  PackedTexture out{t,     i,  tex.original_name, tex.format, image->width, image->height, tex.mips,
                    false, 0.0};
  // Unchanged: the template's top mip decodes to the same data channels.
  if (tex.payload < result_.content.payloads.size() && image->width == tex.width &&
      image->height == tex.height) {
    auto original = scene::decode_top_mip(tex.format, tex.width, tex.height, tex.srgb,
                                          result_.content.payloads[tex.payload]);
    bool same = static_cast<bool>(original);
    for (std::size_t p = 0; same && p < image->pixels.size(); p += 4)
      for (std::size_t c = 0; c < channels; ++c)
        same = same && image->pixels[p + c] == original->pixels[p + c];
    if (same) {
      result_.textures.push_back(out);
      return core::Ok{};
    }
  }
  // Changed: encode, with as many mips as the new size allows up to the
  // template's count.
  std::uint32_t full = 1;
  for (std::uint32_t w = image->width, h = image->height; w > 1 || h > 1; ++full) {
    w = std::max<std::uint32_t>(1, w / 2);
    h = std::max<std::uint32_t>(1, h / 2);
  }
  const std::uint32_t mips = std::min(std::max<std::uint32_t>(tex.mips, 1), full);
  const std::uint32_t format = edited_format(tex);
  if (format == scene::texture_format::kR8 && tex.srgb)
    return core::error_at_pointer(
        codes::BEM_PACK_TEXTURE,
        "texture " + std::to_string(t) + " (\"" + tex.original_name +
            "\") is sRGB, and R8 cannot be (BEM §8): choose another format for it",
        ptr);
  auto chain = scene::encode_texture(format, *image, mips, tex.srgb);
  if (!chain)
    return core::error_at_pointer(codes::BEM_PACK_TEXTURE,
                                  "texture " + std::to_string(t) + " (\"" + tex.original_name +
                                      "\", " + scene::texture_format_name(format) +
                                      "): " + chain.error().message,
                                  ptr);
  auto back = scene::decode_top_mip(format, image->width, image->height, tex.srgb, *chain);
  if (back) {
    const std::size_t encoded_channels = data_channels(tex, format);
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t p = 0; p < image->pixels.size(); p += 4)
      for (std::size_t c = 0; c < encoded_channels; ++c, ++n) {
        const double d = double(image->pixels[p + c]) - double(back->pixels[p + c]);
        sum += d * d;
      }
    out.psnr_db = sum == 0 ? std::numeric_limits<double>::infinity()
                           : 10.0 * std::log10(255.0 * 255.0 * double(n) / sum);
  }
  Json& tj = result_.content.manifest["textures"][t];
  tj["width"] = image->width;
  tj["height"] = image->height;
  tj["mips"] = mips;
  tj["payload"] = add_payload(std::move(*chain));
  if (format != tex.format) {
    tj["format"] = format;
    // A two-channel normal map says so (§8: Android's installer needs it).
    if (tex.semantic == "normal" && format == scene::texture_format::kBC5)
      tj["normal_encoding"] = "xy-unorm";
    else if (tex.semantic == "normal" && tex.normal_encoding == "xy-unorm" &&
             format != scene::texture_format::kBC5)
      tj["normal_encoding"] = "xyz-unorm";
  }
  out.format = format;
  out.mips = mips;
  out.encoded = true;
  result_.textures.push_back(out);
  return core::Ok{};
}

}  // namespace charkit::bem::detail
