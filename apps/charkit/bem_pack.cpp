// `charkit bem pack`: a glTF scene's meshes written into the layout of a
// template package (bem::pack_scene), then through the writer like `bem
// convert`. This file handles files, options and output; what is packed and
// how: docs/bem/pack.md.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "charkit/bem/error_codes.h"
#include "charkit/bem/folder.h"
#include "charkit/bem/load.h"
#include "charkit/bem/pack.h"
#include "charkit/bem/pack_spec.h"
#include "charkit/bem/writer.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/texture_decode.h"
#include "cli_output.h"
#include "commands.h"
#include "error_codes.h"
#include "output_file.h"
#include "package_input.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

struct PackArgs {
  std::string scene;
  std::string template_path;
  std::string output;
  std::string to;
  std::string spec;
  std::vector<std::string> texture_formats;
  bool raw_axes = false;
  bool json = false;
};

int fail(const std::string& subject, const core::Error& e, int exit, bool json) {
  if (json)
    print_json(Json{
        {"uri", subject},
        {"error",
         Json{{"code", e.code}, {"message", e.message}, {"location", e.location.to_string()}}}});
  return report_error(subject, e, exit);
}

/// What `bem pack` wrote: per mesh and texture, the warnings, the file.
void print_pack_result(const PackArgs& a, const bem::PackResult& packed, const bem::WriteStats& s,
                       bool zip, const core::Report& report) {
  const std::string version = "1." + std::to_string(s.minor);
  if (a.json) {
    Json out{{"uri", a.output},
             {"ok", true},
             {"container", zip ? "zip" : "binary"},
             {"version", version}};
    Json done = bem::pack_report_json(packed);  // meshes, textures, warnings
    for (auto& [key, value] : done.items()) out[key] = std::move(value);
    out["payloads"] = s.payloads_out;
    out["bytes"] = s.file_bytes;
    out["issues"] = Json::parse(report.to_json_issues());
    print_json(out);
  } else {
    for (const bem::PackWarning& w : packed.warnings)
      report_warning(a.scene, w.code, w.message, w.pointer);
    for (const auto& i : report.issues())
      if (i.severity == core::Severity::kWarning)
        report_warning(a.output, i.code, i.message, i.location.to_string());
    for (const bem::PackedMesh& m : packed.meshes)
      std::cout << "mesh " << m.mesh << " <- glTF mesh " << m.gltf_mesh
                << (m.node.empty() ? std::string() : " (node " + printable(m.node) + ")") << ": "
                << m.vertices_before << " -> " << m.vertices << " vertices, " << m.draws_replaced
                << " draws packed"
                << (m.draws_kept ? ", " + std::to_string(m.draws_kept) + " kept" : "")
                << (m.draws_added ? ", " + std::to_string(m.draws_added) + " added" : "")
                << (m.bones ? ", " + std::to_string(m.bones) + " palette bones" : "")
                << (m.bones_added ? " (" + std::to_string(m.bones_added) + " added)" : "")
                << (m.sliders ? ", " + std::to_string(m.sliders) + " sliders" : "") << "\n";
    for (const bem::PackedTexture& t : packed.textures)
      if (t.encoded)
        std::cout << "texture " << t.texture << " (" << printable(t.name) << ") <- image "
                  << t.image << ": " << (t.dds ? "DDS " : "")
                  << scene::texture_format_name(t.format) << " " << t.width << "x" << t.height
                  << ", " << t.mips << " mips, "
                  << (t.dds ? std::string("passed through")
                      : std::isfinite(t.psnr_db)
                          ? "PSNR " + std::to_string(t.psnr_db).substr(0, 5) + " dB"
                          : std::string("PSNR exact"))
                  << "\n";
    std::cout << printable(a.output) << ": BEM " << version << " " << (zip ? "ZIP" : "binary")
              << ", " << packed.meshes.size() << " meshes packed, " << s.payloads_out
              << " payloads, " << s.file_bytes << " bytes\n";
  }
}

