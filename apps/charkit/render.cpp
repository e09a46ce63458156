// `charkit render MODEL -o OUT.png`: a model through the character passes
// (docs/render/render.md) on the GPU backend, a tone-mapped PNG, and on
// request every attachment, a turntable, the pass table.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "charkit/bem/error_codes.h"
#include "charkit/bem/export_gltf.h"
#include "charkit/bem/load.h"
#include "charkit/bem/settings.h"
#include "charkit/core/error_codes.h"
#include "charkit/core/half.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/deformer/action.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/targets.h"
#include "charkit/gpu/error_codes.h"
#include "charkit/motion/bvh.h"
#include "charkit/render/error_codes.h"
#include "charkit/render/frame.h"
#include "charkit/render/lut.h"
#include "charkit/render/model.h"
#include "charkit/render/passes.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/image.h"
#include "cli_output.h"
#include "commands.h"
#include "deformer_common.h"
#include "device.h"
#include "error_codes.h"
#include "output_file.h"
#include "package_input.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

struct RenderArgs {
  std::string input;
  std::string output;
  std::string size = "1024x1024";
  std::string camera;
  std::vector<float> light;
  std::vector<float> light_colour;
  std::vector<float> ambient;
  float exposure = 1.0F;
  std::string lut;
  std::string parts;
  std::string options;     // BEM selection
  std::string parameters;  // BEM parameters
  std::string motion;      // glTF animation (the model's own file) or BVH
  double frame = 0;
  double fps = 30;
  std::string animation;
  std::string joint_map;
  bool no_shadows = false;
  bool no_outlines = false;
  std::uint32_t shadow_map = 2048;
  std::string device;
  std::string dump;
  unsigned turntable = 0;
  std::string expression;  // NAME=W,NAME=W
  bool explain = false;
  bool json = false;
};

core::Error option_error(std::string text) {
  return core::make_error(render::codes::RENDER_OPTION, std::move(text));
}

std::optional<std::vector<float>> floats(const std::string& text) {
  std::vector<float> v;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      std::size_t used = 0;
      const float f = std::stof(item, &used);
      if (used != item.size() || !std::isfinite(f)) return std::nullopt;
      v.push_back(f);
    } catch (...) {
      return std::nullopt;
    }
  }
  return v;
}

/// `NAME=W,NAME=W`: VRM expression weights, each a number from 0 to 1.
core::Result<std::map<std::string, double>> parse_expressions(const std::string& text) {
  std::map<std::string, double> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    auto w = eq == std::string::npos ? std::nullopt : floats(item.substr(eq + 1));
    if (eq == 0 || !w || w->size() != 1 || !((*w)[0] >= 0.0F && (*w)[0] <= 1.0F))
      return option_error("--expression: \"" + item +
                          "\" is not NAME=WEIGHT with a weight from 0 to 1");
    if (!out.emplace(item.substr(0, eq), (*w)[0]).second)
      return option_error("--expression: " + item.substr(0, eq) + " is given twice");
  }
  if (out.empty()) return option_error("--expression: give NAME=WEIGHT, e.g. blink=1");
  return out;
}

