// BEM inspection: what a package holds, gathered for people and tools
// (`charkit bem inspect`). Inspection is not validation: it describes what is
// there in a structurally readable package, skips what is malformed and never
// fails on bad input. Its result is a JSON document whose shape docs/cli.md
// describes; the CLI prints it as JSON or renders it as text.
#pragma once

#include "charkit/core/bytes.h"
#include "charkit/core/json_fwd.h"

namespace charkit::bem {

/// Describe a whole file (binary, ZIP or collection bundle). Keys, in order:
///   "container"       "binary" | "zip" | "collection" | "unknown"
///   "readable"        false when the container could not be opened at all
///   "problems"        container problems met while opening (Report JSON issues)
///   "header"          binary only: the 40-byte header fields
///   "declaredVersion" "1.m" from the header / ZIP "format_version", or null
///   "manifest"        {"member", "bytes", "parsed", "error"}
///   "package"         {"id", "name", "author", "version"}
///   "capabilities", "target", "appearances", "optionGroups", "textureSlots",
///   "meshes", "textures", "parameters", "meshDeformations", "rootOffset",
///   "drivers"         what the manifest declares (malformed entries skipped)
///   "payloads"        [{"id", "codec", "storedSize", "decodedSize", "ratio", ...}]
///   "payloadTotals"   {"count", "storedSize", "decodedSize", "ratio"}
///   "members"         collection only: [{"name", "storedSize", "decodedSize", "package"}]
core::Json inspect_package(core::Bytes file);

/// Human names of the numeric enums the manifest uses (Unity's).
const char* vertex_semantic_name(std::uint32_t semantic);
const char* vertex_format_name(std::uint32_t format);
/// "RGBA32", "BC7", …; "unsupported" for a value BEM does not allow.
const char* texture_format_name(std::uint32_t format);

}  // namespace charkit::bem
