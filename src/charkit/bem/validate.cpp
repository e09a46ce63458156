// Validation driver: open the container, parse the manifest strictly, pick
// the version whose rules apply, run the passes in order.
#include "charkit/bem/validate.h"

#include <algorithm>

#include "charkit/bem/detail/context.h"
#include "charkit/bem/error_codes.h"
#include "charkit/bem/model.h"
#include "charkit/bem/proof.h"
#include "charkit/core/json.h"

namespace charkit::bem {

bool ValidationResult::valid() const {
  if (report.has_errors()) return false;
  for (const auto& m : summary.members)
    if (m.report.has_errors()) return false;
  return true;
}

namespace {

std::optional<int> parse_format_version(const Json& j) {
  if (!j.is_string()) return std::nullopt;
  const auto& s = j.get_ref<const std::string&>();
  if (s.size() == 3 && s[0] == '1' && s[1] == '.' && s[2] >= '0' && s[2] <= '0' + kMaxMinor)
    return s[2] - '0';
  return std::nullopt;
}

/// §6/§9/§11: the exact selection proof, once every other rule holds (the
/// typed model is only defined for a valid manifest).
void run_selection_proof(const Json& manifest, const Package& pkg, int effective,
                         core::Report& report, ValidationSummary& summary) {
  auto located = [&](const std::string& pointer) {
    core::Location loc = core::Location::at_pointer(pointer);
    loc.member = pkg.manifest_member();
    return loc;
  };
  auto model = build_model(manifest, pkg, effective);
  if (!model) {
    const core::Error& e = model.error();
    report.add({e.code, core::Severity::kError, "§6", located(e.location.pointer),
                "the selection proof could not read the manifest: " + e.message});
    return;
  }
  ProofOptions options;
  options.max_issues = report.max_issues();
  auto proof = prove_selections(*model, options);
  if (!proof) {
    const core::Error& e = proof.error();
    report.add({e.code, core::Severity::kError, "§6", located("/option_groups"), e.message});
    return;
  }
  for (const auto& issue : proof->issues) {
    // check_options already reports an illegal default, per constraint.
    if (issue.code == codes::BEM_SELECTION_DEFAULT_ILLEGAL &&
        report.has_code(codes::BEM_DEFAULT_SELECTION_INVALID))
      continue;
    report.add(
        {issue.code, core::Severity::kError, issue.section, located(issue.pointer), issue.message});
  }
  summary.proof = std::move(*proof);
}

void validate_single(Package& pkg, const ValidateOptions& options, core::Report& report,
                     ValidationSummary& summary) {
  std::string_view text = pkg.manifest_text();
  core::Location manifest_loc;
  manifest_loc.member = pkg.manifest_member();

  // The parsed manifest is held against the memory budget: its text and
  // an estimate per value, which also bounds how many values are read.
  DecodeControl* control = pkg.decode_control();
  core::JsonLimits limits{.max_depth = 48};
  if (control && control->max_memory_bytes() != 0) {
    const std::uint64_t left = control->memory_left();
    limits.max_values = std::max<std::uint64_t>(
        1, (left - std::min<std::uint64_t>(left, text.size())) / core::kJsonBytesPerValue);
  }
  std::uint64_t values = 0;
  auto parsed = core::parse_json_strict(text, limits, &values);
  if (!parsed) {
    core::Error err = std::move(parsed).error();
    core::Location loc = err.location;
    loc.member = pkg.manifest_member();
    if (loc.offset && pkg.kind() == ContainerKind::kBinary) *loc.offset += pkg.manifest_offset();
    std::string message = "manifest: " + err.message;
    if (err.code == core::codes::JSON_TOO_MANY_VALUES) {
      control->note_memory_exceeded();
      message += ", which would pass the memory budget of " +
                 std::to_string(control->max_memory_bytes()) + " bytes for this package at " +
                 std::to_string(core::kJsonBytesPerValue) + " bytes a value";
    }
    report.error(manifest_json_code(err.code), "§3", loc, std::move(message));
    return;
  }
  const std::uint64_t manifest_bytes = text.size() + values * core::kJsonBytesPerValue;
  if (control) {
    if (auto st = control->hold(manifest_bytes, DecodeControl::Hold::kNow, "the parsed manifest");
        !st) {
      report.add({st.error().code, core::Severity::kError, "§3", manifest_loc,
                  "manifest: " + st.error().message});
      return;
    }
  }
  struct Release {
    DecodeControl* control;
    std::uint64_t n;
    ~Release() {
      if (control) control->release(n, DecodeControl::Hold::kNow);
    }
  } release_manifest{control, manifest_bytes};
  const Json& manifest = *parsed;
  if (!manifest.is_object()) {
    report.error(codes::BEM_MANIFEST_NOT_OBJECT, "§3", manifest_loc,
                 "manifest must be a JSON object");
    return;
  }

  // Which version's rules apply.
  std::optional<int> declared = pkg.declared_minor();
  if (auto it = manifest.find("format_version"); it != manifest.end()) {
    if (pkg.kind() == ContainerKind::kBinary) {
      report.warning(codes::BEM_FORMAT_VERSION_IN_BINARY, "§14",
                     core::Location::at_pointer("/format_version"),
                     "\"format_version\" is a ZIP container hint; binary packages take the version "
                     "from the header and writers drop this key");
    } else if (auto v = parse_format_version(*it)) {
      declared = *v;
      pkg.set_declared_minor(declared);
    } else {
      report.error(codes::BEM_FORMAT_VERSION, "§14", core::Location::at_pointer("/format_version"),
                   "\"format_version\" must be one of \"1.0\" .. \"1.5\"");
    }
  }
  bool v10_structure =
      (manifest.contains("appearances") || manifest.contains("default_appearance_id")) &&
      !manifest.contains("option_groups");
  int effective = declared ? *declared : (v10_structure ? 0 : kMaxMinor);

  Context ctx(manifest, pkg, report, options, effective, declared.has_value());
  ctx.structure_v10 = v10_structure;
  check_top_level(ctx);
  check_target(ctx);
  check_textures(ctx);
  check_options(ctx);
  check_meshes(ctx);
  check_morphs(ctx);
  check_v15(ctx);
  if (options.check_payloads) check_payload_data(ctx);
  check_final(ctx);
  if (control && control->cancelled() && !report.has_code(codes::BEM_CANCELLED))
    report.error(codes::BEM_CANCELLED, "§2", manifest_loc, "validation was cancelled");
  if (!report.has_errors()) run_selection_proof(manifest, pkg, effective, report, summary);

  summary.declared_minor = declared;
  summary.effective_minor = effective;
  summary.needed_minor = ctx.needed_minor();
  summary.used_capabilities = ctx.used_capabilities;
  // §11's per-selection limits differ by version too (texture bindings 32 →
  // 64 from 1.2, decoded bytes 512/768/1536 MiB): the lowest version that
  // expresses the content is also one whose limits hold its worst cases.
  if (summary.proof)
    summary.needed_minor = lowest_minor_for_worst_cases(*summary.proof, summary.needed_minor);
  if (!declared)
    report.info(codes::BEM_VERSION_INFERRED, "§14", manifest_loc,
                "ZIP package without \"format_version\": content needs BEM 1." +
                    std::to_string(summary.needed_minor));
}

/// Stop reasons of a DecodeControl: budget or cancel errors end a loop.
bool stops(const core::Error& e) {
  return e.code == codes::BEM_DECODE_BUDGET || e.code == codes::BEM_MEMORY_BUDGET ||
         e.code == codes::BEM_CANCELLED;
}

void validate_into(core::Bytes file, const ValidateOptions& options, core::Report& report,
                   ValidationSummary& summary, bool inside_collection, DecodeControl& control) {
  auto pkg = Package::open(file, report, &control);
  if (!pkg) return;
  summary.kind = pkg->kind();
  summary.payload_count = pkg->payload_count();
  summary.declared_minor = pkg->declared_minor();

  if (pkg->kind() != ContainerKind::kCollection) {
    validate_single(*pkg, options, report, summary);
    return;
  }
  if (inside_collection) {
    report.error(codes::BEM_COLLECTION_NESTED, "§14", {},
                 "a collection bundle inside a collection bundle is not a BEM package");
    return;
  }
  for (std::size_t i = 0; i < pkg->members().size(); ++i) {
    const auto& m = pkg->members()[i];
    if (auto p = control.poll(); !p) {
      report.add({p.error().code, core::Severity::kError, "§14", {}, p.error().message});
      return;
    }
    ValidationSummary::Member member{m.name, core::Report(options.max_issues), 0, std::nullopt};
    auto bytes = pkg->read_member(i);
    if (!bytes) {
      core::Error err = std::move(bytes).error();
      err.location.member = m.name;
      member.report.add({err.code, core::Severity::kError, "§14", err.location, err.message});
      summary.members.push_back(std::move(member));
      if (stops(err)) {
        // The whole bundle stops here: the reason is the package's too.
        report.add({err.code, core::Severity::kError, "§14", err.location,
                    err.message + " (validation stopped at member " + std::to_string(i + 1) +
                        " of " + std::to_string(pkg->members().size()) + ")"});
        return;
      }
      continue;
    }
    ValidationSummary inner;
    validate_into(bytes->bytes(), options, member.report, inner, /*inside_collection=*/true,
                  control);
    member.effective_minor = inner.effective_minor;
    member.proof = std::move(inner.proof);
    const bool stopped =
        control.budget_exceeded() || control.memory_exceeded() || control.cancelled();
    summary.members.push_back(std::move(member));
    if (stopped) {
      core::ErrorCode code = codes::BEM_CANCELLED;
      std::string why = "validation was cancelled";
      if (!control.cancelled() && control.budget_exceeded()) {
        code = codes::BEM_DECODE_BUDGET;
        why = "the decode budget of " + std::to_string(control.max_decoded_bytes()) +
              " bytes was reached";
      } else if (!control.cancelled()) {
        code = codes::BEM_MEMORY_BUDGET;
        why = "the memory budget of " + std::to_string(control.max_memory_bytes()) +
              " bytes was reached";
      }
      report.error(code, "§14", {},
                   why + " in member \"" + m.name + "\"; validation stopped there");
      return;
    }
  }
}

}  // namespace

ValidationResult validate_package(core::Bytes file, const ValidateOptions& options) {
  ValidationResult r{core::Report(options.max_issues), {}};
  DecodeControl control(options.max_decoded_bytes, options.cancel, options.max_memory_bytes);
  validate_into(file, options, r.report, r.summary, false, control);
  r.summary.decoded_bytes = control.decoded_bytes();
  r.summary.budget_exceeded = control.budget_exceeded();
  r.summary.memory_exceeded = control.memory_exceeded();
  r.summary.peak_memory_bytes = control.peak_memory();
  r.summary.cancelled = control.cancelled();
  if (r.summary.cancelled && !r.report.has_code(codes::BEM_CANCELLED))
    r.report.error(codes::BEM_CANCELLED, "§2", {}, "validation was cancelled");
  return r;
}

}  // namespace charkit::bem