/// `eye=X,Y,Z;target=X,Y,Z;up=X,Y,Z;fov=DEG;yaw=DEG` over the framing camera.
core::Result<render::Camera> parse_camera(const std::string& spec, const render::RenderModel& m,
                                          float aspect, float extra_yaw) {
  float yaw = 0.0F, fov = 30.0F;
  std::optional<float> distance, near_plane;
  std::optional<core::Vec3f> eye, target, up;
  std::stringstream in(spec);
  std::string item;
  while (std::getline(in, item, ';')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) return option_error("--camera: \"" + item + "\" is not KEY=VALUE");
    const std::string key = item.substr(0, eq);
    const auto v = floats(item.substr(eq + 1));
    if (!v) return option_error("--camera: " + key + " takes numbers");
    if ((key == "eye" || key == "target" || key == "up") && v->size() == 3) {
      (key == "eye" ? eye : key == "target" ? target : up) = core::Vec3f{(*v)[0], (*v)[1], (*v)[2]};
    } else if (key == "fov" && v->size() == 1 && (*v)[0] > 1.0F && (*v)[0] < 170.0F) {
      fov = (*v)[0];
    } else if (key == "yaw" && v->size() == 1) {
      yaw = (*v)[0];
    } else if (key == "distance" && v->size() == 1 && (*v)[0] > 0.0F) {
      distance = (*v)[0];
    } else if (key == "near" && v->size() == 1 && (*v)[0] > 0.0F) {
      near_plane = (*v)[0];
    } else {
      return option_error("--camera: \"" + item +
                          "\" (keys: eye=X,Y,Z target=X,Y,Z up=X,Y,Z fov=DEG yaw=DEG "
                          "distance=D near=N)");
    }
  }
  render::Camera c = render::framing_camera(m, aspect, yaw + extra_yaw, fov);
  if (target) {
    // The framing eye moves with the target (the same view direction).
    c.eye = core::add(c.eye, core::sub(*target, c.target));
    c.target = *target;
  }
  if (distance) {
    const core::Vec3f d = core::normalize(core::sub(c.eye, c.target));
    c.eye = core::add(c.target, core::scale(d, *distance));
    c.near_plane = *distance * 0.01F;
  }
  if (up) c.up = *up;
  if (eye) {
    // An explicit eye turns about the target for the turntable.
    const float a = extra_yaw * 3.14159265F / 180.0F;
    const core::Vec3f d = core::sub(*eye, c.target);
    c.eye = core::add(c.target, core::Vec3f{d[0] * std::cos(a) + d[2] * std::sin(a), d[1],
                                            -d[0] * std::sin(a) + d[2] * std::cos(a)});
    c.near_plane = std::max(core::length(d) * 0.01F, 1e-3F);
  }
  if (near_plane) c.near_plane = *near_plane;
  if (core::length(core::sub(c.eye, c.target)) <= 0.0F)
    return option_error("--camera: the eye and the target coincide");
  return c;
}

core::Status dump_attachments(const std::string& dir, const render::Frame& f) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return core::make_error(core::codes::IO_WRITE, "cannot create " + dir + ": " + ec.message());
  const std::size_t n = std::size_t{f.width} * f.height;
  auto write = [&](const std::string& name, std::uint32_t w, std::uint32_t h,
                   std::uint32_t channels, const std::vector<std::uint16_t>& samples) {
    auto png = scene::encode_png16(w, h, channels, samples);
    if (!png) return core::Status(std::move(png).error());
    return write_output_file(dir + "/" + name, *png);
  };
  std::vector<std::uint16_t> s(n * 4);
  for (std::size_t i = 0; i < n * 4; ++i) {
    const float v = std::clamp(core::half_to_float(f.hdr[i]), 0.0F, 1.0F);
    s[i] = static_cast<std::uint16_t>(std::lround(v * 65535.0F));
  }
  if (auto st = write("hdr.png", f.width, f.height, 4, s); !st) return st;
  for (auto [name, bytes] :
       {std::pair{"material1.png", &f.material1}, std::pair{"material2.png", &f.material2},
        std::pair{"normal.png", &f.normal}}) {
    for (std::size_t i = 0; i < n * 4; ++i) s[i] = static_cast<std::uint16_t>((*bytes)[i] * 257U);
    if (auto st = write(name, f.width, f.height, 4, s); !st) return st;
  }
  std::vector<std::uint16_t> grey(n);
  for (std::size_t i = 0; i < n; ++i)
    grey[i] =
        static_cast<std::uint16_t>(std::lround(std::clamp(f.depth[i], 0.0F, 1.0F) * 65535.0F));
  if (auto st = write("depth.png", f.width, f.height, 1, grey); !st) return st;
  std::vector<std::uint16_t> shadow(f.shadow.size());
  for (std::size_t i = 0; i < shadow.size(); ++i)
    shadow[i] =
        static_cast<std::uint16_t>(std::lround(std::clamp(f.shadow[i], 0.0F, 1.0F) * 65535.0F));
  if (auto st = write("shadow.png", f.shadow_size, f.shadow_size, 1, shadow); !st) return st;
  auto stencil = scene::encode_png_grey(f.width, f.height, f.stencil);
  if (!stencil) return std::move(stencil).error();
  return write_output_file(dir + "/stencil.png", *stencil);
}

