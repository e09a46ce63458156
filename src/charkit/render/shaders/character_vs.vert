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

// MToon's outline width multiply texture (green channel), read per vertex.
layout(set = 0, binding = 10) uniform sampler2D outline_width_texture;

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
  if (pc.mode == MODE_OUTLINE) {
    // The inverted hull (VRMC_materials_mtoon 1.0, as three-vrm draws it):
    // the vertex pushed along its unit normal by the width factor × the
    // width texture's green channel; in screen coordinates also × the view
    // depth / the projection's [1][1], so that the push is that fraction of
    // half the image height whatever the distance. The shading keeps the
    // surface's position (v_world).
    const DrawData d = draws[pc.draw];
    float width = d.outline.x;
    if ((pc.flags & FLAG_OUTLINE_TEXTURED) != 0u)
      width *= textureLod(outline_width_texture, uv, 0.0).g;
    const vec3 n = dot(normal, normal) > 0.0 ? normalize(normal) : vec3(0.0);
    const bool screen = d.outline.y == 2.0;
    clip = frame.view_proj * vec4(position + n * (screen ? width * now.w / frame.view.x : width), 1.0);
    const vec4 before = frame.prev_view_proj * vec4(previous, 1.0);
    v_clip_before = frame.prev_view_proj *
                    vec4(previous + n * (screen ? width * before.w / frame.view.x : width), 1.0);
    v_clip_now = clip;
    // Pushed back a little (reversed-Z: a smaller depth) so that the surface
    // wins where the two meet.
    clip.z -= 1e-6 * clip.w;
  }
  clip.y = -clip.y;
  gl_Position = clip;
}
