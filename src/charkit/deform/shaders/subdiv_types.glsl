// Shared by the subdivision kernels (docs/deform/subdivision.md): the input
// vertex and the unpacked edge, as deform/subdivision.h defines them.
struct InVertex {
  float position[3];
  float normal[3];
  float tangent[4];
};

struct Edge {
  uint a, b, c, d;  // c, d: NONE when the edge lacks full adjacency
};

const uint NONE = 0xFFFFFFFFu;

