# glslc -mfmt=num output (comma-separated words) -> a C++ header with the
# words as `static const std::uint32_t k<Name>Spirv[]`. Run by
# charkit_embed_shaders (src/charkit/gpu/CMakeLists.txt).
file(READ ${IN} words)
string(SUBSTRING ${NAME} 0 1 first)
string(TOUPPER ${first} first)
string(SUBSTRING ${NAME} 1 -1 rest)
file(WRITE ${OUT} "// Generated from ${FILE} by glslc; do not edit.\n#pragma once\n#include <cstdint>\nstatic const std::uint32_t k${first}${rest}Spirv[] = {\n${words}};\n")
