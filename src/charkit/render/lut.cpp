// .cube LUTs for the eye pass (render/lut.h).
#include "charkit/render/lut.h"

#include <cmath>
#include <sstream>
#include <string>

#include "charkit/render/error_codes.h"
#include "charkit/scene/image.h"

namespace charkit::render {

core::Result<std::vector<Vec4>> parse_cube_lut(core::Bytes bytes) {
  constexpr std::size_t kLevels = 32, kEntries = kLevels * kLevels * kLevels;
  std::size_t line_no = 0;
  auto bad = [&](std::string why) {
    return core::make_error(codes::RENDER_LUT, std::move(why),
                            core::Location{std::nullopt, "", "line " + std::to_string(line_no)});
  };
  if (bytes.size() > (std::size_t{8} << 20)) return bad("a .cube LUT of 32 levels is under 8 MiB");
  std::stringstream in(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  std::string line;
  bool sized = false;
  std::vector<Vec4> cube;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::stringstream ls(line);
    std::string word;
    ls >> word;
    // .cube keywords (not error codes).
    if (word == "TITLE" || word == "DOMAIN_MIN" || word == "DOMAIN_MAX")  // not-an-error-code
      continue;
    if (word == "LUT_1D_SIZE")  // not-an-error-code
      return bad("a 1D LUT; the character LUT is a 3D LUT of size 32");
    if (word == "LUT_3D_SIZE") {  // not-an-error-code
      int size = 0;
      if (!(ls >> size) || size != static_cast<int>(kLevels)) return bad("LUT_3D_SIZE must be 32");
      sized = true;
      cube.reserve(kEntries);
      continue;
    }
    if (!sized) return bad("a LUT line before LUT_3D_SIZE");
    std::stringstream ns(line);
    float rgb[3];
    std::string extra;
    if (!(ns >> rgb[0] >> rgb[1] >> rgb[2]) || (ns >> extra) || !std::isfinite(rgb[0]) ||
        !std::isfinite(rgb[1]) || !std::isfinite(rgb[2]))
      return bad("a LUT line is three numbers");
    if (cube.size() == kEntries) return bad("more than 32768 LUT lines");
    cube.push_back({rgb[0], rgb[1], rgb[2], 1.0F});
  }
  if (!sized) return bad("no LUT_3D_SIZE line");
  if (cube.size() != kEntries)
    return bad("a 32-level LUT has 32768 lines, this one " + std::to_string(cube.size()));
  // The strip: slice b at x in [32 b, 32 b + 32), red along x, green along y.
  std::vector<Vec4> strip(1024 * 32);
  for (std::size_t b = 0; b < kLevels; ++b)
    for (std::size_t g = 0; g < kLevels; ++g)
      for (std::size_t r = 0; r < kLevels; ++r)
        strip[g * 1024 + b * 32 + r] = cube[r + kLevels * g + kLevels * kLevels * b];
  return strip;
}

core::Result<std::vector<Vec4>> parse_png_lut(core::Bytes png) {
  auto img = scene::decode_image(png, 1024);
  if (!img) return std::move(img).error();
  if (img->width != 1024 || img->height != 32)
    return core::make_error(codes::RENDER_LUT, "a LUT strip is 1024 x 32 pixels, this image " +
                                                   std::to_string(img->width) + " x " +
                                                   std::to_string(img->height));
  std::vector<Vec4> strip(1024 * 32);
  for (std::size_t i = 0; i < strip.size(); ++i)
    for (std::size_t c = 0; c < 4; ++c)
      strip[i][c] = static_cast<float>(img->pixels[4 * i + c]) / 255.0F;
  return strip;
}

std::string identity_cube_lut() {
  std::string out = "TITLE \"identity\"\nLUT_3D_SIZE 32\n";
  char line[64];
  for (int b = 0; b < 32; ++b)
    for (int g = 0; g < 32; ++g)
      for (int r = 0; r < 32; ++r) {
        std::snprintf(line, sizeof line, "%.6f %.6f %.6f\n", r / 31.0, g / 31.0, b / 31.0);
        out += line;
      }
  return out;
}

}  // namespace charkit::render
