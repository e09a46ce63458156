// Subdivision kernel 2 (the character-rendering frame analysis §6): edge e's
// new position: the midpoint, or with full adjacency and smoothing the Loop
// candidate 3/8 (a + b) + 1/8 (c + d), optionally constrained to the mean
// normal, then interpolated from the midpoint by the edge strength. One
// dispatch covers edges [edge_begin, edge_begin + edge_count) (a chunk): the
// Edges binding holds those edges, the OutVertices binding is the chunk whose
// record out_record is edge edge_begin's; strengths and the bitmap are whole.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;

#include "subdiv_types.glsl"

layout(std430, set = 0, binding = 0) readonly buffer InVertices { InVertex in_vertices[]; };
layout(std430, set = 0, binding = 1) readonly buffer Edges { uint edge_words[]; };  // from edge_begin
layout(std430, set = 0, binding = 2) readonly buffer EdgeStrength { float edge_strength[]; };
layout(std430, set = 0, binding = 3) readonly buffer Constrained { uint constrained[]; };
layout(std430, set = 0, binding = 4) buffer OutVertices { vec4 out_vertices[]; };

layout(push_constant) uniform Push {
  uint edge_begin;
  uint edge_count;
  uint index_bits;
  uint flags;  // bit 0: smooth, bit 1: the constraint bitmap is given
  uint out_record;
  uint reserved;
} pc;

#include "subdiv_common.glsl"

void main() {
  const uint local = gl_GlobalInvocationID.x;
  if (local >= pc.edge_count) return;
  const uint i = pc.edge_begin + local;
  const Edge e = load_edge(local, pc.index_bits);
  precise const vec3 pa = in_position(e.a);
  precise const vec3 pb = in_position(e.b);
  precise const vec3 mid = (pa + pb) * 0.5;
  precise const float s = edge_strength[i];
  precise vec3 p = mid;
  if ((pc.flags & 1u) != 0u && e.c != NONE && e.d != NONE) {
    precise vec3 disp = ((pa + pb) * 0.375 + (in_position(e.c) + in_position(e.d)) * 0.125) - mid;
    if ((pc.flags & 2u) != 0u && ((constrained[i / 32u] >> (i % 32u)) & 1u) != 0u) {
      precise const vec3 s2 = in_normal(e.a) + in_normal(e.b);
      precise const float len = len3(s2);
      if (len > 0.0) {
        precise const vec3 dir = s2 * (1.0 / len);
        disp = dir * dot3(disp, dir);
      } else {
        disp = vec3(0.0);
      }
    }
    p = mid + disp * s;
  }
  out_vertices[3u * (pc.out_record + local)] = vec4(p, s);
}
