// The C API (charkit/capi/c_api.h): pose models, the engine bridge (.nmn/.onnx),
// the pose library, and the BEM and motion basics. docs/c_api.md.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "charkit/bem/container.h"
#include "charkit/bem/validate.h"
#include "charkit/capi/c_api.h"
#include "charkit/capi/detail.h"
#include "charkit/capi/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/deformer/bake.h"
#include "charkit/deformer/deformer_file.h"
#include "charkit/deformer/engine_import.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/nmn.h"
#include "charkit/deformer/nmn_export.h"
#include "charkit/deformer/nmn_sidecar.h"
#include "charkit/deformer/npy.h"
#include "charkit/deformer/onnx.h"
#include "charkit/motion/convert_file.h"

using namespace charkit;
using capi::bad_argument;
using capi::fail;
using capi::guarded;
using core::Json;

namespace {

// Options JSON: an object whose members are all known (a typo is an error,
// never ignored) and of the right type.
class Options {
 public:
  static charkit_status parse(const char* text, Options& out) {
    if (!text || !*text) return CHARKIT_OK;
    auto j = core::parse_json_strict(text);
    if (!j) return fail(j.error());
    if (!j->is_object()) return bad_argument("options must be a JSON object");
    out.j_ = std::move(*j);
    return CHARKIT_OK;
  }
  // Every member must be one of `known`.
  charkit_status only(std::initializer_list<const char*> known) const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      bool ok = false;
      for (const char* k : known) ok = ok || it.key() == k;
      if (!ok) return bad_argument("unknown option \"" + it.key() + "\"");
    }
    return CHARKIT_OK;
  }
  template <typename T>
  charkit_status number(const char* key, T& v) const {
    if (!j_.contains(key)) return CHARKIT_OK;
    const Json& x = j_[key];
    if constexpr (std::is_integral_v<T>) {
      if (!x.is_number_unsigned() && !(x.is_number_integer() && x.template get<long long>() >= 0))
        return bad_argument(std::string("option \"") + key + "\" must be a whole number >= 0");
      v = static_cast<T>(x.template get<unsigned long long>());
    } else {
      if (!x.is_number() || !std::isfinite(x.template get<double>()))
        return bad_argument(std::string("option \"") + key + "\" must be a finite number");
      v = x.template get<T>();
    }
    return CHARKIT_OK;
  }
  bool has(const char* key) const { return j_.contains(key); }
  charkit_status string(const char* key, std::string& v) const {
    if (!j_.contains(key)) return CHARKIT_OK;
    if (!j_[key].is_string())
      return bad_argument(std::string("option \"") + key + "\" must be a string");
    v = j_[key].get<std::string>();
    return CHARKIT_OK;
  }
  charkit_status boolean(const char* key, bool& v) const {
    if (!j_.contains(key)) return CHARKIT_OK;
    if (!j_[key].is_boolean())
      return bad_argument(std::string("option \"") + key + "\" must be true or false");
    v = j_[key].get<bool>();
    return CHARKIT_OK;
  }
  charkit_status widths(const char* key, std::vector<std::size_t>& v) const {
    if (!j_.contains(key)) return CHARKIT_OK;
    const Json& x = j_[key];
    if (!x.is_array() || x.empty() || x.size() > 16)
      return bad_argument(std::string("option \"") + key + "\" must be a list of 1 to 16 widths");
    v.clear();
    for (const Json& w : x) {
      if (!w.is_number_unsigned() || w.get<unsigned long long>() == 0 ||
          w.get<unsigned long long>() > 65536)
        return bad_argument(std::string("option \"") + key +
                            "\": widths are whole numbers in [1, 65536]");
      v.push_back(w.get<std::size_t>());
    }
    return CHARKIT_OK;
  }

 private:
  Json j_ = Json::object();
};

#define CK_TRY(expr)                                             \
  do {                                                           \
    if (charkit_status s_ = (expr); s_ != CHARKIT_OK) return s_; \
  } while (false)

