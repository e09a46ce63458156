// The character LUT as a file (docs/render/render.md, "LUT"): a .cube 3D
// LUT of 32 levels over the shaped colour (render/shading.h lut_shape),
// turned into the 1024 × 32 strip the eye pass samples (slice axis blue).
#pragma once

#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"
#include "charkit/render/shading.h"

namespace charkit::render {

/// Lines: optional TITLE, DOMAIN_MIN/MAX and # comments, LUT_3D_SIZE 32,
/// then 32768 "R G B" lines with red changing fastest (the .cube order).
/// Errors: RENDER_LUT (with the line), past 1 MiB per line or 8 MiB in all.
core::Result<std::vector<Vec4>> parse_cube_lut(core::Bytes text);

/// A 1024 × 32 PNG strip in the layout above (slice s at x in [32 s,
/// 32 s + 32), red along x, green along y), 8-bit channels / 255. Errors:
/// SCENE_IMAGE_DECODE, RENDER_LUT (another size).
core::Result<std::vector<Vec4>> parse_png_lut(core::Bytes png);

/// The identity cube as .cube text (each entry its own coordinates).
std::string identity_cube_lut();

}  // namespace charkit::render
