// Subdivision kernel 3 (the character-rendering frame analysis §6): each
// triangle with k split edges writes 1 + k triangles. Output allocation in two
// levels: the 64 invocations of a workgroup put their index counts in shared
// memory, one invocation sums them and takes the group's range with one atomic
// add on the draw command's index count, and each invocation writes at the
// group's base plus its offset in the group. The draw buffer is the
// VkDrawIndexedIndirectCommand (the host sets it to {0, 1, 0, 0, 0}).
#version 450
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer Indices { uint indices[]; };
layout(std430, set = 0, binding = 1) readonly buffer TriangleEdges { uint triangle_edges[]; };
layout(std430, set = 0, binding = 2) readonly buffer EdgeStrength { float edge_strength[]; };
layout(std430, set = 0, binding = 3) writeonly buffer OutIndices { uint out_indices[]; };
layout(std430, set = 0, binding = 4) buffer Draw { uint index_count; uint instance_count; uint first_index; int vertex_offset; uint first_instance; } draw;

layout(push_constant) uniform Push {
  uint vertex_count;
  uint triangle_count;
  float split_threshold;
} pc;

shared uint counts[64];
shared uint group_base;

void put(inout uint o, uint a, uint b, uint c) {
  out_indices[o] = a;
  out_indices[o + 1u] = b;
  out_indices[o + 2u] = c;
  o += 3u;
}

void main() {
  const uint t = gl_GlobalInvocationID.x;
  const uint lid = gl_LocalInvocationID.x;
  uint mask = 0u;
  if (t < pc.triangle_count)
    for (uint k = 0u; k < 3u; ++k)
      if (edge_strength[triangle_edges[3u * t + k]] > pc.split_threshold) mask |= 1u << k;
  const uint k_split = bitCount(mask);
  counts[lid] = t < pc.triangle_count ? 3u * (1u + k_split) : 0u;
  barrier();
  if (lid == 0u) {
    uint sum = 0u;
    for (uint j = 0u; j < 64u; ++j) {
      const uint c = counts[j];
      counts[j] = sum;  // exclusive prefix: each invocation's offset
      sum += c;
    }
    group_base = atomicAdd(draw.index_count, sum);
  }
  barrier();
  if (t >= pc.triangle_count) return;
  uint o = group_base + counts[lid];
  const uint V = pc.vertex_count;
  const uint c0 = indices[3u * t], c1 = indices[3u * t + 1u], c2 = indices[3u * t + 2u];
  const uint te0 = triangle_edges[3u * t], te1 = triangle_edges[3u * t + 1u], te2 = triangle_edges[3u * t + 2u];
  const uint c[3] = uint[3](c0, c1, c2);
  const uint te[3] = uint[3](te0, te1, te2);
  if (k_split == 0u) {
    put(o, c0, c1, c2);
  } else if (k_split == 1u) {
    const uint k = findLSB(mask);
    const uint p = c[k], q = c[(k + 1u) % 3u], r = c[(k + 2u) % 3u];
    const uint m = V + te[k];
    put(o, p, m, r);
    put(o, m, q, r);
  } else if (k_split == 2u) {
    const uint unsplit = findLSB(~mask & 7u);
    const uint k = (unsplit + 1u) % 3u;
    const uint p = c[k], q = c[(k + 1u) % 3u], r = c[(k + 2u) % 3u];
    const uint m0 = V + te[k], m1 = V + te[(k + 1u) % 3u];
    put(o, m0, q, m1);
    put(o, p, m0, m1);
    put(o, p, m1, r);
  } else {
    const uint m0 = V + te0, m1 = V + te1, m2 = V + te2;
    put(o, c0, m0, m2);
    put(o, m0, c1, m1);
    put(o, m2, m1, c2);
    put(o, m0, m1, m2);
  }
}
