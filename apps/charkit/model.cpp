// `charkit model inspect`: identify a character model from its content (GLB,
// glTF JSON, glTF in a zip, VRM 0.x / 1.0, FBX binary / ASCII) and report its
// skin, humanoid bones and counts (docs/model.md). The work is in
// charkit::scene::inspect_model; this file maps results to text, JSON and
// exit codes.
#include <iostream>
#include <memory>
#include <string>

#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/scene/intake.h"
#include "charkit/scene/model_inspect.h"
#include "cli_output.h"
#include "commands.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

struct ModelArgs {
  std::string input;
  bool json = false;
};

Json location_json(const core::Location& l) {
  Json j = Json::object();
  j["offset"] = l.offset ? Json(*l.offset) : Json(nullptr);
  j["pointer"] = l.pointer.empty() ? Json(nullptr) : Json(l.pointer);
  j["member"] = l.member.empty() ? Json(nullptr) : Json(l.member);
  return j;
}

Json info_json(const std::string& path, const scene::ModelInfo& m) {
  Json j{{"file", path},
         {"valid", true},
         {"format", std::string(scene::format_name(m.format))},
         {"container", std::string(scene::container_name(m.container))}};
  j["gltfVersion"] = m.gltf_version.empty() ? Json(nullptr) : Json(m.gltf_version);
  j["generator"] = m.generator.empty() ? Json(nullptr) : Json(m.generator);
  j["fbxVersion"] = m.format == scene::ModelFormat::kFbx ? Json(m.fbx_version) : Json(nullptr);
  j["zipEntry"] = m.zip_gltf_entry.empty() ? Json(nullptr) : Json(m.zip_gltf_entry);
  if (m.vrm) {
    auto opt = [](const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); };
    Json missing = Json::array();
    for (const auto& b : m.vrm->missing_bones) missing.push_back(b);
    j["vrm"] = Json{{"version", m.vrm->version},
                    {"specVersion", opt(m.vrm->spec_version)},
                    {"exporterVersion", opt(m.vrm->exporter_version)},
                    {"title", opt(m.vrm->title)},
                    {"author", opt(m.vrm->author)},
                    {"modelVersion", opt(m.vrm->model_version)},
                    {"humanoidBones", m.vrm->humanoid_bones},
                    {"missingRequiredBones", std::move(missing)}};
  } else {
    j["vrm"] = nullptr;
  }
  j["skinned"] = m.skinned;
  j["skins"] = m.skins;
  j["joints"] = m.joints;
  j["nodes"] = m.nodes;
  j["meshes"] = m.meshes;
  j["primitives"] = m.primitives;
  j["vertices"] = m.vertices;
  j["triangles"] = m.triangles;
  j["materials"] = m.materials;
  j["textures"] = m.textures;
  j["images"] = m.images;
  j["animations"] = m.animations;
  j["morphTargets"] = m.morph_targets;
  Json ws = Json::array();
  for (const auto& w : m.warnings) ws.push_back(Json{{"code", w.code}, {"message", w.message}});
  j["warnings"] = std::move(ws);
  return j;
}

std::string describe(const scene::ModelInfo& m) {
  std::string s;
  if (m.vrm) {
    s = "VRM " + m.vrm->version;
  } else if (m.format == scene::ModelFormat::kFbx) {
    s = "FBX";
  } else {
    s = "glTF " + m.gltf_version;
  }
  switch (m.container) {
    case scene::ModelContainer::kGlb:
      s += " (GLB)";
      break;
    case scene::ModelContainer::kGltfJson:
      s += " (glTF JSON)";
      break;
    case scene::ModelContainer::kZip:
      s += " (zip: " + m.zip_gltf_entry + ")";
      break;
    case scene::ModelContainer::kFbxBinary:
      s += " binary " + std::to_string(m.fbx_version);
      break;
    case scene::ModelContainer::kFbxAscii:
      s += " ASCII " + std::to_string(m.fbx_version);
      break;
  }
  return s;
}

