// The character frame (docs/render/render.md, "A frame").
#include "charkit/render/frame.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "charkit/core/half.h"
#include "charkit/gpu/error_codes.h"
#include "charkit/render/error_codes.h"
#include "charkit/render/passes.h"

namespace charkit::render {

namespace {

constexpr float kPi = 3.14159265358979F;

core::Mat4f look_at(const core::Vec3f& eye, const core::Vec3f& target, const core::Vec3f& up) {
  const core::Vec3f f = core::normalize(core::sub(target, eye));
  core::Vec3f s = core::cross(f, up);
  if (core::length(s) < 1e-6F) s = core::cross(f, core::Vec3f{0, 0, 1});
  s = core::normalize(s);
  const core::Vec3f u = core::cross(s, f);
  core::Mat4f m = core::identity4<float>();
  for (std::size_t c = 0; c < 3; ++c) {
    m[c * 4 + 0] = s[c];
    m[c * 4 + 1] = u[c];
    m[c * 4 + 2] = -f[c];
  }
  m[12] = -core::dot(s, eye);
  m[13] = -core::dot(u, eye);
  m[14] = core::dot(f, eye);
  return m;
}

/// Reversed-Z perspective with an infinite far plane, clip y up: depth =
/// near / −z_view (1 at the near plane, → 0 far away).
core::Mat4f perspective(float fov_y, float aspect, float near_plane) {
  const float f = 1.0F / std::tan(fov_y * 0.5F);
  core::Mat4f m{};
  m[0] = f / aspect;
  m[5] = f;
  m[11] = -1.0F;
  m[14] = near_plane;
  return m;
}

}  // namespace

core::Mat4f camera_view_projection(const Camera& c, float aspect) {
  return core::mul(perspective(c.fov_y_degrees * kPi / 180.0F, aspect, c.near_plane),
                   look_at(c.eye, c.target, c.up));
}

core::Mat4f light_view_projection(const RenderModel& model, const core::Vec3f& direction) {
  const core::Vec3f centre = core::scale(core::add(model.min, model.max), 0.5F);
  const float radius = std::max(core::length(core::sub(model.max, centre)), 1e-4F);
  const core::Vec3f l = core::normalize(direction);
  const core::Vec3f eye = core::add(centre, core::scale(l, 2.0F * radius));
  const core::Vec3f up = std::fabs(l[1]) > 0.99F ? core::Vec3f{0, 0, 1} : core::Vec3f{0, 1, 0};
  const core::Mat4f view = look_at(eye, centre, up);
  const float near_plane = radius * 0.5F, far_plane = radius * 3.5F;
  core::Mat4f proj{};
  proj[0] = 1.0F / radius;
  proj[5] = 1.0F / radius;
  // depth = (z_view + far) / (far − near): 1 at −near, 0 at −far.
  proj[10] = 1.0F / (far_plane - near_plane);
  proj[14] = far_plane / (far_plane - near_plane);
  proj[15] = 1.0F;
  return core::mul(proj, view);
}

Camera framing_camera(const RenderModel& model, float aspect, float yaw_degrees,
                      float fov_y_degrees) {
  Camera c;
  c.fov_y_degrees = fov_y_degrees;
  const core::Vec3f centre = core::scale(core::add(model.min, model.max), 0.5F);
  const float radius = std::max(core::length(core::sub(model.max, centre)), 1e-4F);
  const float half_fov = fov_y_degrees * kPi / 360.0F;
  // The bounding sphere fits the narrower of the two fields of view.
  const float fit = std::min(std::tan(half_fov), std::tan(half_fov) * aspect);
  const float distance = radius / std::sin(std::atan(fit)) * 1.02F;
  const float yaw = yaw_degrees * kPi / 180.0F;
  const core::Vec3f dir{std::sin(yaw) * model.facing_z, 0.0F, std::cos(yaw) * model.facing_z};
  c.target = centre;
  c.eye = core::add(centre, core::scale(dir, distance));
  c.near_plane = std::max(distance - radius * 1.5F, distance * 0.01F);
  return c;
}

scene::RgbaImage tone_map(const Frame& frame, float exposure) {
  scene::RgbaImage img;
  img.width = frame.width;
  img.height = frame.height;
  img.pixels.resize(std::size_t{frame.width} * frame.height * 4);
  auto encode = [](float linear) {
    const float c = std::clamp(linear, 0.0F, 1.0F);
    const float s = c <= 0.0031308F ? 12.92F * c : 1.055F * std::pow(c, 1.0F / 2.4F) - 0.055F;
    return static_cast<std::uint8_t>(std::lround(s * 255.0F));
  };
  for (std::size_t i = 0; i < img.pixels.size() / 4 && 4 * i + 3 < frame.hdr.size(); ++i) {
    const float a = std::clamp(core::half_to_float(frame.hdr[4 * i + 3]), 0.0F, 1.0F);
    for (std::size_t c = 0; c < 3; ++c) {
      float x = core::half_to_float(frame.hdr[4 * i + c]) * exposure;
      // Un-premultiply for display over nothing, then the ACES fit.
      if (a > 0.0F) x /= a;
      x = std::max(x, 0.0F);
      x = (x * (2.51F * x + 0.03F)) / (x * (2.43F * x + 0.59F) + 0.14F);
      img.pixels[4 * i + c] = encode(x);
    }
    img.pixels[4 * i + 3] = static_cast<std::uint8_t>(std::lround(a * 255.0F));
  }
  return img;
}

}  // namespace charkit::render
