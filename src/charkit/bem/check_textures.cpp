// §8 textures and §7/§9 texture reference lists.
#include <map>
#include <set>

#include "charkit/bem/detail/context.h"
#include "charkit/bem/detail/texture_size.h"
#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {
namespace {

using core::json_pointer_join;

constexpr std::uint64_t kMiB = 1024ull * 1024ull;
constexpr std::uint64_t kTextureLimitV10 = 64 * kMiB;   // §11: 1.0 / 1.1
constexpr std::uint64_t kTextureLimitV12 = 256 * kMiB;  // §11: 1.2+

std::string format_list() {
  return "4, 10, 12, 25, 26, 27, 48, 49, 50, 63";
}

void check_one_texture(Context& ctx, const Json& tex, const std::string& ptr, TextureFacts& facts) {
  if (!ctx.expect_object(tex, ptr, "§8")) return;
  bool ok = true;
  auto width = ctx.get_u32(tex, "width", ptr, true, 1, 32768, "§8");
  auto height = ctx.get_u32(tex, "height", ptr, true, 1, 32768, "§8");
  auto mips = ctx.get_u32(tex, "mips", ptr, true, 1, 16, "§8");
  auto format = ctx.get_u32(tex, "format", ptr, true, 0, 0xFFFFFFFFu, "§8");
  auto srgb = ctx.get_bool(tex, "srgb", ptr, true, "§8");
  auto name = ctx.get_string(tex, "original_name", ptr, true, 256, "§8");
  auto payload = ctx.get_u32(tex, "payload", ptr, true, 0, 0xFFFFFFFFu, "§8");
  ok = width && height && mips && format && srgb && name && payload;

  if (format && !is_texture_format(*format)) {
    ctx.error(codes::BEM_TEXTURE_FORMAT, "§8", json_pointer_join(ptr, "format"),
              "texture format " + std::to_string(*format) + (*format == 24 ? " (BC6H)" : "") +
                  " is not supported; allowed Unity TextureFormat values: " + format_list());
    format.reset();
    ok = false;
  }
  if (name && name->empty()) {
    ctx.error(codes::BEM_STRING_LENGTH, "§8", json_pointer_join(ptr, "original_name"),
              "\"original_name\" is empty; it must be the full name of the replaced texture");
    ok = false;
  }
  // §8: R8 holds linear data only.
  if (format && *format == 63 && srgb && *srgb) {
    ctx.error(codes::BEM_TEXTURE_SRGB, "§8", json_pointer_join(ptr, "srgb"),
              "R8 textures (format 63) must have \"srgb\": false");
    ok = false;
  }
  if (format && width && height) {
    TextureLayout l = texture_layout(*format);
    // §8: BC formats need width and height multiples of 4.
    if (l.bc && (*width % 4 != 0 || *height % 4 != 0)) {
      ctx.error(codes::BEM_TEXTURE_BLOCK_ALIGN, "§8", ptr,
                "BC texture is " + std::to_string(*width) + "x" + std::to_string(*height) +
                    "; BC formats need width and height that are multiples of 4");
      ok = false;
    }
  }
  if (width && height && mips) {
    // §8 / Q13: a chain longer than the one down to 1×1 is rejected.
    std::uint32_t full = full_mip_count(*width, *height);
    if (*mips > full) {
      ctx.error(codes::BEM_TEXTURE_MIPS, "§8", json_pointer_join(ptr, "mips"),
                "texture declares " + std::to_string(*mips) + " mip levels but a " +
                    std::to_string(*width) + "x" + std::to_string(*height) +
                    " texture has at most " + std::to_string(full));
      ok = false;
    }
  }

  // Optional semantic and normal encoding (§8; Q13: only "normal" is known).
  bool is_normal = false;
  if (auto sem = ctx.get_string(tex, "semantic", ptr, false, 256, "§8")) {
    if (*sem == "normal") {
      is_normal = true;
    } else {
      ctx.error(codes::BEM_TEXTURE_SEMANTIC, "§8", json_pointer_join(ptr, "semantic"),
                "texture semantic \"" + sem->substr(0, 64) +
                    "\" is unknown; the only semantic is \"normal\" (omit the field for colour "
                    "or data textures)");
      ok = false;
    }
  }
  if (auto enc = ctx.get_string(tex, "normal_encoding", ptr, false, 256, "§8")) {
    if (*enc != "xy-unorm" && *enc != "xyz-unorm") {
      ctx.error(codes::BEM_TEXTURE_NORMAL_ENCODING, "§8", json_pointer_join(ptr, "normal_encoding"),
                "\"normal_encoding\" is \"" + enc->substr(0, 64) +
                    "\"; allowed \"xy-unorm\" or \"xyz-unorm\"");
      ok = false;
    } else if (!is_normal) {
      ctx.warning(codes::BEM_TEXTURE_NORMAL_ENCODING_UNUSED, "§8",
                  json_pointer_join(ptr, "normal_encoding"),
                  "\"normal_encoding\" is set but \"semantic\" is not \"normal\"; it is ignored");
    }
  } else if (is_normal && !tex.contains("normal_encoding")) {
    ctx.warning(codes::BEM_TEXTURE_NORMAL_ENCODING_MISSING, "§8", ptr,
                "normal map without \"normal_encoding\"; Android installs need it to convert the "
                "texture (\"xy-unorm\" or \"xyz-unorm\")");
  }

  if (name) facts.original_name = *name;

  // Payload: exactly the full declared mip chain (§8), within the §11 per-texture limit.
  if (payload && format && width && height && mips) {
    std::uint64_t bytes = texture_chain_bytes(*format, *width, *height, *mips);
    std::string pptr = json_pointer_join(ptr, "payload");
    if (bytes > kTextureLimitV12) {
      ctx.error(codes::BEM_TEXTURE_TOO_LARGE, "§11", ptr,
                "texture needs " + std::to_string(bytes) +
                    " bytes with its mip chain; a single texture may use at most 256 MiB");
      ok = false;
      ctx.use_payload(*payload, 0, ~0ull, PayloadUse{PayloadRole::kTexture, pptr});
    } else {
      if (bytes > kTextureLimitV10)
        ctx.need_minor(2, "a texture larger than 64 MiB (" + std::to_string(bytes) + " bytes)", ptr,
                       "§11");
      if (!ctx.use_payload(*payload, bytes, bytes, PayloadUse{PayloadRole::kTexture, pptr}))
        ok = false;
    }
  } else if (payload) {
    // The size is unknown, but the reference still has to exist.
    ctx.use_payload(*payload, 0, ~0ull,
                    PayloadUse{PayloadRole::kTexture, json_pointer_join(ptr, "payload")});
  }
  facts.valid = ok;
}

}  // namespace

