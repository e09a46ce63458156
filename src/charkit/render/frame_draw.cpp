// The character frame on the GPU (docs/render/render.md, "A frame"): the
// passes drawn with the Vulkan backend. Its stand-in without Vulkan is
// disabled/frame_draw.cpp.
#include "charkit/render/frame.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <numbers>
#include <string>

#include "charkit/core/half.h"
#include "charkit/gpu/error_codes.h"
#include "charkit/render/error_codes.h"
#include "charkit/render/passes.h"

#include "character_fs.spv.h"
#include "character_vs.spv.h"

namespace charkit::render {

namespace {

template <typename T>
void put(std::vector<std::uint8_t>& out, const T& v) {
  const auto* b = reinterpret_cast<const std::uint8_t*>(&v);
  out.insert(out.end(), b, b + sizeof v);
}

/// The frame's images: the targets of the passes, the light map, the white
/// and LUT textures and the model's textures.
struct Targets {
  gpu::ImageId hdr, m1, m2, nrm, ds, shadow, white, lut;
  std::vector<gpu::ImageId> textures;  ///< per model image (0 × 0 images: none)
};

core::Result<Targets> make_targets(gpu::Context& context, gpu::Scratch& own,
                                   const RenderModel& model, const FrameOptions& o) {
  Targets t;
  struct Wanted {
    gpu::ImageId* image;
    std::uint32_t width, height;
    gpu::ImageFormat format;
  };
  const Wanted wanted[] = {
      {&t.hdr, o.width, o.height, gpu::ImageFormat::kRgba16Float},
      {&t.m1, o.width, o.height, gpu::ImageFormat::kRgba8Unorm},
      {&t.m2, o.width, o.height, gpu::ImageFormat::kRgba8Unorm},
      {&t.nrm, o.width, o.height, gpu::ImageFormat::kRgba8Unorm},
      {&t.ds, o.width, o.height, gpu::ImageFormat::kDepth32Stencil8},
      {&t.shadow, o.shadow_map_size, o.shadow_map_size, gpu::ImageFormat::kDepth32},
      {&t.white, 1, 1, gpu::ImageFormat::kRgba8Unorm},
  };
  for (const Wanted& w : wanted) {
    auto image = own.image(w.width, w.height, w.format);
    if (!image) return std::move(image).error();
    *w.image = *image;
  }
  const std::uint8_t white_texel[4] = {255, 255, 255, 255};
  if (auto st = context.write_image(t.white, white_texel); !st) return std::move(st).error();
  // The LUT strip, or a 1 × 1 stand-in when the branch is off.
  const bool lut_on = !o.lut.empty();
  auto lut = own.image(lut_on ? 1024 : 1, lut_on ? 32 : 1, gpu::ImageFormat::kRgba16Float);
  if (!lut) return std::move(lut).error();
  t.lut = *lut;
  {
    std::vector<std::uint8_t> texels(lut_on ? 1024 * 32 * 8 : 8, 0);
    for (std::size_t i = 0; lut_on && i < o.lut.size(); ++i)
      for (std::size_t c = 0; c < 4; ++c) {
        const std::uint16_t h = core::float_to_half(o.lut[i][c]);
        std::memcpy(texels.data() + i * 8 + c * 2, &h, 2);
      }
    if (auto st = context.write_image(t.lut, texels); !st) return std::move(st).error();
  }
  t.textures.resize(model.images.size());
  for (std::size_t i = 0; i < model.images.size(); ++i) {
    const scene::RgbaImage& img = model.images[i];
    if (img.width == 0 || img.height == 0) continue;
    auto img_t = own.image(img.width, img.height, gpu::ImageFormat::kRgba8Unorm);
    if (!img_t) return std::move(img_t).error();
    if (auto st = context.write_image(*img_t, img.pixels); !st) return std::move(st).error();
    t.textures[i] = *img_t;
  }

  return t;
}

/// The frame's constant buffer (the layout character_vs/fs read).
std::vector<std::uint8_t> frame_constants(const RenderModel& model, const FrameOptions& o) {
  const float aspect = static_cast<float>(o.width) / static_cast<float>(o.height);
  const core::Mat4f vp = camera_view_projection(o.camera, aspect);
  const core::Mat4f prev =
      o.previous_camera ? camera_view_projection(*o.previous_camera, aspect) : vp;
  const core::Mat4f light = light_view_projection(model, o.light_direction);
  const core::Vec3f centre = core::scale(core::add(model.min, model.max), 0.5F);
  const float radius = std::max(core::length(core::sub(model.max, centre)), 1e-4F);
  const MotionEncoding motion;
  const bool lut_on = !o.lut.empty();
  std::vector<std::uint8_t> constants;
  put(constants, vp);
  put(constants, prev);
  put(constants, light);
  const core::Vec3f l = core::normalize(o.light_direction);
  put(constants, core::Vec4f{l[0], l[1], l[2], 0});
  put(constants, core::Vec4f{o.light_colour[0], o.light_colour[1], o.light_colour[2], 0});
  put(constants, core::Vec4f{o.ambient[0], o.ambient[1], o.ambient[2], 0});
  // Normal offset: 1.5 texels of the light map, in world units.
  const float offset = 1.5F * 2.0F * radius / static_cast<float>(o.shadow_map_size);
  put(constants, core::Vec4f{offset, o.shadow_strength, o.shadows ? 1.0F : 0.0F, 0});
  put(constants, core::Vec4f{0, 0, 1, 1});
  put(constants, core::Vec4f{o.exposure, o.shadow_colour.value_scale,
                             o.shadow_colour.saturation_scale, lut_on ? 1.0F : 0.0F});
  put(constants,
      core::Vec4f{o.previous_camera || o.motion ? 1.0F : 0.0F, motion.scale, motion.zero, 0});
  put(constants, core::Vec4f{o.camera.eye[0], o.camera.eye[1], o.camera.eye[2], 1});
  // The projection's [1][1]: the screen-coordinates outline's scale.
  put(constants,
      core::Vec4f{1.0F / std::tan(o.camera.fov_y_degrees * std::numbers::pi_v<float> / 360.0F), 0,
                  0, 0});

  return constants;
}

/// Each primitive's entry of frame.glsl's draws[]: the MToon outline and
/// UV animation (at the frame's time) that the push constants have no room
/// for; zeros without MToon.
std::vector<std::uint8_t> draw_data(const RenderModel& model, const FrameOptions& o) {
  std::vector<std::uint8_t> out;
  for (const RenderPrimitive& p : model.primitives) {
    static const MToonShading kNoMToon;
    const MToonShading& m = p.mtoon ? *p.mtoon : kNoMToon;
    put(out, core::Vec4f{m.outline_colour[0], m.outline_colour[1], m.outline_colour[2],
                         m.outline_lighting_mix});
    const float mode = m.outline_mode == MToonShading::OutlineMode::kScreen  ? 2.0F
                       : m.outline_mode == MToonShading::OutlineMode::kWorld ? 1.0F
                                                                             : 0.0F;
    put(out, core::Vec4f{m.outline_width, mode, 0, 0});
    // The offsets three-vrm accumulates from its update calls: speed × time
    // (the rotation in radians).
    const auto t = static_cast<float>(o.time);
    put(out, core::Vec4f{m.uv_scroll_x * t, m.uv_scroll_y * t, m.uv_rotation * t, 0});
  }
  return out;
}

/// One pipeline per pass, all from the table: face shadow, body, face main,
/// shadow classification, eye composite, transparent, outline.
core::Result<std::array<gpu::PipelineId, 7>> make_pipelines(gpu::Context& context) {
  const std::vector<gpu::VertexAttribute> attributes = {
      {0, 3, 0}, {1, 3, 12}, {2, 2, 24}, {3, 3, 32}};
  auto make = [&](PassId id) -> core::Result<gpu::PipelineId> {
    const PassDesc& p = pass(id);
    const bool depth_only = p.colour.empty();
    gpu::GraphicsPipelineDesc d = pipeline_desc(
        p, kCharacter_vsSpirv, depth_only ? std::span<const std::uint32_t>{} : kCharacter_fsSpirv,
        sizeof(RenderVertex), attributes, 112);
    // The frame constants and the per-primitive data; the textures of
    // character_fs.frag (bindings 2–9, 11) and the outline width texture the
    // vertex program reads (10). The depth-only pipeline has the same layout.
    d.storage_buffers = 2;
    d.textures = {gpu::Sampling::kLinear, gpu::Sampling::kNearest, gpu::Sampling::kNearest,
                  gpu::Sampling::kLinear, gpu::Sampling::kLinear,  gpu::Sampling::kLinear,
                  gpu::Sampling::kLinear, gpu::Sampling::kLinear,  gpu::Sampling::kLinear,
                  gpu::Sampling::kLinear};
    return context.create_graphics_pipeline(d);
  };
  std::array<gpu::PipelineId, 7> pipelines{};
  const PassId ids[7] = {
      PassId::kFaceShadow,   PassId::kBody,        PassId::kFaceMain, PassId::kShadowClassification,
      PassId::kEyeComposite, PassId::kTransparent, PassId::kOutline};
  for (int i = 0; i < 7; ++i) {
    auto p = make(ids[i]);
    if (!p) return std::move(p).error();
    pipelines[static_cast<std::size_t>(i)] = *p;
  }

  return pipelines;
}

/// Once the passes have drawn: the other attachments, depth, stencil and
/// light map read back, and the pixel counts.
core::Status read_back(gpu::Context& context, const Targets& t, Frame& frame) {
  for (auto [img, out] : {std::pair{t.m1, &frame.material1}, std::pair{t.m2, &frame.material2},
                          std::pair{t.nrm, &frame.normal}}) {
    auto bytes = context.read_image(img, gpu::ImageAspect::kColour);
    if (!bytes) return std::move(bytes).error();
    *out = std::move(*bytes);
  }
  auto stencil = context.read_image(t.ds, gpu::ImageAspect::kStencil);
  if (!stencil) return std::move(stencil).error();
  frame.stencil = std::move(*stencil);
  auto as_floats = [](const std::vector<std::uint8_t>& b) {
    std::vector<float> f(b.size() / 4);
    std::memcpy(f.data(), b.data(), f.size() * 4);
    return f;
  };
  auto depth = context.read_image(t.ds, gpu::ImageAspect::kDepth);
  if (!depth) return std::move(depth).error();
  frame.depth = as_floats(*depth);
  auto light_depth = context.read_image(t.shadow, gpu::ImageAspect::kDepth);
  if (!light_depth) return std::move(light_depth).error();
  frame.shadow = as_floats(*light_depth);

  FrameStats& s = frame.stats;
  s.pixels = std::uint64_t{frame.width} * frame.height;
  for (std::uint8_t v : frame.stencil) {
    s.character_pixels += (v & 0x80) != 0 ? 1 : 0;
    s.face_pixels += v == 0x84 ? 1 : 0;
  }
  for (float d : frame.shadow) s.shadow_map_pixels += d > 0.0F ? 1 : 0;
  return core::Ok{};
}

}  // namespace

core::Result<Frame> render_frame(gpu::Context& context, const RenderModel& model,
                                 const FrameOptions& o) {
  if (o.width == 0 || o.height == 0 || o.shadow_map_size == 0)
    return core::make_error(codes::RENDER_OPTION, "image and shadow-map sizes must be > 0");
  if (std::uint64_t{o.width} * o.height > kMaxFramePixels)
    return core::make_error(codes::RENDER_OPTION,
                            "the image is larger than the frame budget of 4096 x 4096 pixels");
  if (!o.lut.empty() && o.lut.size() != 1024 * 32)
    return core::make_error(codes::RENDER_OPTION, "the LUT strip must hold 1024 x 32 texels");
  gpu::Scratch own(context);
  auto targets = make_targets(context, own, model, o);
  if (!targets) return std::move(targets).error();
  const Targets& t = *targets;
  const std::vector<gpu::ImageId>& textures = t.textures;
  const std::vector<std::uint8_t> constants = frame_constants(model, o);
  auto frame_buffer = own.buffer(constants.data(), constants.size());
  if (!frame_buffer) return std::move(frame_buffer).error();
  const std::vector<std::uint8_t> per_draw = draw_data(model, o);
  auto draw_buffer = own.buffer(per_draw.data(), per_draw.size());
  if (!draw_buffer) return std::move(draw_buffer).error();
  auto pipelines = make_pipelines(context);
  if (!pipelines) return std::move(pipelines).error();
  const MotionEncoding motion;
  const std::uint32_t W = o.width, H = o.height;

  // Geometry, and the draws of each pass.
  struct Geometry {
    gpu::BufferId vertices, indices;
    std::uint32_t count;
  };
  std::vector<Geometry> geometry;
  for (const RenderPrimitive& p : model.primitives) {
    auto vb = own.buffer(p.vertices.data(), p.vertices.size() * sizeof(RenderVertex));
    if (!vb) return std::move(vb).error();
    auto ib = own.buffer(p.indices.data(), p.indices.size() * 4);
    if (!ib) return std::move(ib).error();
    geometry.push_back({*vb, *ib, static_cast<std::uint32_t>(p.indices.size())});
  }
  auto draw = [&](std::size_t i, gpu::PipelineId pipeline, std::uint32_t mode) {
    const RenderPrimitive& p = model.primitives[i];
    gpu::Draw d;
    d.pipeline = pipeline;
    d.vertices = geometry[i].vertices;
    d.indices = geometry[i].indices;
    d.count = geometry[i].count;
    put(d.push, p.base_colour);
    auto usable = [&](const std::optional<std::uint32_t>& image) {
      return image && *image < textures.size() && model.images[*image].width > 0;
    };
    const bool has_texture = usable(p.base_texture);
    const bool has_shade_texture = p.mtoon && usable(p.mtoon->shade_texture);
    const bool has_emissive_texture = p.mtoon && usable(p.mtoon->emissive_texture);
    const bool has_rim_texture = p.mtoon && usable(p.mtoon->rim_texture);
    const bool has_matcap_texture = p.mtoon && usable(p.mtoon->matcap_texture);
    const bool has_shift_texture = p.mtoon && usable(p.mtoon->shift_texture);
    // Without MToon, the shade texture's binding holds the metallic-roughness texture.
    const bool has_mr_texture = !p.mtoon && usable(p.metallic_roughness_texture);
    const bool has_outline_texture = p.mtoon && usable(p.mtoon->outline_width_texture);
    const bool uv_animated = p.mtoon && p.mtoon->uv_animated();
    const bool has_uv_mask = uv_animated && usable(p.mtoon->uv_mask_texture);
    // The flags of frame.glsl: textured, alpha mask, MToon, MToon's shade,
    // emissive, rim, matcap and shading shift textures, unlit, the glTF
    // metallic-roughness texture, single-sided, the outline width texture,
    // UV animation and its mask texture.
    const std::uint32_t flags = (has_texture ? 1U : 0U) | (p.alpha_mask ? 2U : 0U) |
                                (p.mtoon ? 4U : 0U) | (has_shade_texture ? 8U : 0U) |
                                (has_emissive_texture ? 16U : 0U) | (has_rim_texture ? 32U : 0U) |
                                (has_matcap_texture ? 64U : 0U) | (has_shift_texture ? 128U : 0U) |
                                (!p.mtoon && p.unlit ? 256U : 0U) | (has_mr_texture ? 512U : 0U) |
                                (p.double_sided ? 0U : 1024U) | (has_outline_texture ? 2048U : 0U) |
                                (uv_animated ? 4096U : 0U) | (has_uv_mask ? 8192U : 0U);
    put(d.push, mode);
    put(d.push, flags);
    put(d.push, p.alpha_cutoff);
    put(d.push, static_cast<std::uint32_t>(i));  // its entry of draws[]
    static const MToonShading kNoMToon;  // its values are pushed, and not read, without MToon
    const MToonShading& mtoon = p.mtoon ? *p.mtoon : kNoMToon;
    // Without MToon the first vector holds the glTF metallic and roughness.
    put(d.push, p.mtoon ? core::Vec4f{mtoon.shade_colour[0], mtoon.shade_colour[1],
                                      mtoon.shade_colour[2], mtoon.shade_from}
                        : core::Vec4f{p.metallic, p.roughness, 0, 0});
    put(d.push,
        core::Vec4f{mtoon.emissive[0], mtoon.emissive[1], mtoon.emissive[2], mtoon.shade_to});
    put(d.push, core::Vec4f{mtoon.rim_colour[0], mtoon.rim_colour[1], mtoon.rim_colour[2],
                            mtoon.rim_fresnel_power});
    put(d.push, core::Vec4f{mtoon.rim_lift, mtoon.rim_lighting_mix, mtoon.shift_scale, 0});
    put(d.push,
        core::Vec4f{mtoon.matcap_colour[0], mtoon.matcap_colour[1], mtoon.matcap_colour[2], 0});
    d.buffers = {*frame_buffer, *draw_buffer};
    // The light's pass draws into the shadow map: a stand-in in its slot.
    d.textures = {has_texture ? textures[*p.base_texture] : t.white,
                  mode == 5 ? t.white : t.shadow,
                  t.lut,
                  has_shade_texture ? textures[*p.mtoon->shade_texture]
                  : has_mr_texture  ? textures[*p.metallic_roughness_texture]
                                    : t.white,
                  has_emissive_texture ? textures[*p.mtoon->emissive_texture] : t.white,
                  has_rim_texture ? textures[*p.mtoon->rim_texture] : t.white,
                  has_matcap_texture ? textures[*p.mtoon->matcap_texture] : t.white,
                  has_shift_texture ? textures[*p.mtoon->shift_texture] : t.white,
                  has_outline_texture ? textures[*p.mtoon->outline_width_texture] : t.white,
                  has_uv_mask ? textures[*p.mtoon->uv_mask_texture] : t.white};
    return d;
  };
  Frame frame;
  frame.width = W;
  frame.height = H;
  frame.shadow_size = o.shadow_map_size;
  gpu::RenderPass shadow_pass;
  shadow_pass.depth = gpu::Attachment{t.shadow, true};
  gpu::RenderPass main;
  main.colour = {gpu::Attachment{t.hdr, true}, gpu::Attachment{t.m1, true},
                 gpu::Attachment{t.m2, true, {motion.zero, motion.zero, 0.0F, 0.0F}},
                 gpu::Attachment{t.nrm, true, {0.5F, 0.5F, 1.0F, 0.0F}}};
  main.depth = gpu::Attachment{t.ds, true};
  gpu::RenderPass eye, transparent;
  for (gpu::RenderPass* p : {&eye, &transparent}) {
    for (gpu::ImageId img : {t.hdr, t.m1, t.m2, t.nrm}) p->colour.push_back(gpu::Attachment{img});
    p->depth = gpu::Attachment{t.ds};
  }
  for (std::size_t i = 0; i < model.primitives.size(); ++i) {
    const PartKind k = model.primitives[i].kind;
    ++frame.stats.draws[static_cast<int>(k)];
    if ((k == PartKind::kBody || k == PartKind::kFace) && o.shadows)
      shadow_pass.draws.push_back(draw(i, (*pipelines)[0], 5));
    if (k == PartKind::kBody) main.draws.push_back(draw(i, (*pipelines)[1], 0));
  }
  for (std::size_t i = 0; i < model.primitives.size(); ++i)
    if (model.primitives[i].kind == PartKind::kFace)
      main.draws.push_back(draw(i, (*pipelines)[2], 1));
  // MToon outlines of the opaque parts, after them and before the
  // classification (an outline in front of the face leaves it unclassified).
  for (std::size_t i = 0; i < model.primitives.size() && o.outlines; ++i) {
    const RenderPrimitive& p = model.primitives[i];
    if ((p.kind == PartKind::kBody || p.kind == PartKind::kFace) && p.mtoon &&
        p.mtoon->has_outline()) {
      main.draws.push_back(draw(i, (*pipelines)[6], 6));
      ++frame.stats.outline_draws;
    }
  }
  for (std::size_t i = 0; i < model.primitives.size(); ++i)
    if (model.primitives[i].kind == PartKind::kFace)
      main.draws.push_back(draw(i, (*pipelines)[3], 2));
  for (std::size_t i = 0; i < model.primitives.size(); ++i) {
    if (model.primitives[i].kind == PartKind::kEye)
      eye.draws.push_back(draw(i, (*pipelines)[4], 3));
    if (model.primitives[i].kind == PartKind::kTransparent)
      transparent.draws.push_back(draw(i, (*pipelines)[5], 4));
  }
  const gpu::RenderPass first[2] = {shadow_pass, main};
  if (auto st = context.render(first); !st) return std::move(st).error();

  auto read_hdr = [&]() -> core::Result<std::vector<std::uint16_t>> {
    auto bytes = context.read_image(t.hdr, gpu::ImageAspect::kColour);
    if (!bytes) return std::move(bytes).error();
    std::vector<std::uint16_t> h(bytes->size() / 2);
    std::memcpy(h.data(), bytes->data(), bytes->size());
    return h;
  };
  auto changed = [](const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b) {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i + 3 < a.size(); i += 4)
      n += std::memcmp(&a[i], &b[i], 8) != 0 ? 1 : 0;
    return n;
  };
  auto before = read_hdr();
  if (!before) return std::move(before).error();
  for (auto [pass_ptr, counter] : {std::pair{&eye, &frame.stats.eye_pixels},
                                   std::pair{&transparent, &frame.stats.transparent_pixels}}) {
    if (pass_ptr->draws.empty()) continue;
    if (auto st = context.render(std::span(pass_ptr, 1)); !st) return std::move(st).error();
    auto after = read_hdr();
    if (!after) return std::move(after).error();
    *counter = changed(*before, *after);
    before = std::move(after);
  }
  frame.hdr = std::move(*before);
  if (auto st = read_back(context, t, frame); !st) return std::move(st).error();
  return frame;
}

}  // namespace charkit::render
