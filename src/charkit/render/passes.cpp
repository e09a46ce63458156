// The pass table (docs/render/passes.md).
#include "charkit/render/passes.h"

#include <array>
#include <sstream>

namespace charkit::render {

namespace {

using gpu::BlendFactor;
using gpu::BlendState;
using gpu::CompareOp;
using gpu::StencilOp;

const std::array<TargetDesc, 6> kTargets = {{
    {Target::kHdr, "hdr", gpu::ImageFormat::kRgba16Float, "HDR colour; A = 1 where shaded"},
    {Target::kMaterial1, "material1", gpu::ImageFormat::kRgba8Unorm,
     "first material map: RGB the square-root-compressed control value, A = 0 (face)"},
    {Target::kMaterial2, "material2", gpu::ImageFormat::kRgba8Unorm,
     "second material map: RG signed-sqrt screen motion (zero 127/255), B flags/255, A branch"},
    {Target::kNormal, "normal", gpu::ImageFormat::kRgba8Unorm, "RGB = 0.5·n + 0.5, A = 1"},
    {Target::kDepthStencil, "depth", gpu::ImageFormat::kDepth32Stencil8,
     "reversed-Z depth (clear 0, GreaterEqual) and the 8-bit stencil classification"},
    {Target::kShadowDepth, "shadow", gpu::ImageFormat::kDepth32,
     "the light's reversed-Z depth (face shadow geometry), sampled by the 9-tap PCF"},
}};

BlendState written() {
  return BlendState{};  // blending off, RGBA written
}
BlendState kept() {
  BlendState b;
  b.write_mask = 0;
  return b;
}
BlendState premultiplied() {
  BlendState b;
  b.enabled = true;
  b.src_colour = BlendFactor::kOne;
  b.dst_colour = BlendFactor::kOneMinusSrcAlpha;
  b.src_alpha = BlendFactor::kOne;
  b.dst_alpha = BlendFactor::kOneMinusSrcAlpha;
  return b;
}
gpu::DepthState depth(bool write) {
  return {true, write, CompareOp::kGreaterOrEqual};
}
gpu::StencilState stamp(std::uint8_t reference) {
  gpu::StencilState s;
  s.enabled = true;
  s.compare = CompareOp::kAlways;
  s.pass = StencilOp::kReplace;
  s.reference = reference;
  s.write_mask = 0xFF;
  return s;
}

/// Face main shading's state (the frame analysis §3), which the body and
/// the outline share: depth tested and written, the character's stencil
/// stamped, every colour target written.
gpu::GraphicsState opaque_character() {
  gpu::GraphicsState s;
  s.depth = depth(true);
  s.stencil = stamp(kStencilCharacter);
  s.colour = {written(), written(), written(), written()};
  return s;
}

const std::vector<Target> kGbuffer = {Target::kHdr, Target::kMaterial1, Target::kMaterial2,
                                      Target::kNormal};

std::vector<PassDesc> make_passes() {
  std::vector<PassDesc> p;
  {
    PassDesc d{PassId::kFaceShadow,
               "face-shadow",
               "Face shadow geometry",
               "the character-rendering frame analysis §2, §8",
               "the face's depth seen from the light, for the 9-tap PCF; no colour",
               {},
               Target::kShadowDepth,
               {},
               ""};
    d.state.depth = depth(true);
    d.notes = "reversed-Z as the main view (clear 0, GreaterEqual) — our reading; no culling";
    p.push_back(d);
  }
  {
    PassDesc d{PassId::kBody,
               "body",
               "Body and opaque parts",
               "our reading",
               "fills the same attachments as the face so that a whole character renders",
               kGbuffer,
               Target::kDepthStencil,
               {},
               ""};
    d.state = opaque_character();
    d.notes =
        "the face's state: bit 7 marks every character pixel, so the classification pass "
        "covers the body too; material2 RG motion, B = A = 0";
    p.push_back(d);
  }
  {
    PassDesc d{PassId::kFaceMain,
               "face-main",
               "Face main shading",
               "the character-rendering frame analysis §3, §7",
               "HDR colour after shadow, lighting and the HSV shadow colour; control value; "
               "motion and flags; normal",
               kGbuffer,
               Target::kDepthStencil,
               {},
               ""};
    d.state = opaque_character();
    d.notes = "";
    p.push_back(d);
  }
  {
    PassDesc d{PassId::kOutline,
               "outline",
               "MToon outline (inverted hull)",
               "VRMC_materials_mtoon 1.0 (outline); our reading for the attachments",
               "the outline of MToon body and face primitives: each vertex pushed along its "
               "normal by the outline width, only back faces drawn, the outline colour",
               kGbuffer,
               Target::kDepthStencil,
               {},
               ""};
    d.state = opaque_character();
    d.state.cull = gpu::CullMode::kFront;
    d.notes =
        "front faces culled (the hull's far side shows around the silhouette); depth pushed back "
        "by 1e-6 of w so that the surface wins ties; the body's stencil, so the outline is "
        "character class; drawn after face main shading and before the classification, which "
        "then leaves face pixels the outline covers unclassified";
    p.push_back(d);
  }
  {
    PassDesc d{PassId::kShadowClassification,
               "shadow-classification",
               "Shadow classification write",
               "the character-rendering frame analysis §3, §4",
               "stencil bit 2 where bit 7 is set; no colour, no depth",
               kGbuffer,
               Target::kDepthStencil,
               {},
               ""};
    d.state.depth = depth(false);
    d.state.stencil.enabled = true;
    d.state.stencil.compare = CompareOp::kEqual;
    d.state.stencil.pass = StencilOp::kReplace;
    d.state.stencil.compare_mask = 0x80;
    d.state.stencil.reference = 0x84;
    d.state.stencil.write_mask = 0x04;
    d.state.colour = {kept(), kept(), kept(), kept()};
    d.notes = "every colour target bound with write mask 0: only stencil bit 2 changes";
    p.push_back(d);
  }
  {
    PassDesc d{PassId::kEyeComposite,
               "eye",
               "Eye compositing",
               "the character-rendering frame analysis §3, §9",
               "eye colour × coverage over the face; first material map written directly",
               kGbuffer,
               Target::kDepthStencil,
               {},
               ""};
    d.state.depth = depth(false);
    d.state.colour = {premultiplied(), written(), kept(), kept()};
    d.notes =
        "the shader writes premultiplied colour (RGB = colour × coverage, A = coverage); "
        "alpha blends One / InvSrcAlpha as colour does (our reading)";
    p.push_back(d);
  }
  {
    PassDesc d{PassId::kTransparent,
               "transparent",
               "Transparent parts",
               "the character-rendering frame analysis §2",
               "their contribution added onto the scene colour, with their own motion",
               kGbuffer,
               Target::kDepthStencil,
               {},
               ""};
    d.state.depth = depth(false);
    BlendState motion;  // RG only: the part's own screen motion
    motion.write_mask = 0x3;
    d.state.colour = {premultiplied(), kept(), motion, kept()};
    d.notes =
        "our reading: premultiplied colour, depth tested not written, the motion (RG of "
        "material2) written where the part covers, material1 and normal kept";
    p.push_back(d);
  }
  return p;
}

std::string mask_name(std::uint8_t m) {
  if (m == 0) return "0 (kept)";
  std::string s;
  for (int i = 0; i < 4; ++i)
    if ((m >> i) & 1) s += "RGBA"[i];
  return s;
}

std::string hex(unsigned v) {
  static const char* d = "0123456789ABCDEF";
  return std::string("0x") + d[(v >> 4) & 15] + d[v & 15] + " (" + std::to_string(v) + ")";
}

}  // namespace

std::span<const TargetDesc> targets() {
  return kTargets;
}
const TargetDesc& target(Target t) {
  return kTargets[static_cast<std::size_t>(t)];
}

const std::vector<PassDesc>& passes() {
  static const std::vector<PassDesc> table = make_passes();
  return table;
}

const PassDesc& pass(PassId id) {
  for (const PassDesc& p : passes())
    if (p.id == id) return p;
  return passes().front();
}

gpu::GraphicsPipelineDesc pipeline_desc(const PassDesc& pass,
                                        std::span<const std::uint32_t> vertex_spirv,
                                        std::span<const std::uint32_t> fragment_spirv,
                                        std::uint32_t vertex_stride,
                                        std::vector<gpu::VertexAttribute> attributes,
                                        std::uint32_t push_bytes) {
  gpu::GraphicsPipelineDesc d;
  d.vertex_spirv = vertex_spirv;
  d.fragment_spirv = fragment_spirv;
  d.vertex_stride = vertex_stride;
  d.attributes = std::move(attributes);
  for (Target t : pass.colour) d.colour_formats.push_back(target(t).format);
  if (pass.depth) d.depth_format = target(*pass.depth).format;
  d.state = pass.state;
  d.push_bytes = push_bytes;
  return d;
}

std::string passes_markdown() {
  std::ostringstream o;
  o << "| attachment | format | contents |\n|---|---|---|\n";
  for (const TargetDesc& t : kTargets)
    o << "| `" << t.name << "` | " << gpu::format_name(t.format) << " | " << t.contents << " |\n";
  for (const PassDesc& p : passes()) {
    o << "\n### " << p.title << " (`" << p.name << "`)\n\n"
      << "Produces: " << p.purpose << ". Source: " << p.source
      << ".\n\n| state | value |\n|---|---|\n";
    const gpu::GraphicsState& s = p.state;
    o << "| depth | ";
    if (!s.depth.test)
      o << "off";
    else
      o << gpu::name(s.depth.compare) << ", write " << (s.depth.write ? "on" : "off");
    o << " (`" << (p.depth ? target(*p.depth).name : "none") << "`) |\n| stencil | ";
    if (!s.stencil.enabled)
      o << "off";
    else
      o << gpu::name(s.stencil.compare) << " / " << gpu::name(s.stencil.pass) << " (fail "
        << gpu::name(s.stencil.fail) << ", depth fail " << gpu::name(s.stencil.depth_fail)
        << "), ref " << hex(s.stencil.reference) << ", compare mask " << hex(s.stencil.compare_mask)
        << ", write mask " << hex(s.stencil.write_mask);
    o << " |\n";
    if (p.colour.empty()) o << "| colour | none |\n";
    for (std::size_t i = 0; i < p.colour.size(); ++i) {
      const gpu::BlendState& b = s.colour[i];
      o << "| colour " << i << " `" << target(p.colour[i]).name << "` | write "
        << mask_name(b.write_mask);
      if (b.enabled)
        o << ", blend " << gpu::name(b.src_colour) << " / " << gpu::name(b.dst_colour) << " "
          << gpu::name(b.colour_op) << ", alpha " << gpu::name(b.src_alpha) << " / "
          << gpu::name(b.dst_alpha) << " " << gpu::name(b.alpha_op);
      else if (b.write_mask != 0)
        o << ", blending off";
      o << " |\n";
    }
    o << "| cull | " << gpu::name(s.cull) << " |\n";
    if (p.notes[0] != '\0') o << "\nNotes: " << p.notes << ".\n";
  }
  return o.str();
}

}  // namespace charkit::render