/// A BEM package's selection exported to GLB in memory (the `bem export`
/// path: morphs applied, Unity axes converted), for rendering.
core::Result<std::vector<std::uint8_t>> bem_selection_glb(const RenderArgs& a, int& exit) {
  exit = kExitInvalid;
  auto file = PackageInput::open(a.input);
  if (!file) {
    exit = input_error_exit_code(file.error());
    return std::move(file).error();
  }
  bem::ValidateOptions vo;
  vo.input_hints = file->hints();
  bem::LoadedPackage loaded = bem::load_package(file->bytes(), vo);
  if (!loaded.ok()) {
    report_issues(a.input, loaded.validation.report);
    return core::make_error(codes::BEM_EXPORT_INVALID_PACKAGE, loaded.error);
  }
  auto settings = bem::parse_settings(*loaded.model, a.options, a.parameters);
  if (!settings) {
    exit = kExitUsage;
    return std::move(settings).error();
  }
  // An option group or parameter the package lacks is warned about, as by
  // `bem select` and `bem export` (the default is rendered in its place).
  for (const bem::SettingsWarning& w : settings->warnings)
    report_warning(a.input, w.code, w.message,
                   std::string(w.in_parameters ? "parameters" : "options") + ", column " +
                       std::to_string(w.column));
  bem::ExportOptions eo;
  eo.generator = "charkit render";
  auto exported = bem::export_glb(*loaded.model, *loaded.package, *settings, eo);
  if (!exported) return std::move(exported).error();
  for (const bem::ExportWarning& w : exported->result.warnings)
    report_warning(a.input, w.code, w.message, w.pointer);
  if (exported->result.scene.meshes.empty())
    return core::error_at_pointer(bem::codes::BEM_EXPORT_EMPTY,
                                  "the selection replaces no mesh: nothing to render", "/meshes");
  return std::move(exported->glb);
}

/// The model's skinned joints posed by --motion at frame N and N − 1 (N − 1
/// = N at frame 0): local matrices by glTF node, for load_render_model.
struct MotionPoses {
  std::map<std::size_t, core::Mat4f> now, before;
};

core::Result<MotionPoses> motion_poses(const RenderArgs& a, core::Bytes model_bytes, int& exit) {
  exit = kExitInvalid;
  auto rig = scene::load_rig(model_bytes);
  if (!rig) return std::move(rig).error();
  deformer::ActionOptions ao;
  ao.animation = a.animation;
  ao.fps = a.fps;
  ao.start_frame = std::max(a.frame - 1.0, 0.0);
  ao.end_frame = a.frame;
  ao.frames = a.frame >= 1.0 ? 2 : 1;
  auto file = core::MappedFile::open(a.motion);
  if (!file) {
    exit = kExitUsage;
    return std::move(file).error();
  }
  // The bones the motion drives: every joint for the model's own glTF
  // animation; for a BVH the joints it names (directly or through the map).
  const bool bvh = lower_extension(a.motion) == ".bvh";
  std::set<std::string> bvh_names;
  if (bvh) {
    auto header = motion::parse_bvh_header(core::as_chars(file->bytes()));
    if (!header) return std::move(header).error();
    for (const motion::BvhJoint& j : header->joints) bvh_names.insert(j.name);
  }
  deformer::InputSpec spec;
  auto add_bones = [&] {
    for (const std::string& name : rig->skeleton.joint_names) {
      bool driven = !bvh || bvh_names.count(name) != 0;
      if (auto m = ao.bvh_joints.find(name); bvh && m != ao.bvh_joints.end())
        for (const std::string& n : m->second) driven = driven || bvh_names.count(n) != 0;
      if (!driven) continue;
      deformer::BoneInput b;
      b.name = name;
      for (auto& axis : b.axes) axis = {true, -180.0, 180.0};
      spec.bones.push_back(std::move(b));
    }
  };
  core::Result<deformer::ActionSamples> s = core::make_error(codes::USAGE, "");
  if (bvh) {
    if (!a.joint_map.empty()) {
      auto text = core::MappedFile::open(a.joint_map);
      if (!text) {
        exit = kExitUsage;
        return std::move(text).error();
      }
      auto map = deformer::parse_bvh_joint_map(core::as_chars(text->bytes()),
                                               vrm_humanoid_joints(model_bytes));
      if (!map) return std::move(map).error();
      ao.bvh_joints = std::move(*map);
    }
    add_bones();
    if (spec.bones.empty())
      return core::make_error(deformer::codes::ACTION_BONE,
                              "no joint of the model is in the BVH (map them with --joint-map)");
    s = deformer::sample_bvh_action(core::as_chars(file->bytes()), spec, ao);
  } else {
    add_bones();
    s = deformer::sample_gltf_action(file->bytes(), *rig, spec, ao);
  }
  if (!s) return std::move(s).error();
  MotionPoses out;
  const std::size_t last = s->poses.size() - 1;  // pose 0 is the rest pose
  const std::pair<std::size_t, std::map<std::size_t, core::Mat4f>*> wanted[] = {
      {last, &out.now}, {last > 1 ? 1 : last, &out.before}};
  for (const auto& [pose, target] : wanted) {
    auto locals = deformer::pose_locals(*rig, spec, s->poses[pose]);
    if (!locals) return std::move(locals).error();
    for (std::size_t j = 0; j < locals->size(); ++j)
      (*target)[rig->joint_nodes[j]] = scene::transform_matrix((*locals)[j]);
  }
  return out;
}