int run_pack(const PackArgs& a) {
  const std::string ext = lower_extension(a.output);
  if (a.to.empty() && ext != ".bem" && ext != ".zip")
    return fail(
        a.output,
        core::make_error(codes::USAGE, "the output name must end in .bem or .zip, or give --to"),
        kExitUsage, a.json);
  const bool zip = a.to.empty() ? ext == ".zip" : a.to == "zip";

  bem::PackOptions po;
  po.raw_axes = a.raw_axes;
  for (const std::string& tf : a.texture_formats) {
    const auto eq = tf.find('=');
    const auto format =
        eq == std::string::npos ? std::nullopt : scene::texture_format_from_name(tf.substr(eq + 1));
    if (eq == 0 || !format)
      return fail(tf,
                  core::make_error(codes::USAGE,
                                   "--texture-format takes KIND=FORMAT or NAME=FORMAT (KIND: "
                                   "color, normal, linear; NAME: a texture's original_name; "
                                   "FORMAT: BC7, BC1, BC3, BC4, BC5, ASTC4x4, ASTC5x5, ASTC6x6, "
                                   "RGBA32, R8)"),
                  kExitUsage, a.json);
    po.texture_formats[tf.substr(0, eq)] = *format;
  }
  std::optional<bem::PackSpec> spec;
  if (!a.spec.empty()) {
    auto file = core::MappedFile::open(a.spec);
    if (!file) return fail(a.spec, file.error(), kExitUsage, a.json);
    auto parsed = bem::parse_pack_spec(file->bytes());
    if (!parsed) return fail(a.spec, parsed.error(), kExitInvalid, a.json);
    spec = std::move(*parsed);
    po.spec = &*spec;
  }
  core::Result<bem::PackResult> packed = core::make_error(codes::USAGE, "");
  if (bem::looks_like_project_file(a.scene)) {
    // The public BEM creator project: a whole package, no template.
    if (!a.template_path.empty())
      return fail(a.template_path,
                  core::make_error(codes::USAGE,
                                   "a project.json is a whole package (manifest and payload "
                                   "files): give no --template"),
                  kExitUsage, a.json);
    auto project = bem::read_project_file(a.scene);
    if (!project) {
      const int exit = core::is_io_error(project.error()) ? kExitUsage : kExitInvalid;
      return fail(a.scene, project.error(), exit, a.json);
    }
    packed = bem::pack_project(std::move(*project), po);
    if (!packed)
      return fail(packed.error().code == bem::codes::BEM_PACK_SPEC ? a.spec : a.scene,
                  packed.error(), kExitInvalid, a.json);
  } else {
    if (a.template_path.empty())
      return fail(a.scene,
                  core::make_error(codes::USAGE,
                                   "--template is required: the package whose layout, materials "
                                   "and options the glTF scene is packed into"),
                  kExitUsage, a.json);
    std::optional<bem::PackTemplate> tmpl_holder;
    if (lower_extension(a.template_path) == ".json") {
      // A JSON template: target and layouts, no package (docs/bem/pack.md).
      auto file = core::MappedFile::open(a.template_path);
      if (!file) return fail(a.template_path, file.error(), kExitUsage, a.json);
      auto made = bem::load_json_template(file->bytes());
      if (!made) return fail(a.template_path, made.error(), kExitInvalid, a.json);
      tmpl_holder = std::move(*made);
      po.fresh = true;
    } else {
      auto tmpl = PackageInput::open(a.template_path);
      if (!tmpl)
        return fail(a.template_path, tmpl.error(), input_error_exit_code(tmpl.error()), a.json);
      bem::ValidateOptions vo;
      vo.input_hints = tmpl->hints();
      bem::LoadedPackage loaded = bem::load_package(tmpl->bytes(), vo);
      if (!loaded.ok()) {
        report_issues(a.template_path, loaded.validation.report);
        return fail(a.template_path,
                    core::make_error(bem::codes::BEM_PACK_TEMPLATE,
                                     "the template is not a valid package: " + loaded.error),
                    kExitInvalid, a.json);
      }
      auto content = bem::read_package_content(tmpl->bytes());
      if (!content) return fail(a.template_path, content.error(), kExitInvalid, a.json);
      tmpl_holder = bem::PackTemplate{std::move(*content), std::move(*loaded.model)};
    }
    auto doc = scene::GltfDocument::load_file(a.scene);
    if (!doc) {
      const int exit = core::is_io_error(doc.error()) ? kExitUsage : kExitInvalid;
      return fail(a.scene, doc.error(), exit, a.json);
    }
    packed = bem::pack_scene(tmpl_holder->content, tmpl_holder->model, *doc, po);
    if (!packed) {
      const std::string& code = packed.error().code;
      const bool template_side =
          code == bem::codes::BEM_PACK_TEMPLATE || code == bem::codes::BEM_PACK_DRAW_MISSING;
      const std::string& subject = code == bem::codes::BEM_PACK_SPEC ? a.spec
                                   : template_side                   ? a.template_path
                                                                     : a.scene;
      return fail(subject, packed.error(), kExitInvalid, a.json);
    }
  }

  bem::WriteOptions wo;
  core::Report report;
  auto written = zip ? bem::write_zip(packed->content, wo, &report)
                     : bem::write_binary(packed->content, wo, &report);
  if (!written) {
    report_issues(a.scene, report);
    return fail(a.scene, written.error(), kExitInvalid, a.json);
  }
  if (auto st = write_output_file(a.output, written->bytes); !st)
    return fail(a.output, st.error(), kExitUsage, a.json);

  print_pack_result(a, *packed, written->stats, zip, report);
  return kExitOk;
}

}  // namespace

