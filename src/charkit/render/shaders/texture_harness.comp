// Runs a texture-reading shading function of shading.glsl on N inputs so the
// tests can compare it with the C++ reference (render/shading_gpu.h):
// 0 pcf9 (a = position, b = normal; the map at binding 2), 1 lut_sample
// (a = shaped colour; the strip at binding 2), 2 cascade_level (a = position,
// the spheres in the push constants), 3 cascade_rotation (a.xy = pixel).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;

#include "shading.glsl"

layout(std430, set = 0, binding = 0) readonly buffer InA { vec4 in_a[]; };
layout(std430, set = 0, binding = 1) readonly buffer InB { vec4 in_b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { vec4 out_v[]; };
layout(set = 0, binding = 3) uniform sampler2D map;

layout(push_constant) uniform Push {
  mat4 light_vp;      // pcf9; cascade_level: the four spheres as columns
  vec4 region;        // pcf9
  float normal_offset;
  float rotation;
  uint function;
  uint count;
  uint flags;         // bit 0: greater_equal (pcf9); bits 8-9: slice axis (lut)
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.count) return;
  const vec4 a = in_a[i];
  vec4 r = vec4(0.0);
  if (pc.function == 0u) {
    r.x = pcf9(map, a.xyz, in_b[i].xyz, pc.normal_offset, pc.light_vp, pc.region,
               (pc.flags & 1u) != 0u, pc.rotation);
  } else if (pc.function == 1u) {
    r.xyz = lut_sample(map, a.xyz, (pc.flags >> 8) & 3u);
  } else if (pc.function == 2u) {
    const vec4 spheres[4] = vec4[4](pc.light_vp[0], pc.light_vp[1], pc.light_vp[2], pc.light_vp[3]);
    r.x = float(cascade_level(a.xyz, spheres));
  } else {
    r.x = cascade_rotation(a.xy);
  }
  out_v[i] = r;
}