/// The MToon outline a primitive asks for (drawn unless --no-outlines, on
/// body and face parts): its width mode as VRMC_materials_mtoon names it.
const char* outline_name(const render::RenderPrimitive& p) {
  if (!p.mtoon || !p.mtoon->has_outline()) return "none";
  return p.mtoon->outline_mode == render::MToonShading::OutlineMode::kScreen ? "screenCoordinates"
                                                                             : "worldCoordinates";
}

std::string numbered(const std::string& path, unsigned i) {
  const std::filesystem::path p(path);
  char digits[16];
  std::snprintf(digits, sizeof digits, "_%03u", i);
  return (p.parent_path() / (p.stem().string() + digits + p.extension().string())).string();
}

/// --explain: the passes and their states, as Markdown or JSON.
void explain_passes(bool json) {
  if (json) {
    Json passes = Json::array();
    for (const render::PassDesc& p : render::passes()) {
      Json colour = Json::array();
      for (std::size_t i = 0; i < p.colour.size(); ++i) {
        const gpu::BlendState& b = p.state.colour[i];
        colour.push_back(Json{{"target", render::target(p.colour[i]).name},
                              {"writeMask", b.write_mask},
                              {"blend", b.enabled},
                              {"src", gpu::name(b.src_colour)},
                              {"dst", gpu::name(b.dst_colour)},
                              {"srcAlpha", gpu::name(b.src_alpha)},
                              {"dstAlpha", gpu::name(b.dst_alpha)}});
      }
      const gpu::StencilState& s = p.state.stencil;
      passes.push_back(Json{{"name", p.name},
                            {"title", p.title},
                            {"source", p.source},
                            {"depth", Json{{"target", p.depth ? render::target(*p.depth).name : ""},
                                           {"test", p.state.depth.test},
                                           {"write", p.state.depth.write},
                                           {"compare", gpu::name(p.state.depth.compare)}}},
                            {"stencil", Json{{"enabled", s.enabled},
                                             {"compare", gpu::name(s.compare)},
                                             {"pass", gpu::name(s.pass)},
                                             {"reference", s.reference},
                                             {"compareMask", s.compare_mask},
                                             {"writeMask", s.write_mask}}},
                            {"colour", std::move(colour)},
                            {"cull", gpu::name(p.state.cull)},
                            {"notes", p.notes}});
    }
    print_json(Json{{"passes", std::move(passes)}});
  } else {
    std::cout << render::passes_markdown();
  }
}

