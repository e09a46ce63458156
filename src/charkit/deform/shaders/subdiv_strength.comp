// Subdivision kernel 1 (seed 003 §6): per vertex its allowed strength and
// its copy into the 48-byte output; per edge its strength and the new
// vertex's normal and tangent. Invocation i does vertex i and edge i.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;

#include "subdiv_types.glsl"

layout(std430, set = 0, binding = 0) readonly buffer InVertices { InVertex in_vertices[]; };
layout(std430, set = 0, binding = 1) readonly buffer Extras { uint extras[]; };
layout(std430, set = 0, binding = 2) readonly buffer Edges { uint edge_words[]; };
layout(std430, set = 0, binding = 3) buffer OutVertices { vec4 out_vertices[]; };  // 3 per vertex
layout(std430, set = 0, binding = 4) buffer EdgeStrength { float edge_strength[]; };

layout(push_constant) uniform Push {
  vec4 reference_and_control;  // xyz reference, w: 1 = distance control on
  float projection_ratio;
  float start_threshold;
  float slope;
  float branch_multiplier;
  uint vertex_count;
  uint edge_count;
  uint index_bits;
  uint edge_rule;  // 0 average, 1 min, 2 max
} pc;

#include "subdiv_common.glsl"

float vertex_strength(uint v) {
  const uint x = extras[v];
  precise const float s6 = float((x >> 16) & 63u) / 63.0;
  precise float weight = 1.0;
  if (pc.reference_and_control.w != 0.0) {
    precise const float distance = len3(in_position(v) - pc.reference_and_control.xyz);
    if (distance > 0.0) {
      precise const float scale = unpackHalf2x16(x & 0xFFFFu).x;
      precise const float projected = scale / distance * pc.projection_ratio;
      weight = clamp((projected - pc.start_threshold) * pc.slope, 0.0, 1.0);
    }
  }
  return min(s6, weight * pc.branch_multiplier);
}

vec3 direction_sum(vec3 a, vec3 b) {
  precise const vec3 s = a + b;
  precise const float len = len3(s);
  return len > 0.0 ? s * (1.0 / len) : a;
}

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < pc.vertex_count) {
    out_vertices[3u * i] = vec4(in_position(i), vertex_strength(i));
    out_vertices[3u * i + 1u] = vec4(in_normal(i), 0.0);
    out_vertices[3u * i + 2u] = vec4(in_tangent(i), in_vertices[i].tangent[3]);
  }
  if (i < pc.edge_count) {
    const Edge e = load_edge(i, pc.index_bits);
    precise const float sa = vertex_strength(e.a);
    precise const float sb = vertex_strength(e.b);
    precise const float s = pc.edge_rule == 1u ? min(sa, sb) : pc.edge_rule == 2u ? max(sa, sb) : 0.5 * (sa + sb);
    edge_strength[i] = s;
    const uint o = 3u * (pc.vertex_count + i);
    out_vertices[o + 1u] = vec4(direction_sum(in_normal(e.a), in_normal(e.b)), 0.0);
    out_vertices[o + 2u] = vec4(direction_sum(in_tangent(e.a), in_tangent(e.b)), in_vertices[e.a].tangent[3]);
  }
}