void add_bem_pack_command(CLI::App& bem, int& exit_code) {
  auto args = std::make_shared<PackArgs>();
  CLI::App* cmd = bem.add_subcommand(
      "pack",
      "Write a glTF scene's meshes (a bem export edited in Blender, say) into a package in the "
      "layout of a template package (or of a JSON template: the target's facts): vertex "
      "streams, bone palettes and draw indices replaced, shape keys as sliders, images as "
      "textures, everything else of the template kept; or a project.json packed as it is");
  cmd->add_option("scene", args->scene,
                  "glTF scene (.glb, or .gltf with its buffers beside it), or the public BEM "
                  "creator project's project.json (a manifest and its payload files: packed "
                  "without --template)")
      ->required()
      ->type_name("SCENE");
  cmd->add_option("-t,--template", args->template_path,
                  "Package whose layout, materials, textures and options the result keeps "
                  "(.bem, .zip or package folder), or a JSON template (*.json: the target and "
                  "each component's vertex layout and texture facts, docs/bem/pack.md)")
      ->type_name("PACKAGE");
  cmd->add_option("-o,--output", args->output, "Output package (.bem or .zip)")
      ->required()
      ->type_name("OUT");
  cmd->add_option("--to", args->to, "Container to write (default: zip for *.zip, else bem)")
      ->check(CLI::IsMember({"bem", "zip"}))
      ->type_name("bem|zip");
  cmd->add_option("--spec", args->spec,
                  "Spec file (JSON): package id, name, author, version, option groups, component "
                  "rules, selection constraints, texture slots, slider parameters (ranges, "
                  "several shape keys on one slider, available_when), material overrides, root "
                  "offset, drivers (docs/bem/pack.md)")
      ->type_name("SPEC.json");
  cmd->add_option("--texture-format", args->texture_formats,
                  "Format for edited textures of a kind (color, normal, linear) or of one "
                  "texture (its original_name), instead of the template texture's: BC7, BC1, "
                  "BC3, BC4, BC5, ASTC4x4, ASTC5x5, ASTC6x6, RGBA32, R8. Repeatable")
      ->type_name("KIND=FORMAT");
  cmd->add_flag("--raw-axes", args->raw_axes,
                "The scene keeps Unity's conventions (as bem export --raw-axes writes it): no "
                "axis, UV or winding conversion");
  cmd->add_flag("--json", args->json, "Print the summary as JSON");
  cmd->footer(
      "A glTF mesh named mesh_N replaces the template's mesh N (bem export names them so); else "
      "a mesh whose node is named after a replaced component (or has it in extras.bem_component) "
      "replaces that component's mesh. "
      "Each primitive fills the next draw whose material has the primitive's material name, or "
      "gets a new draw of the donor component's material slot of that name. With a JSON "
      "template, what the scene does not fill (draws, meshes, textures) is left out. "
      "A project.json ({\"manifest\": ..., \"payload_files\": [...]}) is packed as it is, "
      "with the spec's fields applied and the capabilities it uses declared.\n"
      "Exit status: 0 written, 1 a scene or template that cannot be packed (the message says "
      "why and where), 2 usage or I/O error.");
  cmd->callback([args, &exit_code] { exit_code = run_pack(*args); });
}

}  // namespace charkit::app
