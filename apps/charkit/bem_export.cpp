// `charkit bem export`: one selection of a valid package as glTF 2.0 (GLB, or
// .gltf + .bin). Data comes from the library (bem::load_package,
// bem::parse_settings, bem::export_glb); this file handles files and output.
// What is exported: docs/bem/export.md.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "charkit/bem/error_codes.h"
#include "charkit/bem/export_gltf.h"
#include "charkit/bem/load.h"
#include "charkit/bem/settings.h"
#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/scene/gltf_writer.h"
#include "charkit/version.h"
#include "cli_errors.h"
#include "commands.h"
#include "error_codes.h"
#include "output_file.h"
#include "package_input.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

struct ExportArgs {
  std::string file;
  std::string output;
  std::string options;
  std::string parameters;
  std::string resource;
  std::string platform;
  bool json = false;
  bool skip_validation = false;
  bool raw_axes = false;
  bool allow_empty = false;
  bool bake_sliders = false;
};

// The code: a declared one, or that of an error a call returned; never a literal.
int fail(const ExportArgs& a, int exit, const char* code, const std::string& message,
         const core::Location& loc = {}) = delete;
int fail(const ExportArgs& a, int exit, const std::string& code, const std::string& message,
         const core::Location& loc = {}) {
  if (a.json) {
    Json e = Json{{"code", code}, {"message", message}};
    if (loc.offset) e["offset"] = *loc.offset;
    if (!loc.pointer.empty()) e["pointer"] = loc.pointer;
    print_json(Json{{"file", a.file}, {"error", std::move(e)}});
  }
  print_bem_error(a.file, code, message,
                  !loc.pointer.empty() ? loc.pointer
                  : loc.offset         ? "column " + std::to_string(*loc.offset)
                                       : std::string());
  return exit;
}

bool write_file(const std::string& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  return static_cast<bool>(out);
}

int run_export(const ExportArgs& a) {
  const std::string ext = lower_extension(a.output);
  if (ext != ".glb" && ext != ".gltf")
    return fail(a, kExitUsage, codes::BEM_EXPORT_OUTPUT_NAME,
                "output " + printable(a.output) +
                    ": the name must end in .glb (one binary file) or .gltf (JSON with a .bin "
                    "beside it)");
  auto file = PackageInput::open(a.file);
  if (!file)
    return fail(a, input_error_exit_code(file.error()), file.error().code, file.error().message);
  bem::ValidateOptions vo;
  vo.skip_validation = a.skip_validation;
  vo.input_hints = file->hints();
  StepProgress checking(a.file, "checking payloads");
  vo.progress = checking.fn();
  bem::LoadedPackage loaded = bem::load_package(file->bytes(), vo);
  checking.finish();
  if (!loaded.ok()) {
    report_issues(a.file, loaded.validation.report);
    return fail(a, kExitInvalid, codes::BEM_EXPORT_INVALID_PACKAGE, loaded.error);
  }
  const bem::Model& model = *loaded.model;
  auto settings = bem::parse_settings(model, a.options, a.parameters);
  if (!settings)
    return fail(a, kExitUsage, settings.error().code, settings.error().message,
                settings.error().location);

  bem::ExportOptions eo;
  eo.plan = bem::PlanOptions{a.resource, a.platform};
  eo.unity_to_gltf = !a.raw_axes;
  eo.morph_targets = !a.bake_sliders;
  eo.generator = std::string("charkit ") + CHARKIT_VERSION_STRING;
  // .gltf output: the same document with the buffer in a .bin beside it.
  const bool separate = ext == ".gltf";
  StepProgress building(a.file, "exporting meshes");
  eo.progress = building.fn();
  auto exported = bem::export_glb(model, *loaded.package, *settings, eo);
  building.finish();
  if (!exported) {
    const core::Error& e = exported.error();
    const bool usage =
        e.code == bem::codes::BEM_PLAN_RESOURCE || e.code == bem::codes::BEM_PLAN_PLATFORM;
    return fail(a, usage ? kExitUsage : kExitInvalid, e.code, e.message, e.location);
  }
  // Nothing replaced: an empty glTF is almost always a wrong selection.
  const bool empty = exported->result.scene.meshes.empty();
  if (empty && !a.allow_empty) {
    for (const bem::ExportWarning& w : exported->result.warnings)
      report_warning(a.file, w.code, w.message, w.pointer);
    return fail(a, kExitInvalid, bem::codes::BEM_EXPORT_EMPTY,
                "the selection replaces no mesh; nothing written (--allow-empty writes the empty "
                "glTF)",
                core::Location::at_pointer("/meshes"));
  }
  std::uint64_t bytes = 0;
  std::string bin_path;
  if (separate) {
    const std::string stem = a.output.substr(0, a.output.size() - 5);
    bin_path = stem + ".bin";
    const std::size_t slash = bin_path.find_last_of('/');
    const std::string uri = slash == std::string::npos ? bin_path : bin_path.substr(slash + 1);
    scene::GltfOptions go;
    go.generator = eo.generator;
    auto files = scene::write_gltf(exported->result.scene, uri, go);
    if (!files)
      return fail(a, kExitInvalid, files.error().code, files.error().message,
                  files.error().location);
    if (!write_file(a.output, files->json.data(), files->json.size()) ||
        !write_file(bin_path, files->bin.data(), files->bin.size()))
      return fail(a, kExitUsage, core::codes::IO_WRITE,
                  "cannot write " + a.output + " / " + bin_path);
    bytes = files->json.size() + files->bin.size();
  } else {
    if (!write_file(a.output, exported->glb.data(), exported->glb.size()))
      return fail(a, kExitUsage, core::codes::IO_WRITE, "cannot write " + a.output);
    bytes = exported->glb.size();
  }

  const scene::Scene& s = exported->result.scene;
  std::size_t primitives = 0;
  for (const scene::Mesh& m : s.meshes) primitives += m.primitives.size();
  if (a.json) {
    Json j = Json::object();
    j["file"] = a.file;
    j["output"] = a.output;
    if (separate) j["buffer"] = bin_path;
    j["bytes"] = bytes;
    j["settings"] = bem::format_options(model, *settings);
    j["parametersSettings"] = bem::format_parameters(model, *settings);
    Json meshes = Json::array();
    for (const scene::Mesh& m : s.meshes)
      meshes.push_back(Json{
          {"name", m.name}, {"vertices", m.vertex_count()}, {"primitives", m.primitives.size()}});
    j["meshes"] = std::move(meshes);
    Json nodes = Json::array();
    for (const scene::Node& n : s.nodes) nodes.push_back(n.name);
    j["nodes"] = std::move(nodes);
    Json materials = Json::array();
    for (const scene::Material& m : s.materials) materials.push_back(m.name);
    j["materials"] = std::move(materials);
    j["images"] = s.images.size();
    j["joints"] = s.skeleton ? s.skeleton->joint_count() : 0;
    Json warns = Json::array();
    for (const bem::SettingsWarning& w : settings->warnings)
      warns.push_back(Json{{"code", w.code}, {"message", w.message}});
    for (const bem::ExportWarning& w : exported->result.warnings)
      warns.push_back(Json{{"code", w.code}, {"message", w.message}, {"pointer", w.pointer}});
    j["warnings"] = std::move(warns);
    print_json(std::move(j));
  } else {
    for (const bem::SettingsWarning& w : settings->warnings)
      report_warning(a.file, w.code, w.message,
                     std::string(w.in_parameters ? "parameters" : "options") + ", column " +
                         std::to_string(w.column));
    for (const bem::ExportWarning& w : exported->result.warnings)
      report_warning(a.file, w.code, w.message, w.pointer);
    std::cout << printable(a.output) << ": " << s.meshes.size() << " meshes, " << primitives
              << " primitives, " << s.nodes.size() << " nodes, " << s.materials.size()
              << " materials, " << s.images.size() << " images, "
              << (s.skeleton ? s.skeleton->joint_count() : 0) << " joints, " << bytes << " bytes\n";
  }
  return kExitOk;
}

}  // namespace

