// Loading a package for use (select, export, convert): validate it
// completely — container, manifest rules, payload contents and the
// selection proof — then keep the opened container, the parsed manifest and
// the typed model. Commands that act on one combination call this first, so
// they never plan a selection of a package that is not sound as a whole.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "charkit/bem/container.h"
#include "charkit/bem/model.h"
#include "charkit/bem/validate.h"
#include "charkit/core/json.h"

namespace charkit::bem {

struct LoadedPackage {
  /// The opened container; views into the caller's bytes, which must outlive it.
  std::unique_ptr<Package> package;
  core::Json manifest;
  ValidationResult validation;
  /// Set when the package is valid and is a single package (not a collection).
  std::optional<Model> model;
  /// Why `model` is empty: the first validation error, or a model error.
  std::string error;

  bool ok() const { return model.has_value(); }
};

/// Validate `file` with `options` and, when it is valid, build its model.
LoadedPackage load_package(core::Bytes file, const ValidateOptions& options = {});

}  // namespace charkit::bem
