// `charkit deform …`: the character deformation kernels of the
// character-rendering frame analysis on real files. `deform morph` applies
// glTF morph targets through the 40-byte sparse morph blend
// (docs/deform/morph40.md); `deform subdivide` runs the adaptive subdivision
// kernels (docs/deform/subdivision.md).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "charkit/bem/container.h"
#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/core/parallel.h"
#include "charkit/deform/error_codes.h"
#include "charkit/ops/gltf_morph.h"
#include "charkit/ops/gltf_subdivide.h"
#include "charkit/scene/gltf_asset.h"
#include "charkit/scene/gltf_document.h"
#include "cli_output.h"
#include "commands.h"
#include "device.h"
#include "error_codes.h"
#include "output_file.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

struct MorphArgs {
  std::string input;
  std::string output;
  std::vector<std::string> weights;
  std::string mesh;
  std::string device;
  unsigned threads = 0;
  bool json = false;
};

core::Error usage(std::string text) {
  return core::make_error(codes::USAGE, std::move(text));
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

/// The executor for --threads (0: the process pool, 1: the calling thread).
core::Executor* threads_executor(unsigned threads, std::unique_ptr<core::ThreadPool>& pool) {
  if (threads == 1) return &core::serial_executor();
  if (threads > 1) {
    pool = std::make_unique<core::ThreadPool>(threads);
    return pool.get();
  }
  return &core::default_executor();
}

/// Opens the kernel device (--device) and loads the input glTF of a deform
/// command, reporting what fails (a bad --device or an unreadable input is
/// a usage error, a broken file invalid input); returns kExitOk or the
/// exit code.
int open_device_and_input(const std::string& input, const std::string& device_option,
                          KernelDevice& device, std::optional<scene::GltfDocument>& doc) {
  if (auto choice = device_choice(device_option); !choice)
    return report_error(input, choice.error(), kExitUsage);
  // A BEM package (or any ZIP) is not glTF: say so, by its first bytes,
  // rather than report them as bad JSON.
  std::uint8_t head[8] = {};
  std::ifstream(input, std::ios::binary).read(reinterpret_cast<char*>(head), sizeof head);
  if (auto kind = bem::sniff_container(core::Bytes(head, sizeof head)))
    return report_error(
        input, codes::DEFORM_INPUT_PACKAGE,
        std::string(*kind == bem::ContainerKind::kBinary ? "a BEM package" : "a ZIP archive") +
            ": deform commands take glTF or GLB; export a package's selection "
            "first (charkit bem export PACKAGE -o OUT.glb)",
        kExitUsage);
  auto loaded = scene::GltfDocument::load_file(input);
  if (!loaded)
    return report_error(input, loaded.error(),
                        core::is_io_error(loaded.error()) ? kExitUsage : kExitInvalid);
  doc.emplace(std::move(*loaded));
  // The work, for --device auto: the vertices of every primitive.
  std::uint64_t vertices = 0;
  for (const scene::GltfMesh& mesh : doc->asset().meshes)
    for (const scene::GltfPrimitive& p : mesh.primitives)
      if (auto pos = p.attributes.find("POSITION"); pos && *pos < doc->asset().accessors.size())
        vertices += doc->asset().accessors[*pos].count;
  auto opened = open_kernel_device(device_option, vertices);
  if (!opened) return report_error(input, opened.error(), kExitUsage);
  if (!opened->note.empty()) report_info(input, "device auto: cpu (" + opened->note + ")");
  device = std::move(*opened);
  return kExitOk;
}

int run_morph(const MorphArgs& a) {
  ops::GltfMorphOptions o;
  o.mesh = a.mesh;
  for (const std::string& w : a.weights) {
    std::string name;
    float weight = 0;
    if (!parse_weight(w, name, weight))
      return report_error(a.input, usage("--weights: \"" + w + "\" is not NAME=W"), kExitUsage);
    o.weights[name] = weight;
  }
  if (lower_extension(a.output) != ".glb")
    return report_error(a.input, usage("the output must be a .glb file: " + a.output), kExitUsage);
  std::unique_ptr<core::ThreadPool> pool;
  o.run.executor = threads_executor(a.threads, pool);
  KernelDevice device;
  std::optional<scene::GltfDocument> doc;
  if (int rc = open_device_and_input(a.input, a.device, device, doc); rc != kExitOk) return rc;
  o.gpu = device.gpu.get();
  auto r = ops::apply_gltf_morphs(*doc, o);
  if (!r) {
    const bool unknown_name = r.error().code == deform::codes::DEFORM_MORPH_TARGET;
    return report_error(a.input, r.error(), unknown_name ? kExitUsage : kExitInvalid);
  }
  if (auto st = write_output_file(a.output, r->glb); !st)
    return report_error(a.output, st.error(), kExitUsage);
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
                    {"device", device.name},
                    {"bytes", r->glb.size()},
                    {"meshes", std::move(meshes)}});
    return kExitOk;
  }
  std::cout << "wrote " << printable(a.output) << ": " << morphed << " of " << r->meshes.size()
            << " meshes with morph targets morphed, " << records
            << " 40-byte records applied on the " << printable(device.name) << " device\n";
  return kExitOk;
}