/// The frame options of --size, --light, --exposure, --shadows, --shadow-map
/// and --lut; on a refusal, the exit code (the error reported).
std::variant<render::FrameOptions, int> frame_options(const RenderArgs& a) {
  render::FrameOptions fo;
  {
    const auto x = a.size.find('x');
    const auto w = x == std::string::npos ? std::nullopt : floats(a.size.substr(0, x));
    const auto h = x == std::string::npos ? std::nullopt : floats(a.size.substr(x + 1));
    if (!w || !h || w->size() != 1 || h->size() != 1 || (*w)[0] < 1 || (*h)[0] < 1 ||
        (*w)[0] > 8192 || (*h)[0] > 8192 || (*w)[0] != std::floor((*w)[0]) ||
        (*h)[0] != std::floor((*h)[0]))
      return report_error(a.input, option_error("--size is WxH, 1..8192 each: " + a.size),
                          kExitUsage);
    fo.width = static_cast<std::uint32_t>((*w)[0]);
    fo.height = static_cast<std::uint32_t>((*h)[0]);
    if (std::uint64_t{fo.width} * fo.height > render::kMaxFramePixels)
      return report_error(a.input,
                          option_error("--size " + a.size +
                                       " is past the frame budget of 16,777,216 pixels "
                                       "(4096x4096, about 1 GiB of frame memory)"),
                          kExitUsage);
  }
  if (!a.light.empty()) {
    if (a.light.size() != 3 || core::length(core::Vec3f{a.light[0], a.light[1], a.light[2]}) <= 0)
      return report_error(a.input, option_error("--light takes a non-zero X,Y,Z"), kExitUsage);
    fo.light_direction = {a.light[0], a.light[1], a.light[2]};
  }
  for (auto [values, target, name] :
       {std::tuple{&a.light_colour, &fo.light_colour, "--light-colour"},
        std::tuple{&a.ambient, &fo.ambient, "--ambient"}}) {
    if (values->empty()) continue;
    if (values->size() != 3 || std::any_of(values->begin(), values->end(), [](float v) {
          return !(v >= 0.0F) || !std::isfinite(v);
        }))
      return report_error(a.input, option_error(std::string(name) + " takes R,G,B, each >= 0"),
                          kExitUsage);
    *target = {(*values)[0], (*values)[1], (*values)[2]};
  }
  if (!(a.exposure > 0.0F) || !std::isfinite(a.exposure))
    return report_error(a.input, option_error("--exposure must be > 0"), kExitUsage);
  fo.exposure = a.exposure;
  fo.shadows = !a.no_shadows;
  fo.outlines = !a.no_outlines;
  // Frame N's time: the MToon UV animation's clock (and, with --motion, the
  // glTF animation's).
  fo.time = a.frame / a.fps;
  if (a.shadow_map < 16 || a.shadow_map > 8192)
    return report_error(a.input, option_error("--shadow-map is 16..8192"), kExitUsage);
  fo.shadow_map_size = a.shadow_map;
  if (!a.lut.empty()) {
    auto file = core::MappedFile::open(a.lut);
    if (!file) return report_error(a.lut, file.error(), kExitUsage);
    auto lut = lower_extension(a.lut) == ".png" ? render::parse_png_lut(file->bytes())
                                                : render::parse_cube_lut(file->bytes());
    if (!lut)
      return report_error(a.lut, lut.error(),
                          core::is_io_error(lut.error()) ? kExitUsage : kExitInvalid);
    fo.lut = std::move(*lut);
  }
  return fo;
}

