// `charkit deform …`: the character deformation kernels of seed 003 on real
// files. `deform morph` applies glTF morph targets through the 40-byte
// sparse morph blend (docs/deform/morph40.md).
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/core/parallel.h"
#include "charkit/deform/error_codes.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/gltf_morph.h"
#include "cli_output.h"
#include "commands.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

struct MorphArgs {
  std::string input;
  std::string output;
  std::vector<std::string> weights;
  std::string mesh;
  std::string device = "auto";
  unsigned threads = 0;
  bool json = false;
};

core::Error usage(std::string text) {
  return core::make_error("USAGE", std::move(text));
}

/// "NAME=W" → (NAME, W); false when it is not that.
bool parse_weight(const std::string& text, std::string& name, float& weight) {
  const std::size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) return false;
  name = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  char* end = nullptr;
  weight = std::strtof(value.c_str(), &end);
  return end == value.c_str() + value.size() && std::isfinite(weight);
}

int run_morph(const MorphArgs& a) {
  scene::GltfMorphOptions o;
  o.mesh = a.mesh;
  for (const std::string& w : a.weights) {
    std::string name;
    float weight = 0;
    if (!parse_weight(w, name, weight))
      return report_error(a.input, usage("--weights: \"" + w + "\" is not NAME=W"), kExitUsage);
    o.weights[name] = weight;
  }
  const std::string ext = std::filesystem::path(a.output).extension().string();
  if (ext != ".glb")
    return report_error(a.input, usage("the output must be a .glb file: " + a.output), kExitUsage);
  // --device: only the CPU backend exists yet (the Vulkan one is issue 17's next part).
  std::unique_ptr<core::ThreadPool> pool;
  if (a.threads == 1) o.executor = &core::serial_executor();
  if (a.threads > 1) {
    pool = std::make_unique<core::ThreadPool>(a.threads);
    o.executor = pool.get();
  }
  auto doc = scene::GltfDocument::load_file(a.input);
  if (!doc)
    return report_error(a.input, doc.error(),
                        core::is_io_error(doc.error()) ? kExitUsage : kExitInvalid);
  auto r = scene::apply_gltf_morphs(*doc, o);
  if (!r) {
    const bool unknown_name = r.error().code == deform::codes::DEFORM_MORPH_TARGET;
    return report_error(a.input, r.error(), unknown_name ? kExitUsage : kExitInvalid);
  }
  {
    std::ofstream out(a.output, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(r->glb.data()),
              static_cast<std::streamsize>(r->glb.size()));
    out.close();
    if (!out) return report_error(a.output, "IO_WRITE", "cannot write " + a.output, kExitUsage);
  }
  std::size_t records = 0;
  std::size_t morphed = 0;
  for (const auto& m : r->meshes) {
    records += m.records;
    morphed += m.applied.empty() ? 0 : 1;
  }
  if (a.json) {
    Json meshes = Json::array();
    for (const auto& m : r->meshes) {
      Json applied = Json::object();
      for (const auto& [name, w] : m.applied) applied[name] = w;
      meshes.push_back(Json{{"name", m.name},
                            {"primitives", m.primitives},
                            {"vertices", m.vertices},
                            {"records", m.records},
                            {"weights", std::move(applied)}});
    }
    print_json(Json{{"input", a.input},
                    {"output", a.output},
                    {"device", "cpu"},
                    {"bytes", r->glb.size()},
                    {"meshes", std::move(meshes)}});
    return kExitOk;
  }
  std::cout << "wrote " << printable(a.output) << ": " << morphed << " of " << r->meshes.size()
            << " meshes with morph targets morphed, " << records
            << " 40-byte records applied on the cpu device\n";
  return kExitOk;
}

}  // namespace

void add_deform_commands(CLI::App& app, int& exit_code) {
  CLI::App* deform = app.add_subcommand(
      "deform", "Character deformation kernels (seed 003): sparse morph blending");
  deform->require_subcommand(1);
  auto ma = std::make_shared<MorphArgs>();
  CLI::App* morph = deform->add_subcommand(
      "morph",
      "Apply a glTF file's morph targets with given weights through the 40-byte sparse morph "
      "blend: positions, normals and tangents of every morphed primitive are replaced by the "
      "blended ones; the targets stay (relative to the new base) and the applied weights become "
      "0 in the file");
  morph->add_option("input", ma->input, "glTF, GLB or VRM file")->required()->type_name("IN");
  morph->add_option("-o,--output", ma->output, "Output GLB file")->required()->type_name("OUT.glb");
  morph
      ->add_option("--weights", ma->weights,
                   "Target weights NAME=W, comma-separated or repeated; NAME is the target's "
                   "name (mesh or first primitive extras.targetNames), target_<i> or <i>. "
                   "Targets not named keep the file's default weight")
      ->delimiter(',')
      ->type_name("NAME=W");
  morph->add_option("--mesh", ma->mesh, "Only the mesh with this name")->type_name("NAME");
  morph->add_option("--device", ma->device, "cpu or auto (the Vulkan device is not there yet)")
      ->check(CLI::IsMember({"cpu", "auto"}))
      ->capture_default_str();
  morph->add_option("--threads", ma->threads, "Kernel threads (0: all cores)")
      ->capture_default_str();
  morph->add_flag("--json", ma->json, "Print a JSON summary (meshes, records, weights applied)");
  morph->footer(
      "Exit status: 0 written, 1 invalid input, 2 usage or I/O error (an unknown target name "
      "lists the names).\nGuide: docs/deform/morph40.md");
  morph->callback([ma, &exit_code] { exit_code = run_morph(*ma); });
}

}  // namespace charkit::app