void print_text(const std::string& path, const scene::ModelInfo& m) {
  std::cout << printable(path) << ": " << describe(m) << "\n";
  if (!m.generator.empty()) std::cout << "  generator:   " << printable(m.generator) << "\n";
  if (m.vrm) {
    const auto& v = *m.vrm;
    if (!v.spec_version.empty())
      std::cout << "  specVersion: " << printable(v.spec_version) << "\n";
    if (!v.exporter_version.empty())
      std::cout << "  exporter:    " << printable(v.exporter_version) << "\n";
    if (!v.title.empty()) std::cout << "  title:       " << printable(v.title) << "\n";
    if (!v.author.empty()) std::cout << "  author:      " << printable(v.author) << "\n";
    if (!v.model_version.empty())
      std::cout << "  version:     " << printable(v.model_version) << "\n";
    std::cout << "  humanoid:    " << v.humanoid_bones << " bones";
    if (v.missing_bones.empty()) {
      std::cout << ", all required bones present\n";
    } else {
      std::cout << ", missing required:";
      for (const auto& b : v.missing_bones) std::cout << " " << b;
      std::cout << "\n";
    }
  }
  if (m.skinned)
    std::cout << "  skin:        " << m.skins << (m.skins == 1 ? " skin, " : " skins, ") << m.joints
              << " joints\n";
  else
    std::cout << "  skin:        none\n";
  std::cout << "  meshes:      " << m.meshes << " (" << m.primitives << " primitives), "
            << m.vertices << " vertices, " << m.triangles << " triangles, " << m.morph_targets
            << " morph targets\n";
  std::cout << "  nodes:       " << m.nodes << "\n";
  std::cout << "  materials:   " << m.materials << ", textures: " << m.textures
            << ", images: " << m.images << "\n";
  std::cout << "  animations:  " << m.animations << "\n";
  for (const auto& w : m.warnings) report_warning(path, w.code, w.message);
}

int run_inspect(const ModelArgs& a) {
  // One read of the file: the survey and the details share its document.
  auto file = core::MappedFile::open(a.input);
  scene::IntakeOptions options;
  options.name = a.input;
  auto model = file ? scene::inspect_and_load_model(file->bytes(), options)
                    : core::Result<scene::InspectedModel>(file.error());
  if (!model) {
    const core::Error& e = model.error();
    const bool io = core::is_io_error(e);
    report_error(a.input, e, kExitInvalid);
    if (a.json) {
      Json j{{"file", a.input},
             {"valid", false},
             {"error", Json{{"code", e.code},
                            {"message", e.message},
                            {"location", location_json(e.location)}}}};
      print_json(std::move(j));
    }
    return io ? kExitUsage : kExitInvalid;
  }
  // Details (node tree, meshes, skins, …): scene::model_details.
  Json details = nullptr;
  if (auto d = scene::model_details(file->bytes(), *model))
    details = std::move(*d);
  else
    std::cerr << "charkit: " << printable(a.input) << ": warning " << d.error().code
              << ": no details: " << printable(d.error().message) << "\n";
  const scene::ModelInfo& info = model->info;
  if (a.json) {
    Json j = info_json(a.input, info);
    j["details"] = details;
    print_json(j);
  } else {
    print_text(a.input, info);
    if (!details.is_null()) std::cout << scene::model_details_text(details);
  }
  return kExitOk;
}

}  // namespace

void add_model_commands(CLI::App& app, int& exit_code) {
  auto* model = app.add_subcommand("model", "Identify character models (GLB, glTF, VRM, FBX)");
  model->require_subcommand(1);

  auto args = std::make_shared<ModelArgs>();
  CLI::App* inspect = model->add_subcommand(
      "inspect",
      "Identify a character model from its content, not its name: GLB, glTF JSON, a zip with one "
      ".gltf and "
      "its "
      "files, VRM 0.x (extensions.VRM) or 1.0 (extensions.VRMC_vrm), FBX binary or ASCII. Shows "
      "the "
      "glTF version and generator, VRM title/author and humanoid bones (and which required ones "
      "are "
      "missing), skin and joints, meshes, vertices, triangles, materials, textures, animations and "
      "morph targets, then the details: node tree, meshes (primitives, counts, morph target "
      "names, bounding boxes), skins with joint names, materials, textures, animations "
      "(duration, channels) and the VRM humanoid bone -> node map. Every length and index is "
      "checked; a broken file gets an error with a byte "
      "offset or JSON pointer.");
  inspect->add_option("input", args->input, "Model file (.glb, .vrm, .gltf, .zip, .fbx)")
      ->required()
      ->type_name("FILE");
  inspect->add_flag("--json", args->json, "Print the report as one JSON object (docs/model.md)");
  inspect->footer(
      "Exit status: 0 inspected, 1 invalid or unknown model, 2 usage or I/O error.\n"
      "Errors: FILE: LOCATION: error CODE: message. Rules and JSON fields: docs/model.md.");
  inspect->callback([args, &exit_code] { exit_code = run_inspect(*args); });
}

}  // namespace charkit::app
