// The character passes' vertex shader: world-space vertices (rest pose or
// posed on the CPU) to the camera's clip space, or the light's for the
// shadow geometry. Clip positions are kept with y up (the motion formula of
// the character-rendering frame analysis) and flipped for Vulkan's raster.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "frame.glsl"

layout(location = 0) in vec3 position;
layout(location = 1) in vec3 normal;
layout(location = 2) in vec2 uv;
layout(location = 3) in vec3 previous;  // one frame earlier (posed motion)

layout(location = 0) out vec3 v_world;
layout(location = 1) out vec3 v_normal;
layout(location = 2) out vec2 v_uv;
layout(location = 3) out vec4 v_clip_now;
layout(location = 4) out vec4 v_clip_before;

void main() {
  const vec4 p = vec4(position, 1.0);
  v_world = position;
  v_normal = normal;
  v_uv = uv;
  precise const vec4 now = frame.view_proj * p;
  v_clip_now = now;
  v_clip_before = frame.prev_view_proj * vec4(previous, 1.0);
  // The classification pass redraws the face at equal depth (GreaterEqual):
  // the same program and inputs give the same position (precise: no
  // contraction that could differ between pipelines).
  precise vec4 clip = pc.mode == MODE_SHADOW ? frame.light_vp * p : now;
  clip.y = -clip.y;
  gl_Position = clip;
}