struct SubdivideArgs {
  std::string input;
  std::string output;
  std::vector<float> reference;
  float strength = 1.0F;
  std::string strength_attribute;
  float projection_ratio = 1978.1837F;
  float start = 0.7F;
  float slope = 5.0F;
  int branch = 1;
  std::string edge_rule = "average";
  float split_threshold = 0.0F;
  std::optional<float> geometry_scale;
  bool no_smooth = false;
  std::string mesh;
  std::string device;
  unsigned threads = 0;
  bool json = false;
};

int run_subdivide(const SubdivideArgs& a) {
  ops::GltfSubdivideOptions o;
  if (!a.reference.empty()) {
    if (a.reference.size() != 3)
      return report_error(a.input, usage("--reference takes X,Y,Z"), kExitUsage);
    o.params.distance_control = true;
    o.params.reference = {a.reference[0], a.reference[1], a.reference[2]};
  }
  if (!std::isfinite(a.strength) || a.strength < 0.0F || a.strength > 1.0F)
    return report_error(a.input, usage("--strength is between 0 and 1"), kExitUsage);
  o.strength = a.strength;
  o.strength_attribute = a.strength_attribute;
  o.geometry_scale = a.geometry_scale;
  o.params.projection_ratio = a.projection_ratio;
  o.params.start_threshold = a.start;
  o.params.slope = a.slope;
  o.params.branch_multiplier = static_cast<float>(a.branch);
  o.params.edge_rule = a.edge_rule == "min"   ? deform::EdgeStrengthRule::kMinimum
                       : a.edge_rule == "max" ? deform::EdgeStrengthRule::kMaximum
                                              : deform::EdgeStrengthRule::kAverage;
  o.params.split_threshold = a.split_threshold;
  o.params.smooth = !a.no_smooth;
  o.mesh = a.mesh;
  if (lower_extension(a.output) != ".glb")
    return report_error(a.input, usage("the output must be a .glb file: " + a.output), kExitUsage);
  std::unique_ptr<core::ThreadPool> pool;
  o.run.executor = threads_executor(a.threads, pool);
  KernelDevice device;
  std::optional<scene::GltfDocument> doc;
  if (int rc = open_device_and_input(a.input, a.device, device, doc); rc != kExitOk) return rc;
  o.gpu = device.gpu.get();
  auto r = ops::subdivide_gltf(*doc, o);
  if (!r) {
    const bool option = r.error().code == deform::codes::DEFORM_SUBDIV_PARAM;
    return report_error(a.input, r.error(), option ? kExitUsage : kExitInvalid);
  }
  for (const std::string& note : r->notes) report_info(a.input, note);
  if (auto st = write_output_file(a.output, r->glb); !st)
    return report_error(a.output, st.error(), kExitUsage);
  std::size_t tri_in = 0, tri_out = 0, v_in = 0, v_out = 0;
  for (const auto& m : r->meshes) {
    tri_in += m.triangles_in;
    tri_out += m.triangles_out;
    v_in += m.vertices_in;
    v_out += m.vertices_out;
  }
  if (a.json) {
    Json meshes = Json::array();
    for (const auto& m : r->meshes)
      meshes.push_back(Json{{"name", m.name},
                            {"primitives", m.primitives},
                            {"verticesIn", m.vertices_in},
                            {"verticesOut", m.vertices_out},
                            {"trianglesIn", m.triangles_in},
                            {"trianglesOut", m.triangles_out},
                            {"edges", m.edges},
                            {"edgesSplit", m.edges_split}});
    print_json(Json{{"input", a.input},
                    {"output", a.output},
                    {"device", device.name},
                    {"bytes", r->glb.size()},
                    {"meshes", std::move(meshes)}});
    return kExitOk;
  }
  std::cout << "wrote " << printable(a.output) << ": " << r->meshes.size() << " meshes, " << tri_in
            << " -> " << tri_out << " triangles, " << v_in << " -> " << v_out << " vertices on the "
            << printable(device.name) << " device\n";
  return kExitOk;
}

}  // namespace

