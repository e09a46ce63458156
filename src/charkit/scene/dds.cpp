#include "charkit/scene/dds.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "charkit/scene/error_codes.h"
#include "charkit/scene/texture_decode.h"

namespace charkit::scene {
namespace {

namespace tf = texture_format;

core::Error dds_error(const std::string& message) {
  return core::make_error(codes::SCENE_DDS, "DDS: " + message);
}

std::uint32_t u32(core::Bytes b, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

constexpr std::uint32_t fourcc(const char (&s)[5]) {
  return std::uint32_t(std::uint8_t(s[0])) | std::uint32_t(std::uint8_t(s[1])) << 8 |
         std::uint32_t(std::uint8_t(s[2])) << 16 | std::uint32_t(std::uint8_t(s[3])) << 24;
}

// DDS_PIXELFORMAT flags and DDS_HEADER caps (Microsoft's DDS reference).
constexpr std::uint32_t kDdpfAlphaPixels = 0x1, kDdpfFourCC = 0x4, kDdpfRgb = 0x40,
                        kDdpfLuminance = 0x20000;
constexpr std::uint32_t kCaps2Cubemap = 0x200, kCaps2Volume = 0x200000;
constexpr std::size_t kHeader = 4 + 124, kDx10 = 20;

struct Mapped {
  std::uint32_t format = 0;
  std::optional<bool> srgb;
  bool swizzle = false;
};

std::optional<Mapped> from_dxgi(std::uint32_t dxgi) {
  switch (dxgi) {
    case 28:
      return Mapped{tf::kRGBA32, false, false};  // R8G8B8A8_UNORM
    case 29:
      return Mapped{tf::kRGBA32, true, false};  // R8G8B8A8_UNORM_SRGB
    case 87:
      return Mapped{tf::kRGBA32, false, true};  // B8G8R8A8_UNORM
    case 91:
      return Mapped{tf::kRGBA32, true, true};  // B8G8R8A8_UNORM_SRGB
    case 61:
      return Mapped{tf::kR8, false, false};  // R8_UNORM
    case 71:
      return Mapped{tf::kBC1, false, false};  // BC1_UNORM
    case 72:
      return Mapped{tf::kBC1, true, false};  // BC1_UNORM_SRGB
    case 77:
      return Mapped{tf::kBC3, false, false};  // BC3_UNORM
    case 78:
      return Mapped{tf::kBC3, true, false};  // BC3_UNORM_SRGB
    case 80:
      return Mapped{tf::kBC4, false, false};  // BC4_UNORM
    case 83:
      return Mapped{tf::kBC5, false, false};  // BC5_UNORM
    case 98:
      return Mapped{tf::kBC7, false, false};  // BC7_UNORM
    case 99:
      return Mapped{tf::kBC7, true, false};  // BC7_UNORM_SRGB
    default:
      return std::nullopt;
  }
}

}  // namespace

bool is_dds(core::Bytes file) {
  return file.size() >= 4 && std::memcmp(file.data(), "DDS ", 4) == 0;
}

core::Result<DdsTexture> parse_dds(core::Bytes file) {
  if (!is_dds(file)) return dds_error("no \"DDS \" magic at offset 0");
  if (file.size() < kHeader) return dds_error("the 124-byte header ends early");
  if (u32(file, 4) != 124) return dds_error("header size at offset 4 is not 124");
  DdsTexture out;
  out.height = u32(file, 12);
  out.width = u32(file, 16);
  const std::uint32_t depth = u32(file, 24);
  const std::uint32_t mips = u32(file, 28);
  if (u32(file, 76) != 32) return dds_error("pixel format size at offset 76 is not 32");
  const std::uint32_t pf_flags = u32(file, 80), cc = u32(file, 84), bits = u32(file, 88);
  const std::uint32_t rmask = u32(file, 92), gmask = u32(file, 96), bmask = u32(file, 100),
                      amask = u32(file, 104);
  const std::uint32_t caps2 = u32(file, 112);
  if ((caps2 & (kCaps2Cubemap | kCaps2Volume)) != 0 || depth > 1)
    return dds_error("a cube map or volume texture (offset 112), not one 2-D texture");
  std::size_t data_at = kHeader;
  std::optional<Mapped> mapped;
  if ((pf_flags & kDdpfFourCC) != 0 && cc == fourcc("DX10")) {
    if (file.size() < kHeader + kDx10) return dds_error("the DX10 header ends early");
    const std::uint32_t dxgi = u32(file, kHeader);
    const std::uint32_t dimension = u32(file, kHeader + 4);
    const std::uint32_t misc = u32(file, kHeader + 8);
    const std::uint32_t array = u32(file, kHeader + 12);
    if (dimension != 3 || (misc & 0x4) != 0 || array > 1)
      return dds_error("the DX10 header (offset 128) is not one 2-D texture");
    mapped = from_dxgi(dxgi);
    if (!mapped)
      return dds_error("DXGI format " + std::to_string(dxgi) +
                       " (offset 128) is not a format BEM stores (§8)");
    data_at += kDx10;
  } else if ((pf_flags & kDdpfFourCC) != 0) {
    if (cc == fourcc("DXT1"))
      mapped = Mapped{tf::kBC1, std::nullopt, false};
    else if (cc == fourcc("DXT5"))
      mapped = Mapped{tf::kBC3, std::nullopt, false};
    else if (cc == fourcc("ATI1") || cc == fourcc("BC4U"))
      mapped = Mapped{tf::kBC4, std::nullopt, false};
    else if (cc == fourcc("ATI2") || cc == fourcc("BC5U"))
      mapped = Mapped{tf::kBC5, std::nullopt, false};
    else
      return dds_error("FourCC at offset 84 is not DXT1, DXT5, ATI1, BC4U, ATI2, BC5U or DX10");
  } else if ((pf_flags & kDdpfRgb) != 0 && bits == 32 && (pf_flags & kDdpfAlphaPixels) != 0 &&
             amask == 0xFF000000u && gmask == 0x0000FF00u &&
             ((rmask == 0xFFu && bmask == 0xFF0000u) || (rmask == 0xFF0000u && bmask == 0xFFu))) {
    mapped = Mapped{tf::kRGBA32, std::nullopt, rmask == 0xFF0000u};
  } else if ((pf_flags & (kDdpfLuminance | kDdpfRgb)) != 0 && bits == 8 && rmask == 0xFFu) {
    mapped = Mapped{tf::kR8, std::nullopt, false};
  } else {
    return dds_error("the pixel format at offset 76 is not one BEM stores (§8)");
  }
  out.format = mapped->format;
  out.srgb = mapped->srgb;
  out.swizzled = mapped->swizzle;
  out.mips = mips == 0 ? 1 : mips;
  if (out.width < 1 || out.width > 32768 || out.height < 1 || out.height > 32768)
    return dds_error(std::to_string(out.width) + "x" + std::to_string(out.height) +
                     " is outside 1..32768 (§8)");
  if (out.mips > 16) return dds_error(std::to_string(out.mips) + " mips; §8 allows 16");
  std::uint64_t chain = 0;
  for (std::uint32_t i = 0; i < out.mips; ++i) {
    const std::uint32_t w = std::max<std::uint32_t>(1, out.width >> i);
    const std::uint32_t h = std::max<std::uint32_t>(1, out.height >> i);
    chain += *top_mip_bytes(out.format, w, h);
  }
  if (file.size() - data_at < chain)
    return dds_error("the mip chain needs " + std::to_string(chain) + " bytes after offset " +
                     std::to_string(data_at) + "; the file has " +
                     std::to_string(file.size() - data_at));
  out.data.assign(file.begin() + static_cast<std::ptrdiff_t>(data_at),
                  file.begin() + static_cast<std::ptrdiff_t>(data_at + chain));
  if (out.swizzled)
    for (std::size_t p = 0; p + 3 < out.data.size(); p += 4)
      std::swap(out.data[p], out.data[p + 2]);
  return out;
}

}  // namespace charkit::scene