int run_render(const RenderArgs& a) {
  if (a.explain) {
    explain_passes(a.json);
    return kExitOk;
  }
  if (a.input.empty() || a.output.empty())
    return report_error("", codes::USAGE,
                        "charkit render needs MODEL and -o OUT.png (or --explain)", kExitUsage);
  if (lower_extension(a.output) != ".png")
    return report_error(a.input, codes::USAGE, "the output must be a .png file: " + a.output,
                        kExitUsage);
  auto options = frame_options(a);
  if (const int* exit = std::get_if<int>(&options)) return *exit;
  render::FrameOptions fo = std::get<render::FrameOptions>(std::move(options));
  render::ModelLoadOptions mo;
  if (!a.expression.empty()) {
    auto e = parse_expressions(a.expression);
    if (!e) return report_error(a.input, e.error(), kExitUsage);
    mo.expressions = std::move(*e);
  }
  if (!a.parts.empty()) {
    auto file = core::MappedFile::open(a.parts);
    if (!file) return report_error(a.parts, file.error(), kExitUsage);
    auto parts = render::parse_parts(file->bytes());
    if (!parts) return report_error(a.parts, parts.error(), kExitInvalid);
    mo.parts = std::move(*parts);
  }
  auto device = open_kernel_device(a.device.empty() ? std::string("gpu") : a.device);
  if (!device) return report_error(a.input, device.error(), kExitUsage);
  if (device->gpu == nullptr)
    return report_error(a.input, gpu::codes::GPU_UNAVAILABLE,
                        "charkit render draws with Vulkan; without a GPU, Mesa's lavapipe "
                        "(Debian mesa-vulkan-drivers) renders on the CPU",
                        kExitUsage);
  const std::string in_ext = lower_extension(a.input);
  const bool package = in_ext == ".bem" || in_ext == ".zip";
  if (!package && (!a.options.empty() || !a.parameters.empty()))
    return report_error(a.input, codes::USAGE, "--options and --parameters select in a BEM package",
                        kExitUsage);
  core::Result<scene::GltfDocument> doc = core::make_error(codes::USAGE, "");
  if (package) {
    int exit = kExitInvalid;
    auto glb = bem_selection_glb(a, exit);
    if (!glb) return report_error(a.input, glb.error(), exit);
    doc = scene::GltfDocument::load(*glb);
  } else {
    doc = scene::GltfDocument::load_file(a.input);
  }
  if (!doc)
    return report_error(a.input, doc.error(),
                        core::is_io_error(doc.error()) ? kExitUsage : kExitInvalid);
  // With --motion: the model posed at frame N, its previous positions at N − 1.
  core::Result<render::RenderModel> model = core::make_error(codes::USAGE, "");
  if (!a.motion.empty()) {
    if (package)
      return report_error(a.input, codes::USAGE,
                          "--motion poses a glTF/VRM model, not a BEM package", kExitUsage);
    auto bytes = core::MappedFile::open(a.input);
    if (!bytes) return report_error(a.input, bytes.error(), kExitUsage);
    int exit = kExitInvalid;
    auto poses = motion_poses(a, bytes->bytes(), exit);
    if (!poses) return report_error(a.motion, poses.error(), exit);
    render::ModelLoadOptions earlier = mo;
    earlier.node_locals = std::move(poses->before);
    mo.node_locals = std::move(poses->now);
    auto then = render::load_render_model(*doc, earlier);
    if (!then) return report_error(a.input, then.error(), kExitInvalid);
    model = render::load_render_model(*doc, mo);
    if (model)
      if (auto st = render::set_previous_positions(*model, *then); !st)
        return report_error(a.input, st.error(), kExitInvalid);
    fo.motion = true;
  } else {
    model = render::load_render_model(*doc, mo);
  }
  if (!model)
    return report_error(
        a.input, model.error(),
        model.error().code == render::codes::RENDER_EXPRESSION ? kExitUsage : kExitInvalid);
  for (const std::string& w : model->warnings)
    report_warning(a.input, render::codes::RENDER_MODEL, w);
  // The default light: front, above and to the side of the way the model faces.
  if (a.light.empty()) fo.light_direction = {0.4F, 0.7F, 0.6F * model->facing_z};
  const float aspect = static_cast<float>(fo.width) / static_cast<float>(fo.height);
  const unsigned views = a.turntable > 0 ? a.turntable : 1;
  Json outputs = Json::array();
  render::FrameStats first_stats;
  for (unsigned v = 0; v < views; ++v) {
    const float yaw = 360.0F * static_cast<float>(v) / static_cast<float>(views);
    auto camera = parse_camera(a.camera, *model, aspect, yaw);
    if (!camera) return report_error(a.input, camera.error(), kExitUsage);
    fo.camera = *camera;
    auto frame = render::render_frame(*device->gpu, *model, fo);
    if (!frame) {
      const bool limit = frame.error().code == gpu::codes::GPU_LIMIT ||
                         frame.error().code == render::codes::RENDER_OPTION;
      return report_error(a.input, frame.error(), limit ? kExitUsage : kExitInvalid);
    }
    const std::string out = a.turntable > 0 ? numbered(a.output, v) : a.output;
    auto png = scene::encode_png(render::tone_map(*frame, fo.exposure));
    if (!png) return report_error(out, png.error(), kExitUsage);
    if (auto st = write_output_file(out, *png); !st)
      return report_error(out, st.error(), kExitUsage);
    if (!a.dump.empty()) {
      const std::string dir = a.turntable > 0 ? numbered(a.dump, v) : a.dump;
      if (auto st = dump_attachments(dir, *frame); !st)
        return report_error(dir, st.error(), kExitUsage);
    }
    const render::FrameStats& s = frame->stats;
    if (v == 0) first_stats = s;
    outputs.push_back(
        Json{{"file", out},
             {"yaw", yaw},
             {"coverage", static_cast<double>(s.character_pixels) /
                              static_cast<double>(std::max<std::uint64_t>(s.pixels, 1))},
             {"characterPixels", s.character_pixels},
             {"facePixels", s.face_pixels},
             {"eyePixels", s.eye_pixels},
             {"transparentPixels", s.transparent_pixels},
             {"shadowMapPixels", s.shadow_map_pixels},
             {"outlineDraws", s.outline_draws}});
  }
  if (a.json) {
    Json parts = Json::array();
    for (const render::RenderPrimitive& p : model->primitives)
      parts.push_back(Json{{"pointer", p.pointer},
                           {"mesh", p.mesh_name},
                           {"material", p.material_name},
                           {"part", render::part_kind_name(p.kind)},
                           {"reason", p.kind_reason},
                           {"shading", p.mtoon   ? p.mtoon->source
                                       : p.unlit ? std::string("KHR_materials_unlit")
                                                 : std::string("glTF metallic-roughness")},
                           {"outline", outline_name(p)},
                           {"triangles", p.indices.size() / 3}});
    print_json(Json{{"input", a.input},
                    {"device", device->name},
                    {"width", fo.width},
                    {"height", fo.height},
                    {"parts", std::move(parts)},
                    {"expressions", model->expressions},
                    {"images", std::move(outputs)}});
    return kExitOk;
  }
  const render::FrameStats& s = first_stats;
  // A turntable writes OUT_000.png … (numbered): name what was written.
  std::cout << "wrote "
            << (views > 1 ? printable(numbered(a.output, 0)) + " … " +
                                printable(numbered(a.output, views - 1)) + " (" +
                                std::to_string(views) + " views; figures of the first)"
                          : printable(a.output))
            << ": " << fo.width << "x" << fo.height << " on the " << printable(device->name)
            << " device; character " << s.character_pixels << " px, face " << s.face_pixels
            << " px, eye " << s.eye_pixels << " px, transparent " << s.transparent_pixels
            << " px\n";
  return kExitOk;
}

}  // namespace

