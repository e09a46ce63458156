// Runs one shading function of shading.glsl on N inputs so the tests can
// compare it with the C++ reference (render/shading_gpu.h).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;

#include "shading.glsl"

layout(std430, set = 0, binding = 0) readonly buffer InA { vec4 in_a[]; };
layout(std430, set = 0, binding = 1) readonly buffer InB { vec4 in_b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { vec4 out_v[]; };

layout(push_constant) uniform Push {
  uint function;  // 0 lut_shape, 1 encode_motion, 2 decode_motion, 3 shadow_colour, 4 visibility
  uint count;
  vec2 params;    // exposure / (scale, zero) / (value, saturation)
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.count) return;
  const vec4 a = in_a[i];
  const vec4 b = in_b[i];
  vec4 r = vec4(0.0);
  if (pc.function == 0u) r.xyz = lut_shape(a.xyz, pc.params.x);
  else if (pc.function == 1u) r.xy = encode_motion(a, b, pc.params.x, pc.params.y);
  else if (pc.function == 2u) r.xy = decode_motion(a.xy, pc.params.x, pc.params.y);
  else if (pc.function == 3u) r.xyz = shadow_colour(a.xyz, pc.params.x, pc.params.y);
  else r.x = shadow_visibility(a.x, a.y, a.z, a.w != 0.0);
  out_v[i] = r;
}
