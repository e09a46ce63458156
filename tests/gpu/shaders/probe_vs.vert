// State-test geometry: clip-space positions (z is the reversed-Z depth).
#version 450
layout(location = 0) in vec3 position;
void main() {
  gl_Position = vec4(position, 1.0);
}