void add_bem_export_command(CLI::App& bem, int& exit_code) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = bem.add_subcommand(
      "export",
      "Export one selection of a valid package as glTF 2.0: the replacement meshes with morphs "
      "applied, "
      "the palette bones as a skin, one primitive per selected draw, textures decoded to PNG");
  cmd->add_option("file", args->file, "Package file (.bem, .zip)")->required()->type_name("FILE");
  cmd->add_option(
         "-o,--output", args->output,
         "Output file: .glb (one binary file) or .gltf (JSON with a .bin buffer beside it)")
      ->required()
      ->type_name("OUT");
  cmd->add_option("--options", args->options,
                  "Saved option string 'group:choice&group:choice' (1.0: an appearance id); "
                  "missing groups take their default")
      ->type_name("S");
  cmd->add_option("--parameters", args->parameters,
                  "Saved parameter string 'id:tick&id:tick'; missing parameters take their default")
      ->type_name("S");
  cmd->add_option("--resource", args->resource,
                  "1.4: export only the components of this resource id")
      ->type_name("R");
  cmd->add_option("--platform", args->platform, "1.4: the platform the resource is planned for")
      ->type_name("P");
  cmd->add_flag("--json", args->json, "Print a JSON summary (meshes, nodes, materials, warnings)");
  cmd->add_flag("--skip-validation", args->skip_validation,
                "Apply the user's 'disable model validation' switch while validating");
  cmd->add_flag("--raw-axes", args->raw_axes,
                "Keep Unity's conventions (left-handed axes, bottom-row-first images) instead of "
                "converting to glTF's");
  cmd->add_flag("--bake-sliders", args->bake_sliders,
                "Write the positions with the sliders applied (--parameters ticks) and no morph "
                "targets; by default each slider frame is a morph target (a Blender shape key, "
                "named after the parameter) weighted to those ticks, so bem pack can carry the "
                "sliders back");
  cmd->add_flag("--allow-empty", args->allow_empty,
                "Write the glTF even when the selection replaces no mesh (it has no geometry); "
                "without it that is exit 1 and nothing is written");
  cmd->footer(
      "Textures that cannot be decoded are left out with a warning; the material stays.\n"
      "Exit status: 0 exported, 1 invalid package or selection (or one that replaces nothing, "
      "unless --allow-empty), 2 usage or I/O error.");
  cmd->callback([args, &exit_code] { exit_code = run_export(*args); });
}

}  // namespace charkit::app
