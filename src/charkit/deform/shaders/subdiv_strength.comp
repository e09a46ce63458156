// Subdivision kernel 1 (the character-rendering frame analysis §6): per
// vertex its allowed strength and its copy into the 48-byte output; per edge
// its strength and the new vertex's normal and tangent. Output records are the
// vertices then the edges; one dispatch covers records [record_begin,
// record_end) (a chunk of at most one storage-buffer binding), invocation i
// record record_begin + i, written at i of the chunk. The edge table binding
// holds the chunk's edges from edge_begin on; the vertex arrays and edge
// strengths are whole.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;

#include "subdiv_types.glsl"

layout(std430, set = 0, binding = 0) readonly buffer InVertices { InVertex in_vertices[]; };
layout(std430, set = 0, binding = 1) readonly buffer Extras { uint extras[]; };
layout(std430, set = 0, binding = 2) readonly buffer Edges { uint edge_words[]; };  // from edge_begin
layout(std430, set = 0, binding = 3) buffer OutVertices { vec4 out_vertices[]; };  // 3 per record
layout(std430, set = 0, binding = 4) buffer EdgeStrength { float edge_strength[]; };

layout(push_constant) uniform Push {
  vec4 reference_and_control;  // xyz reference, w: 1 = distance control on
  float projection_ratio;
  float start_threshold;
  float slope;
  float branch_multiplier;
  uint vertex_count;
  uint edge_begin;  // the first edge in the Edges binding
  uint index_bits;
  uint edge_rule;  // 0 average, 1 min, 2 max
  uint record_begin;
  uint record_end;
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
  const uint r = pc.record_begin + gl_GlobalInvocationID.x;
  if (r >= pc.record_end) return;
  const uint o = 3u * gl_GlobalInvocationID.x;
  if (r < pc.vertex_count) {
    out_vertices[o] = vec4(in_position(r), vertex_strength(r));
    out_vertices[o + 1u] = vec4(in_normal(r), 0.0);
    out_vertices[o + 2u] = vec4(in_tangent(r), in_vertices[r].tangent[3]);
    return;
  }
  const uint i = r - pc.vertex_count;
  const Edge e = load_edge(i - pc.edge_begin, pc.index_bits);
  precise const float sa = vertex_strength(e.a);
  precise const float sb = vertex_strength(e.b);
  precise const float s = pc.edge_rule == 1u ? min(sa, sb) : pc.edge_rule == 2u ? max(sa, sb) : 0.5 * (sa + sb);
  edge_strength[i] = s;
  out_vertices[o + 1u] = vec4(direction_sum(in_normal(e.a), in_normal(e.b)), 0.0);
  out_vertices[o + 2u] = vec4(direction_sum(in_tangent(e.a), in_tangent(e.b)), in_vertices[e.a].tangent[3]);
}
