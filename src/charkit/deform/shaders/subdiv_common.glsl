// Shared by the subdivision kernels, included after the buffers: reading
// the edge table and the input vertices.
// Edge e of a table with 16- or 32-bit indices.
Edge load_edge(uint e, uint index_bits) {
  Edge r;
  if (index_bits == 16u) {
    const uint ab = edge_words[2u * e];
    const uint cd = edge_words[2u * e + 1u];
    r.a = ab & 0xFFFFu;
    r.b = ab >> 16;
    r.c = (cd & 0xFFFFu) == 0xFFFFu ? NONE : (cd & 0xFFFFu);
    r.d = (cd >> 16) == 0xFFFFu ? NONE : (cd >> 16);
  } else {
    r.a = edge_words[4u * e];
    r.b = edge_words[4u * e + 1u];
    r.c = edge_words[4u * e + 2u];
    r.d = edge_words[4u * e + 3u];
  }
  return r;
}

vec3 in_position(uint v) {
  return vec3(in_vertices[v].position[0], in_vertices[v].position[1], in_vertices[v].position[2]);
}
vec3 in_normal(uint v) {
  return vec3(in_vertices[v].normal[0], in_vertices[v].normal[1], in_vertices[v].normal[2]);
}
vec3 in_tangent(uint v) {
  return vec3(in_vertices[v].tangent[0], in_vertices[v].tangent[1], in_vertices[v].tangent[2]);
}

// length and dot as the CPU reference computes them: ((x·x + y·y) + z·z),
// each product and sum rounded (precise: no fused multiply-add).
float dot3(vec3 a, vec3 b) {
  precise float d = a.x * b.x + a.y * b.y + a.z * b.z;
  return d;
}
float len3(vec3 v) {
  return sqrt(dot3(v, v));
}