void add_deform_commands(CLI::App& app, int& exit_code) {
  CLI::App* deform = app.add_subcommand(
      "deform", "Character deformation kernels: sparse morph blending, adaptive subdivision");
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
  add_device_option(*morph, ma->device);
  morph->add_option("--threads", ma->threads, "Kernel threads (0: all cores)")
      ->capture_default_str();
  morph->add_flag("--json", ma->json, "Print a JSON summary (meshes, records, weights applied)");
  morph->footer(
      "Exit status: 0 written, 1 invalid input, 2 usage or I/O error (an unknown target name "
      "lists the names).\nGuide: docs/deform/morph40.md");
  morph->callback([ma, &exit_code] { exit_code = run_morph(*ma); });

  auto sa = std::make_shared<SubdivideArgs>();
  CLI::App* subdiv = deform->add_subcommand(
      "subdivide",
      "Subdivide a glTF file's triangle meshes with the adaptive Loop-style kernels: each edge "
      "whose strength (per-vertex 6-bit strength, optionally limited by distance from a "
      "reference point) is above the threshold gets a new vertex between the midpoint and the "
      "Loop edge point, and each triangle with k split edges becomes 1 + k triangles. "
      "Normals, tangents, UVs, colours, skin weights and morph targets are carried over");
  subdiv->add_option("input", sa->input, "glTF, GLB or VRM file")->required()->type_name("IN");
  subdiv->add_option("-o,--output", sa->output, "Output GLB file")
      ->required()
      ->type_name("OUT.glb");
  subdiv
      ->add_option("--reference", sa->reference,
                   "Turn the distance control on, measuring from this point (model units)")
      ->delimiter(',')
      ->expected(3)
      ->type_name("X,Y,Z");
  subdiv
      ->add_option("--strength", sa->strength,
                   "Every vertex's strength in [0, 1], stored as round(S × 63)")
      ->capture_default_str();
  subdiv
      ->add_option("--strength-attribute", sa->strength_attribute,
                   "Read each vertex's strength in [0, 1] from this attribute's first "
                   "channel (e.g. _SUBDIV_STRENGTH or COLOR_0) instead of --strength")
      ->type_name("NAME");
  subdiv
      ->add_option("--geometry-scale", sa->geometry_scale,
                   "Every vertex's geometry scale (default: the mean length of its edges)")
      ->type_name("G");
  subdiv->add_option("--projection-ratio", sa->projection_ratio, "Distance control: ratio")
      ->capture_default_str();
  subdiv->add_option("--start", sa->start, "Distance control: start threshold")
      ->capture_default_str();
  subdiv->add_option("--slope", sa->slope, "Distance control: transition slope")
      ->capture_default_str();
  subdiv->add_option("--branch", sa->branch, "Branch multiplier of the distance weight")
      ->check(CLI::IsMember({1, 3}))
      ->capture_default_str();
  subdiv
      ->add_option("--edge-rule", sa->edge_rule,
                   "An edge's strength from its endpoints': average, min or max")
      ->check(CLI::IsMember({"average", "min", "max"}))
      ->capture_default_str();
  subdiv
      ->add_option("--split-threshold", sa->split_threshold,
                   "Split the edges whose strength is above this")
      ->capture_default_str();
  subdiv->add_flag("--no-smooth", sa->no_smooth,
                   "New vertices at edge midpoints (no Loop smoothing)");
  subdiv->add_option("--mesh", sa->mesh, "Only the mesh with this name")->type_name("NAME");
  add_device_option(*subdiv, sa->device);
  subdiv->add_option("--threads", sa->threads, "Kernel threads (0: all cores)")
      ->capture_default_str();
  subdiv->add_flag("--json", sa->json, "Print a JSON summary (meshes, vertices, triangles, edges)");
  subdiv->footer(
      "Exit status: 0 written, 1 invalid input, 2 usage or I/O error.\n"
      "Guide: docs/deform/subdivision.md");
  subdiv->callback([sa, &exit_code] { exit_code = run_subdivide(*sa); });
}

}  // namespace charkit::app