void add_render_commands(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<RenderArgs>();
  CLI::App* r = app.add_subcommand(
      "render",
      "Render a character model through the character passes (face shadow "
      "geometry, body, face main shading, shadow classification, eye, transparent parts, each "
      "with its exact pipeline state) on the GPU backend, and write a tone-mapped PNG");
  r->add_option("model", a->input,
                "glTF, GLB or VRM file, or a BEM package (.bem, .zip: its selection is exported "
                "as `bem export` does)")
      ->type_name("MODEL");
  r->add_option("--options", a->options, "BEM package: the selection (as `bem select`)")
      ->type_name("TEXT");
  r->add_option("--parameters", a->parameters, "BEM package: parameter values (as `bem select`)")
      ->type_name("TEXT");
  r->add_option("-o,--output", a->output, "Output PNG (with --turntable: OUT_000.png …)")
      ->type_name("OUT.png");
  r->add_option("--size", a->size, "Image size")->type_name("WxH")->capture_default_str();
  r->add_option("--camera", a->camera,
                "Camera over the default framing: eye=X,Y,Z;target=X,Y,Z;up=X,Y,Z;fov=DEG;"
                "yaw=DEG;distance=D;near=N (any of them; default: the whole model from the side it "
                "faces)")
      ->type_name("SPEC");
  r->add_option("--light", a->light, "Direction towards the light (world space)")
      ->delimiter(',')
      ->expected(3)
      ->type_name("X,Y,Z");
  r->add_option("--light-colour", a->light_colour,
                "The directional light's colour, linear RGB (default 1,1,1)")
      ->delimiter(',')
      ->expected(3)
      ->type_name("R,G,B");
  r->add_option("--ambient", a->ambient,
                "The uniform ambient light, linear RGB (default 0.25,0.25,0.28)")
      ->delimiter(',')
      ->expected(3)
      ->type_name("R,G,B");
  r->add_option("--exposure", a->exposure, "Exposure (tone mapping and the LUT shaper)")
      ->capture_default_str();
  r->add_option("--lut", a->lut,
                "Character LUT for the eye branch, over the shaped colour: a .cube 3D LUT of "
                "size 32, or a 1024x32 PNG strip (blue picks the 32-pixel slice)")
      ->type_name("FILE.cube|.png");
  r->add_option("--expression", a->expression,
                "VRM expression weights from 0 to 1, e.g. blink=1,happy=0.5 (default: every "
                "expression at 0, the VRM rest state; --json lists the model's)")
      ->type_name("NAME=W,...");
  r->add_option("--parts", a->parts,
                "Which materials or meshes are face, eye, transparent or body: a JSON file "
                "{\"face\": [NAMES], \"eye\": [...], ...} (default: VRM data and names)")
      ->type_name("FILE.json");
  r->add_option("--motion", a->motion,
                "Pose the skeleton from a motion: the model's own glTF animation (give MODEL "
                "again, or a file with the same nodes) or a BVH (joints matched by name, or "
                "--joint-map); frames N and N - 1 give the motion vectors")
      ->type_name("FILE");
  r->add_option("--frame", a->frame,
                "Frame N, 0 or more, at time N / --fps: the motion's frame and the MToon UV "
                "animation's time")
      ->check(non_negative_number())
      ->capture_default_str();
  r->add_option("--fps", a->fps,
                "Frames per second: the time of frame N (a glTF animation, MToon UV animation)")
      ->check(positive_number())
      ->capture_default_str();
  r->add_option("--animation", a->animation, "glTF animation name or index (default: the first)")
      ->type_name("NAME");
  r->add_option("--joint-map", a->joint_map,
                "BVH: JSON object, rig joint or VRM humanoid bone -> BVH joint names")
      ->type_name("FILE.json");
  r->add_flag("--no-shadows", a->no_shadows, "Turn the face/body shadow off");
  r->add_flag("--no-outlines", a->no_outlines,
              "Turn MToon's inverted-hull outlines off (drawn by default, as three-vrm does)");
  r->add_option("--shadow-map", a->shadow_map, "Light depth map size")->capture_default_str();
  add_device_option(*r, a->device);
  r->add_option("--dump-attachments", a->dump,
                "Write every attachment into DIR: hdr, material1, material2, normal, depth, "
                "shadow (16-bit PNGs) and stencil (8-bit)")
      ->type_name("DIR");
  r->add_option("--turntable", a->turntable, "Write N views around the model (1 to 360)")
      ->check(CLI::Range(1u, 360u))
      ->type_name("N");
  r->add_flag("--explain", a->explain,
              "Print the passes' pipeline states (the table the renderer builds from) and exit");
  r->add_flag("--json", a->json, "Print a JSON summary (parts, pixel counts per pass)");
  r->footer(
      "--device: gpu (default: a real GPU, else lavapipe) or auto; cpu is refused (the passes "
      "need Vulkan).\nExit status: 0 written, 1 invalid input, 2 usage, device or I/O error.\n"
      "Guide: docs/render/render.md");
  r->callback([a, &exit_code] { exit_code = run_render(*a); });
}

}  // namespace charkit::app
