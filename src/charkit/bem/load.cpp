#include "charkit/bem/load.h"
#include "charkit/core/json.h"

namespace charkit::bem {

LoadedPackage load_package(core::Bytes file, const ValidateOptions& options) {
  LoadedPackage out{nullptr, core::Json(), validate_package(file, options), std::nullopt, {}};
  if (!out.validation.valid()) {
    out.error = "the package is not valid";
    for (const auto& issue : out.validation.report.issues())
      if (issue.severity == core::Severity::kError) {
        out.error = issue.code + ": " + issue.message;
        break;
      }
    return out;
  }
  if (out.validation.summary.kind == ContainerKind::kCollection) {
    out.error = "a collection bundle holds several packages; unpack it and pick one";
    return out;
  }
  core::Report scratch(1);
  out.package = Package::open(file, scratch);
  if (!out.package) {
    out.error = "the package could not be reopened";
    return out;
  }
  auto parsed =
      core::parse_json_strict(out.package->manifest_text(), core::JsonLimits{.max_depth = 48});
  if (!parsed) {
    out.error = parsed.error().to_string();
    return out;
  }
  out.manifest = std::move(*parsed);
  auto model = build_model(out.manifest, *out.package, out.validation.summary.effective_minor);
  if (!model) {
    out.error = model.error().to_string();
    return out;
  }
  out.model = std::move(*model);
  return out;
}

}  // namespace charkit::bem
