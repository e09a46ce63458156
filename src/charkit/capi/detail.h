// Shared by the C API's translation units: the handle types, the thread's
// last error, and the guard that turns every C++ failure into a status.
#pragma once

#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "charkit/capi/c_api.h"
#include "charkit/capi/error_codes.h"
#include "charkit/core/result.h"
#include "charkit/deformer/dataset.h"
#include "charkit/deformer/pose.h"
#include "charkit/deformer/pose_model.h"
#include "charkit/scene/rig.h"

struct charkit_spec {
  charkit::deformer::InputSpec spec;
};
struct charkit_rig {
  charkit::scene::Rig rig;
};
struct charkit_dataset {
  charkit::deformer::Dataset d;
};
struct charkit_model {
  charkit::deformer::PoseModel m;
};

namespace charkit::capi {

/// Thrown from a progress callback wrapper when the caller's callback asks to
/// stop; caught by guarded() (never crosses the C boundary).
struct Cancelled {};

void clear_error();
/// Records e as the thread's last error; returns the status its code maps to
/// (IO_* -> CHARKIT_IO_ERROR, CAPI_ARGUMENT -> CHARKIT_BAD_ARGUMENT, ...).
charkit_status fail(const core::Error& e);
/// CAPI_ARGUMENT with this message.
charkit_status bad_argument(std::string message);

/// Runs f (returning charkit_status) with the last error cleared first and
/// every exception turned into a status: nothing thrown leaves the library.
template <typename F>
charkit_status guarded(F&& f) noexcept {
  clear_error();
  try {
    return std::forward<F>(f)();
  } catch (const Cancelled&) {
    return fail(core::make_error(codes::CAPI_CANCELLED, "cancelled by the progress callback"));
  } catch (const std::bad_alloc&) {
    return fail(core::make_error(codes::CAPI_INTERNAL, "out of memory"));
  } catch (const std::exception& e) {
    return fail(core::make_error(codes::CAPI_INTERNAL, std::string("internal error: ") + e.what()));
  } catch (...) {
    return fail(core::make_error(codes::CAPI_INTERNAL, "internal error"));
  }
}

/// A copy of s as a NUL-terminated string released by charkit_free.
char* dup_string(const std::string& s);

deformer::FeatureLayout layout_of(int layout);

/// Poses from caller arrays (rotations count x bones x 4, normalised unless
/// already unit within 1e-9; curves
/// count x curves), each value checked finite. CAPI_ARGUMENT otherwise.
charkit_status poses_from(const deformer::InputSpec& spec, const double* rotations,
                          const double* curves, std::uint64_t count,
                          std::vector<deformer::Pose>& out);
bool layout_ok(int layout);

}  // namespace charkit::capi
