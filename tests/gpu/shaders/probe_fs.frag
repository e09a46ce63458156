// State-test colours: each of the four targets gets its push-constant value.
#version 450
layout(push_constant) uniform Push {
  vec4 colour[4];
} pc;
layout(location = 0) out vec4 out0;
layout(location = 1) out vec4 out1;
layout(location = 2) out vec4 out2;
layout(location = 3) out vec4 out3;
void main() {
  out0 = pc.colour[0];
  out1 = pc.colour[1];
  out2 = pc.colour[2];
  out3 = pc.colour[3];
}