// A progress callback as deformer's std::function: a non-zero return throws
// capi::Cancelled, which unwinds the training and is caught by guarded().
std::function<void(std::size_t, std::size_t, double)> progress_of(charkit_progress_fn fn,
                                                                  void* user) {
  if (!fn) return {};
  return [fn, user](std::size_t done, std::size_t total, double loss) {
    if (fn(user, done, total, loss) != 0) throw capi::Cancelled{};
  };
}

charkit_status check_rows(const charkit_model* model, const float* features, float* out) {
  if (!model || !features || !out) return bad_argument("model, features or out is NULL");
  return CHARKIT_OK;
}

}  // namespace

extern "C" {

charkit_status charkit_model_train(const charkit_dataset* dataset, const char* options_json,
                                   uint64_t morph_count, const char* const* morph_names,
                                   const float* morph_deltas, charkit_progress_fn progress,
                                   void* user, charkit_model** out) {
  return guarded([&] {
    if (!dataset || !out) return bad_argument("dataset or out is NULL");
    *out = nullptr;
    Options op;
    CK_TRY(Options::parse(options_json, op));
    CK_TRY(op.only({"kind", "lambda", "hidden", "activation", "learning_rate", "iterations",
                    "batch_size", "seed", "standardize", "clamp", "basis", "basis_size", "holdout",
                    "split_seed", "targets", "weight_decay", "validation", "patience",
                    "check_every"}));
    // The defaults of `charkit deformer train`.
    deformer::PoseModelOptions o;
    o.mlp.iterations = 2000;
    o.mlp.weight_decay = 1.0;
    o.mlp.patience = 10;
    std::optional<double> validation;
    std::string kind = "linear", clamp = "training-range", basis = "learned", act = "elu";
    CK_TRY(op.string("kind", kind));
    CK_TRY(op.number("lambda", o.ridge.lambda));
    CK_TRY(op.widths("hidden", o.mlp.hidden));
    CK_TRY(op.string("activation", act));
    CK_TRY(op.number("learning_rate", o.mlp.adam.learning_rate));
    CK_TRY(op.number("weight_decay", o.mlp.weight_decay));
    CK_TRY(op.number("iterations", o.mlp.iterations));
    CK_TRY(op.number("batch_size", o.mlp.batch_size));
    CK_TRY(op.number("seed", o.mlp.seed));
    CK_TRY(op.boolean("standardize", o.mlp.standardize_inputs));
    CK_TRY(op.string("clamp", clamp));
    CK_TRY(op.string("basis", basis));
    CK_TRY(op.number("basis_size", o.basis_size));
    CK_TRY(op.number("holdout", o.holdout));
    CK_TRY(op.number("split_seed", o.split_seed));
    if (op.has("validation")) {
      double v = 0.0;
      CK_TRY(op.number("validation", v));
      validation = v;
    }
    CK_TRY(op.number("patience", o.mlp.patience));
    CK_TRY(op.number("check_every", o.mlp.validation_every));
    std::string targets = "bind-correction";
    CK_TRY(op.string("targets", targets));
    if (targets == "rest-deformation")
      o.targets = deformer::DeltaTargets::kRestDeformation;
    else if (targets != "bind-correction")
      return bad_argument("option \"targets\" is \"bind-correction\" or \"rest-deformation\"");
    if (kind == "linear")
      o.kind = deformer::ModelKind::kLinear;
    else if (kind == "neural")
      o.kind = deformer::ModelKind::kNeural;
    else
      return bad_argument("option \"kind\" is \"linear\" or \"neural\"");
    o.validation = validation.value_or(0.0);
    if (act == "elu")
      o.mlp.hidden_activation = deformer::Activation::kELU;
    else if (act == "relu")
      o.mlp.hidden_activation = deformer::Activation::kReLU;
    else if (act == "tanh")
      o.mlp.hidden_activation = deformer::Activation::kTanh;
    else
      return bad_argument("option \"activation\" is \"elu\", \"relu\" or \"tanh\"");
    if (clamp == "none")
      o.clamp = deformer::WeightClamp::kNone;
    else if (clamp == "unit")
      o.clamp = deformer::WeightClamp::kUnit;
    else if (clamp == "training-range")
      o.clamp = deformer::WeightClamp::kTrainingRange;
    else
      return bad_argument("option \"clamp\" is \"none\", \"unit\" or \"training-range\"");
    if (basis == "learned") {
      o.basis = deformer::NeuralBasis::kLearned;
    } else if (basis == "morph-targets") {
      o.basis = deformer::NeuralBasis::kMorphTargets;
      if (morph_count == 0 || !morph_names || !morph_deltas)
        return bad_argument("basis \"morph-targets\" needs morph targets (names and deltas)");
      const std::size_t n3 = dataset->d.vertex_count * 3;
      for (std::uint64_t m = 0; m < morph_count; ++m) {
        if (!morph_names[m]) return bad_argument("morph_names[" + std::to_string(m) + "] is NULL");
        o.morphs.names.emplace_back(morph_names[m]);
      }
      o.morphs.deltas.assign(morph_deltas, morph_deltas + morph_count * n3);
    } else {
      return bad_argument("option \"basis\" is \"learned\" or \"morph-targets\"");
    }
    auto m = deformer::train_pose_model(dataset->d, o, progress_of(progress, user));
    if (!m) return fail(m.error());
    *out = new charkit_model{std::move(*m)};
    return CHARKIT_OK;
  });
}

charkit_status charkit_model_load(const char* json_path, charkit_model** out) {
  return guarded([&] {
    if (!json_path || !out) return bad_argument("json_path or out is NULL");
    *out = nullptr;
    auto m = deformer::load_pose_model(json_path);
    if (!m) return fail(m.error());
    *out = new charkit_model{std::move(*m)};
    return CHARKIT_OK;
  });
}

charkit_status charkit_model_save(const charkit_model* model, const char* json_path) {
  return guarded([&] {
    if (!model || !json_path) return bad_argument("model or json_path is NULL");
    if (auto st = deformer::save_pose_model(model->m, json_path); !st) return fail(st.error());
    return CHARKIT_OK;
  });
}

void charkit_model_free(charkit_model* model) {
  delete model;
}

charkit_status charkit_model_info_json(const charkit_model* model, char** out_json) {
  return guarded([&] {
    if (!model || !out_json) return bad_argument("model or out_json is NULL");
    const deformer::PoseModel& m = model->m;
    Json j{{"kind", deformer::model_kind_name(m.kind)},
           {"layout", m.layout == deformer::FeatureLayout::kEngine ? "engine" : "axis-angle"},
           {"mesh", m.mesh_name},
           {"vertices", m.vertex_count},
           {"features", m.feature_count()},
           {"spec", deformer::input_spec_json(m.spec)},
           {"morphs", m.morph_names},
           {"fixed_first_morph", m.fixed_first_morph},
           {"clamp", deformer::clamp_name(m.clamp)},
           {"hyper", *m.hyper},
           {"stats", deformer::stats_json(m)}};
    *out_json = capi::dup_string(j.dump());
    return CHARKIT_OK;
  });
}

charkit_status charkit_model_offsets(const charkit_model* model, const float* features,
                                     uint64_t rows, float* out) {
  return guarded([&] {
    CK_TRY(check_rows(model, features, out));
    const deformer::PoseModel& m = model->m;
    const std::size_t f = m.feature_count(), n3 = m.vertex_count * 3;
    deformer::PoseModelEvaluator ev(m);
    if (!ev.offsets(std::span<const float>(features, rows * f), rows,
                    std::span<float>(out, rows * n3)))
      return bad_argument("the features do not match the model");
    return CHARKIT_OK;
  });
}

charkit_status charkit_model_weights(const charkit_model* model, const float* features,
                                     uint64_t rows, float* out) {
  return guarded([&] {
    CK_TRY(check_rows(model, features, out));
    const deformer::PoseModel& m = model->m;
    if (m.kind != deformer::ModelKind::kNeural)
      return bad_argument("a linear model has no morph weights");
    const std::size_t f = m.feature_count(), k = m.morph_count();
    deformer::PoseModelEvaluator ev(m);
    if (!ev.weights(std::span<const float>(features, rows * f), rows,
                    std::span<float>(out, rows * k)))
      return bad_argument("the features do not match the model");
    return CHARKIT_OK;
  });
}

charkit_status charkit_model_morphs(const charkit_model* model, float* out, uint64_t count) {
  return guarded([&] {
    if (!model || !out) return bad_argument("model or out is NULL");
    if (count != model->m.morphs.size())
      return bad_argument("out holds " + std::to_string(count) + " floats, the morphs " +
                          std::to_string(model->m.morphs.size()));
    std::copy(model->m.morphs.begin(), model->m.morphs.end(), out);
    return CHARKIT_OK;
  });
}

charkit_status charkit_model_error_json(const charkit_model* model, const charkit_dataset* dataset,
                                        char** out_json) {
  return guarded([&] {
    if (!model || !dataset || !out_json) return bad_argument("model, dataset or out_json is NULL");
    if (dataset->d.layout != model->m.layout ||
        dataset->d.feature_count() != model->m.feature_count() ||
        dataset->d.vertex_count != model->m.vertex_count)
      return fail(
          core::make_error(deformer::codes::MODEL_DATASET,
                           "the dataset's layout, features or vertices differ from the model's"));
    auto e = deformer::evaluate_error(model->m, dataset->d);
    if (!e) return fail(e.error());
    *out_json = capi::dup_string(deformer::error_stats_json(*e).dump());
    return CHARKIT_OK;
  });
}

// ---- engine bridge -----------------------------------------------------------

charkit_status charkit_export_nmn(const charkit_rig* rig, const charkit_dataset* dataset,
                                  const char* options_json, const char* nmn_path,
                                  charkit_progress_fn progress, void* user, charkit_model** out) {
  return guarded([&] {
    if (!rig || !dataset || !nmn_path) return bad_argument("rig, dataset or nmn_path is NULL");
    if (out) *out = nullptr;
    Options op;
    CK_TRY(Options::parse(options_json, op));
    CK_TRY(op.only({"hidden", "morphs", "iterations", "batch_size", "learning_rate", "seed"}));
    deformer::NmnExportOptions o;
    CK_TRY(op.widths("hidden", o.hidden));
    CK_TRY(op.number("morphs", o.morphs));
    CK_TRY(op.number("iterations", o.iterations));
    CK_TRY(op.number("batch_size", o.batch_size));
    CK_TRY(op.number("learning_rate", o.learning_rate));
    CK_TRY(op.number("seed", o.seed));
    o.progress = progress_of(progress, user);
    auto e = deformer::export_nmn(rig->rig, dataset->d, o);
    if (!e) return fail(e.error());
    if (auto st = deformer::save_nmn_export(*e, nmn_path); !st) return fail(st.error());
    if (out) *out = new charkit_model{std::move(e->model)};
    return CHARKIT_OK;
  });
}

charkit_status charkit_model_nmn_refusal(const charkit_model* model, char** out_why) {
  return guarded([&] {
    if (!model || !out_why) return bad_argument("model or out_why is NULL");
    *out_why = nullptr;
    if (std::string why = deformer::nmn_export_refusal(model->m); !why.empty())
      *out_why = capi::dup_string(why);
    return CHARKIT_OK;
  });
}

charkit_status charkit_model_export_nmn(const charkit_model* model,
                                        const charkit_dataset* check_dataset, const char* nmn_path,
                                        double* max_abs_diff) {
  return guarded([&] {
    if (!model || !nmn_path) return bad_argument("model or nmn_path is NULL");
    std::span<const float> rows;
    if (check_dataset) {
      if (check_dataset->d.layout != model->m.layout ||
          check_dataset->d.feature_count() != model->m.feature_count())
        return fail(core::make_error(
            deformer::codes::NMN_EXPORT_DATASET,
            "the check dataset's layout or feature count differs from the model's"));
      rows = check_dataset->d.features;
    }
    auto e = deformer::export_model_nmn(model->m, rows);
    if (!e) return fail(e.error());
    if (auto st = deformer::save_nmn_export(*e, nmn_path); !st) return fail(st.error());
    if (max_abs_diff) *max_abs_diff = e->reimport_max_abs_diff;
    return CHARKIT_OK;
  });
}

charkit_status charkit_import_network(const char* path, charkit_rig* rig, const charkit_spec* spec,
                                      int clamp, char** warnings_json, charkit_model** out) {
  return guarded([&] {
    if (!path || !rig || !spec || !out) return bad_argument("path, rig, spec or out is NULL");
    *out = nullptr;
    if (warnings_json) *warnings_json = nullptr;
    deformer::EngineImportOptions o;
    if (clamp == CHARKIT_CLAMP_UNIT)
      o.clamp = deformer::WeightClamp::kUnit;
    else if (clamp == CHARKIT_CLAMP_NONE)
      o.clamp = deformer::WeightClamp::kNone;
    else if (clamp != CHARKIT_CLAMP_AUTO)
      return bad_argument("clamp is CHARKIT_CLAMP_AUTO, CHARKIT_CLAMP_UNIT or CHARKIT_CLAMP_NONE");
    auto file = core::MappedFile::open(path);
    if (!file) return fail(file.error());
    Json warnings = Json::array();
    const auto kind = deformer::detect_deformer_file(file->bytes(), path);
    // The companions `deformer export-nmn` writes beside a network, as
    // `deformer import` reads them: the sidecar, and (for .nmn) the morphs.
    std::optional<deformer::NmnSidecar> sidecar;
    std::error_code ec;
    const std::string sidecar_path = deformer::nmn_sidecar_path(path);
    if (std::filesystem::is_regular_file(sidecar_path, ec)) {
      auto bytes = deformer::read_file_bytes(sidecar_path, std::size_t{64} << 20);
      if (!bytes) return fail(bytes.error());
      auto s = deformer::read_nmn_sidecar(core::as_chars(core::Bytes(*bytes)));
      if (!s) return fail(s.error());
      sidecar = std::move(*s);
    }
    if (kind == deformer::DeformerFileKind::kNmn) {
      auto n = deformer::read_nmn(file->bytes());
      if (!n) return fail(n.error());
      const auto morphs_path = deformer::nmn_morphs_path(path);
      if (std::filesystem::is_regular_file(morphs_path, ec)) {
        auto bytes = deformer::read_file_bytes(morphs_path, std::size_t{4} << 30);
        if (!bytes) return fail(bytes.error());
        auto targets = deformer::read_nmn_morphs(core::Bytes(*bytes), rig->rig.vertex_count());
        if (!targets) return fail(targets.error());
        deformer::add_morph_targets(rig->rig, std::move(*targets));
      } else {
        o.missing_morphs_file = morphs_path.string();
      }
    }
    auto m = deformer::import_engine_network(file->bytes(), path, sidecar, rig->rig, spec->spec, o);
    if (!m) {
      if (warnings_json) *warnings_json = capi::dup_string(warnings.dump());
      return fail(m.error());
    }
    if (m->hyper->contains("warnings"))
      for (const Json& w : (*m->hyper)["warnings"])
        warnings.push_back(w.value("code", "") + ": " + w.value("message", ""));
    if (warnings_json) *warnings_json = capi::dup_string(warnings.dump());
    *out = new charkit_model{std::move(*m)};
    return CHARKIT_OK;
  });
}

charkit_status charkit_network_run(const char* path, const float* inputs, uint64_t rows,
                                   uint64_t inputs_per_row, float* out, uint64_t capacity,
                                   uint64_t* outputs) {
  return guarded([&] {
    if (!path || (!inputs && rows > 0) || !outputs)
      return bad_argument("path, inputs or outputs is NULL");
    *outputs = 0;
    auto file = core::MappedFile::open(path);
    if (!file) return fail(file.error());
    std::uint64_t total = 0;
    if (rows > (std::uint64_t{1} << 30) || inputs_per_row > (std::uint64_t{1} << 24))
      return bad_argument("too many inputs");
    total = rows * inputs_per_row;
    std::span<const float> in(inputs, total);
    std::vector<float> result;
    std::size_t per_row = 0;
    switch (deformer::detect_deformer_file(file->bytes(), path)) {
      case deformer::DeformerFileKind::kNmn: {
        auto n = deformer::read_nmn(file->bytes());
        if (!n) return fail(n.error());
        if (n->group)
          return fail(core::make_error(deformer::codes::NMN_GROUP_ITEMS,
                                       "the network has a group model, which needs its sidecar's "
                                       "groups: run it with `charkit deformer run --sidecar`"));
        auto runner = deformer::NmnRunner::create(*n);
        if (!runner) return fail(runner.error());
        if (runner->input_count() != inputs_per_row)
          return bad_argument("the network takes " + std::to_string(runner->input_count()) +
                              " inputs per row, got " + std::to_string(inputs_per_row));
        per_row = runner->output_count();
        result.resize(rows * per_row);
        runner->run_batch(in, result, rows);
        break;
      }
      case deformer::DeformerFileKind::kOnnx: {
        auto m = deformer::load_onnx(file->bytes());
        if (!m) return fail(m.error());
        auto r = deformer::run_onnx_rows(*m, in, rows, inputs_per_row, &per_row);
        if (!r) return fail(r.error());
        result = std::move(*r);
        break;
      }
      default:
        return fail(core::make_error(capi::codes::CAPI_NOT_A_NETWORK,
                                     "not a network file (an Unreal .nmn or an ONNX .onnx)"));
    }
    *outputs = per_row;
    if (!out || capacity < result.size())
      return bad_argument("out holds " + std::to_string(capacity) + " floats, the outputs need " +
                          std::to_string(result.size()));
    std::copy(result.begin(), result.end(), out);
    return CHARKIT_OK;
  });
}

charkit_status charkit_pose_library_json(const charkit_spec* spec, const char* mesh, uint64_t poses,
                                         const char* const* pose_names, const double* rotations,
                                         const double* curves, const char* const* shape_keys,
                                         char** out_json) {
  return guarded([&] {
    if (!spec || !out_json || (poses > 0 && !pose_names))
      return bad_argument("spec, pose_names or out_json is NULL");
    const auto& s = spec->spec;
    std::vector<deformer::PoseLibraryEntry> entries;
    for (std::uint64_t i = 0; i < poses; ++i) {
      std::vector<deformer::Pose> one;
      CK_TRY(capi::poses_from(s, rotations ? rotations + i * s.bones.size() * 4 : nullptr,
                              curves ? curves + i * s.curves.size() : nullptr, 1, one));
      if (!pose_names[i]) return bad_argument("pose_names[" + std::to_string(i) + "] is NULL");
      entries.push_back({pose_names[i], std::move(one[0])});
    }
    std::vector<std::string> keys;
    if (shape_keys)
      for (std::uint64_t i = 0; i < poses; ++i)
        keys.emplace_back(shape_keys[i] ? shape_keys[i] : "");
    *out_json = capi::dup_string(deformer::write_pose_library(s, mesh ? mesh : "", entries, keys));
    return CHARKIT_OK;
  });
}

// ---- BEM and motion ------------------------------------------------------------

charkit_status charkit_bem_validate(const char* path, char** out_json) {
  return guarded([&] {
    if (!path || !out_json) return bad_argument("path or out_json is NULL");
    auto file = core::MappedFile::open(path);
    if (!file) return fail(file.error());
    bem::ValidationResult r = bem::validate_package(file->bytes());
    const bem::ValidationSummary& s = r.summary;
    auto version = [](std::optional<int> minor) {
      return minor ? Json("1." + std::to_string(*minor)) : Json(nullptr);
    };
    Json j{{"uri", path},
           {"container", bem::container_kind_name(s.kind)},
           {"declaredVersion", version(s.declared_minor)},
           {"effectiveVersion", version(s.effective_minor)},
           {"neededVersion", version(s.needed_minor)},
           {"payloadCount", s.payload_count},
           {"valid", r.valid()},
           {"issues", Json::parse(r.report.to_json_issues())}};
    *out_json = capi::dup_string(j.dump());
    return CHARKIT_OK;
  });
}

charkit_status charkit_motion_convert(const char* path, char** out_ndjson) {
  return guarded([&] {
    if (!path || !out_ndjson) return bad_argument("path or out_ndjson is NULL");
    std::string text;
    motion::OutputSink sink = [&text](std::string_view chunk) {
      text.append(chunk);
      return true;
    };
    auto r = motion::convert_motion_file(path, {}, sink);
    if (!r) return fail(r.error());
    *out_ndjson = capi::dup_string(text);
    return CHARKIT_OK;
  });
}

}  // extern "C"
