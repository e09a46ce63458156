#include "charkit/render/shading.h"

#include <algorithm>
#include <cmath>

namespace charkit::render {

namespace {

float saturate(float x) {
  return std::clamp(x, 0.0F, 1.0F);
}

Vec4 transform(const Mat4& m, const Vec3& p) {
  Vec4 r{};
  for (std::size_t row = 0; row < 4; ++row)
    r[row] = m[row] * p[0] + m[4 + row] * p[1] + m[8 + row] * p[2] + m[12 + row];
  return r;
}

}  // namespace

float pcf9(const ShadowMap& map, const Vec3& position, const Vec3& normal, const PcfParams& p) {
  if (map.size == 0 || map.depth.size() < std::size_t{map.size} * map.size) return 1.0F;
  const Vec3 offset{position[0] + normal[0] * p.normal_offset,
                    position[1] + normal[1] * p.normal_offset,
                    position[2] + normal[2] * p.normal_offset};
  const Vec4 clip = transform(p.light_view_projection, offset);
  const float w = clip[3] != 0.0F ? clip[3] : 1.0F;
  const float depth = clip[2] / w;
  // NDC x, y in [−1, 1] → [0, 1] (v down), then into the sub-region.
  const float u = p.region[0] + (clip[0] / w * 0.5F + 0.5F) * p.region[2];
  const float v = p.region[1] + (clip[1] / w * -0.5F + 0.5F) * p.region[3];
  const float texel = 1.0F / static_cast<float>(map.size);
  const float r2 = std::sqrt(2.0F);
  const float taps[9][2] = {{0, 0},  {1, 1},   {-1, 1}, {1, -1}, {-1, -1},
                            {r2, 0}, {-r2, 0}, {0, r2}, {0, -r2}};
  const float cr = std::cos(p.rotation);
  const float sr = std::sin(p.rotation);
  float lit = 0.0F;
  for (const auto& t : taps) {
    // Rotated by the perturbation angle (0: the taps as listed).
    const float ox = t[0] * cr - t[1] * sr;
    const float oy = t[0] * sr + t[1] * cr;
    const float tu = u + ox * texel;
    const float tv = v + oy * texel;
    const auto last = static_cast<float>(map.size - 1);
    const auto x = static_cast<std::size_t>(
        std::clamp(std::floor(tu * static_cast<float>(map.size)), 0.0F, last));
    const auto y = static_cast<std::size_t>(
        std::clamp(std::floor(tv * static_cast<float>(map.size)), 0.0F, last));
    const float stored = map.depth[y * map.size + x];
    const bool pass = p.greater_equal ? depth >= stored : depth <= stored;
    lit += pass ? 1.0F : 0.0F;
  }
  return kPcfWeight * lit;
}

std::uint32_t cascade_level(const Vec3& position, const CascadeSpheres& spheres) {
  for (std::uint32_t i = 0; i < 4; ++i) {
    const Vec4& s = spheres[i];
    const float dx = position[0] - s[0];
    const float dy = position[1] - s[1];
    const float dz = position[2] - s[2];
    if (dx * dx + dy * dy + dz * dz < s[3]) return i;
  }
  return 4;
}

float cascade_rotation(const Vec2& pixel) {
  const float a = 0.06711056F * pixel[0] + 0.00583715F * pixel[1];
  const float f = 52.9829189F * (a - std::floor(a));
  return 6.2831853F * (f - std::floor(f));
}

float shadow_visibility(float pass_rate, float occlusion, float strength, bool enabled) {
  if (!enabled) return 1.0F;
  return 1.0F - strength * (1.0F - pass_rate * occlusion);
}

Vec3 lut_shape(const Vec3& colour, float exposure) {
  Vec3 r{};
  for (std::size_t i = 0; i < 3; ++i)
    r[i] = saturate(std::log2(colour[i] * exposure * 5.555556F + 0.047996F) * 0.0735F + 0.386036F);
  return r;
}

Vec3 lut_unshape(const Vec3& shaped, float exposure) {
  Vec3 r{};
  for (std::size_t i = 0; i < 3; ++i)
    r[i] = (std::exp2((shaped[i] - 0.386036F) / 0.0735F) - 0.047996F) / (5.555556F * exposure);
  return r;
}

void fill_identity_lut(std::span<Vec4> texels, std::uint32_t slice_axis) {
  constexpr std::uint32_t n = LutStrip::kLevels;
  if (texels.size() < std::size_t{n} * n * n) return;
  const std::uint32_t a = slice_axis == 0 ? 1 : 0;  // the slice's x axis
  const std::uint32_t b = slice_axis == 2 ? 1 : 2;  // the slice's y axis
  for (std::uint32_t s = 0; s < n; ++s)
    for (std::uint32_t y = 0; y < n; ++y)
      for (std::uint32_t x = 0; x < n; ++x) {
        Vec4 t{0, 0, 0, 1};
        t[slice_axis] = static_cast<float>(s) / (n - 1);
        t[a] = static_cast<float>(x) / (n - 1);
        t[b] = static_cast<float>(y) / (n - 1);
        texels[std::size_t{y} * n * n + s * n + x] = t;
      }
}

Vec3 lut_sample(const LutStrip& lut, const Vec3& shaped) {
  constexpr std::uint32_t n = LutStrip::kLevels;
  const std::uint32_t axis = std::min<std::uint32_t>(lut.slice_axis, 2);
  const std::uint32_t a = axis == 0 ? 1 : 0;
  const std::uint32_t b = axis == 2 ? 1 : 2;
  if (lut.texels.size() < std::size_t{n} * n * n) return shaped;
  // Level coordinates in [0, 31]: the cube's texel centres.
  auto level = [](float c) { return saturate(c) * static_cast<float>(n - 1); };
  const float fs = level(shaped[axis]);
  const float fx = level(shaped[a]);
  const float fy = level(shaped[b]);
  const auto s0 = static_cast<std::uint32_t>(std::floor(fs));
  const std::uint32_t s1 = std::min(s0 + 1, n - 1);
  const float ts = fs - static_cast<float>(s0);
  auto bilinear = [&](std::uint32_t s) {
    const auto x0 = static_cast<std::uint32_t>(std::floor(fx));
    const auto y0 = static_cast<std::uint32_t>(std::floor(fy));
    const std::uint32_t x1 = std::min(x0 + 1, n - 1);
    const std::uint32_t y1 = std::min(y0 + 1, n - 1);
    const float tx = fx - static_cast<float>(x0);
    const float ty = fy - static_cast<float>(y0);
    auto at = [&](std::uint32_t x, std::uint32_t y) {
      return lut.texels[std::size_t{y} * n * n + s * n + x];
    };
    Vec3 r{};
    for (std::size_t c = 0; c < 3; ++c) {
      const float top = at(x0, y0)[c] + (at(x1, y0)[c] - at(x0, y0)[c]) * tx;
      const float bottom = at(x0, y1)[c] + (at(x1, y1)[c] - at(x0, y1)[c]) * tx;
      r[c] = top + (bottom - top) * ty;
    }
    return r;
  };
  const Vec3 lo = bilinear(s0);
  const Vec3 hi = bilinear(s1);
  return {lo[0] + (hi[0] - lo[0]) * ts, lo[1] + (hi[1] - lo[1]) * ts, lo[2] + (hi[2] - lo[2]) * ts};
}

Vec2 encode_motion(const Vec4& clip_now, const Vec4& clip_before, const MotionEncoding& e) {
  const float wn = clip_now[3] != 0.0F ? clip_now[3] : 1.0F;
  const float wb = clip_before[3] != 0.0F ? clip_before[3] : 1.0F;
  const float d[2] = {(clip_now[0] / wn - clip_before[0] / wb) * 0.5F,
                      (clip_now[1] / wn - clip_before[1] / wb) * -0.5F};
  Vec2 r{};
  for (std::size_t i = 0; i < 2; ++i) {
    const float s = std::copysign(std::sqrt(std::fabs(d[i])), d[i]);
    r[i] = saturate(s * e.scale + e.zero);
  }
  return r;
}

Vec2 decode_motion(const Vec2& rg, const MotionEncoding& e) {
  Vec2 d{};
  for (std::size_t i = 0; i < 2; ++i) {
    const float s = (rg[i] - e.zero) / e.scale;
    d[i] = std::copysign(s * s, s);
  }
  return d;
}

Vec3 rgb_to_hsv(const Vec3& c) {
  const float mx = std::max({c[0], c[1], c[2]});
  const float mn = std::min({c[0], c[1], c[2]});
  const float chroma = mx - mn;
  float h = 0.0F;
  if (chroma > 0.0F) {
    if (mx == c[0])
      h = (c[1] - c[2]) / chroma;
    else if (mx == c[1])
      h = (c[2] - c[0]) / chroma + 2.0F;
    else
      h = (c[0] - c[1]) / chroma + 4.0F;
    h /= 6.0F;
    if (h < 0.0F) h += 1.0F;
  }
  const float s = mx > 0.0F ? chroma / mx : 0.0F;
  return {h, s, mx};
}

Vec3 hsv_to_rgb(const Vec3& hsv) {
  const float h6 = (hsv[0] - std::floor(hsv[0])) * 6.0F;
  const float c = hsv[2] * hsv[1];
  const float x = c * (1.0F - std::fabs(std::fmod(h6, 2.0F) - 1.0F));
  const float m = hsv[2] - c;
  Vec3 r{};
  switch (static_cast<int>(h6) % 6) {
    case 0:
      r = {c, x, 0};
      break;
    case 1:
      r = {x, c, 0};
      break;
    case 2:
      r = {0, c, x};
      break;
    case 3:
      r = {0, x, c};
      break;
    case 4:
      r = {x, 0, c};
      break;
    default:
      r = {c, 0, x};
      break;
  }
  return {r[0] + m, r[1] + m, r[2] + m};
}

Vec3 shadow_colour(const Vec3& base, const ShadowColourParams& p) {
  const Vec3 hsv = rgb_to_hsv(base);
  return hsv_to_rgb({hsv[0], saturate(hsv[1] * p.saturation_scale), hsv[2] * p.value_scale});
}

}  // namespace charkit::render
