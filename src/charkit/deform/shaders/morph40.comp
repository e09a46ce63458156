// 40-byte sparse morph blend (the character-rendering frame analysis §5,
// docs/deform/morph40.md): one invocation per record of one target;
// invocations past the record count return at once. vertex += weight × delta
// for position, normal and tangent xyz; the tangent's w is never written.
// `precise` keeps each multiply-add unfused, so the result has the CPU
// reference's bits.
#version 450

layout(local_size_x = 64) in;

struct Record {
  uint vertex;
  float position[3];
  float normal[3];
  float tangent[3];
};

struct Vertex {
  float position[3];
  float normal[3];
  float tangent[4];
};

layout(std430, set = 0, binding = 0) readonly buffer Records { Record records[]; };
layout(std430, set = 0, binding = 1) buffer Vertices { Vertex vertices[]; };

layout(push_constant) uniform Push {
  uint first;         // first record of this dispatch
  uint count;         // records in this dispatch
  float weight;
  uint vertex_count;  // vertices in the bound chunk
  uint vertex_base;   // the chunk's first vertex (arrays past one binding's range are chunked)
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.count) return;
  const Record r = records[pc.first + i];
  // Records of vertices outside the bound chunk are another dispatch's.
  if (r.vertex < pc.vertex_base || r.vertex - pc.vertex_base >= pc.vertex_count) return;
  const uint v = r.vertex - pc.vertex_base;
  for (int k = 0; k < 3; ++k) {
    precise float p = vertices[v].position[k] + pc.weight * r.position[k];
    precise float n = vertices[v].normal[k] + pc.weight * r.normal[k];
    precise float t = vertices[v].tangent[k] + pc.weight * r.tangent[k];
    vertices[v].position[k] = p;
    vertices[v].normal[k] = n;
    vertices[v].tangent[k] = t;
  }
}