void check_textures(Context& ctx) {
  // §3: at most 4096 textures.
  const Json* list = ctx.get_array(ctx.manifest, "textures", "", true, 0, 4096, "§8");
  if (!list) return;
  ctx.textures.assign(list->size(), TextureFacts{});
  for (std::size_t i = 0; i < list->size(); ++i)
    check_one_texture(ctx, (*list)[i], json_pointer_join("/textures", i), ctx.textures[i]);
}

void check_texture_list(Context& ctx, const Json& list, const std::string& ptr) {
  if (!list.is_array()) {
    ctx.error(codes::BEM_FIELD_TYPE, "§7", ptr,
              std::string("\"textures\" must be an array, found ") + core::json_type_name(list));
    return;
  }
  // Q10: an empty list is allowed (the draw keeps the material's own textures).
  std::set<std::uint32_t> seen_textures;
  std::set<std::string> seen_slots;
  std::map<std::string, std::string> replaced;  // original_name -> pointer of the first entry
  for (const auto& [e, eptr, i] : elements(list, ptr)) {
    std::string original;
    if (auto idx = core::json_uint32(e)) {
      if (*idx >= ctx.textures.size()) {
        ctx.error(codes::BEM_TEXTURE_INDEX, "§7", eptr,
                  "texture " + std::to_string(*idx) + " does not exist (the package has " +
                      std::to_string(ctx.textures.size()) + " textures)");
        continue;
      }
      if (!seen_textures.insert(*idx).second) {
        ctx.error(codes::BEM_TEXTURE_DUPLICATE, "§7", eptr,
                  "texture " + std::to_string(*idx) + " is referenced twice in the same list");
        continue;
      }
      if (ctx.textures[*idx].valid) original = ctx.textures[*idx].original_name;
    } else if (e.is_object()) {
      // §9: {"slot": id}, capability texture-slots (1.2+).
      ctx.use_capability("texture-slots", eptr);
      auto slot = ctx.get_string(e, "slot", eptr, true, 256, "§9");
      if (!slot) continue;
      if (!ctx.texture_slot_ids.count(*slot)) {
        ctx.error(
            codes::BEM_TEXTURE_SLOT_UNKNOWN, "§9", json_pointer_join(eptr, "slot"),
            "texture slot \"" + slot->substr(0, 96) + "\" is not declared in \"texture_slots\"");
        continue;
      }
      if (!seen_slots.insert(*slot).second) {
        ctx.error(codes::BEM_TEXTURE_DUPLICATE, "§9", eptr,
                  "texture slot \"" + *slot + "\" is referenced twice in the same list");
        continue;
      }
      auto it = ctx.texture_slot_original.find(*slot);
      if (it != ctx.texture_slot_original.end()) original = it->second;
    } else {
      ctx.error(
          codes::BEM_FIELD_TYPE, "§7", eptr,
          std::string("a texture reference must be a texture index or {\"slot\": id}, found ") +
              core::json_type_name(e));
      continue;
    }
    // §7/§9: no two entries may replace the same original texture.
    if (original.empty()) continue;
    auto [it, inserted] = replaced.emplace(original, eptr);
    if (!inserted)
      ctx.error(codes::BEM_TEXTURE_ORIGINAL_CONFLICT, "§7", eptr,
                "this entry replaces original texture \"" + original.substr(0, 256) + "\", which " +
                    it->second + " already replaces");
  }
}

}  // namespace charkit::bem
