// The frame constants and per-draw push constants the character passes share
// (render/frame.cpp writes them; docs/render/render.md).
layout(std430, set = 0, binding = 0) readonly buffer Frame {
  mat4 view_proj;       // reversed-Z perspective, clip y up (the shaders flip y to raster)
  mat4 prev_view_proj;  // the previous frame's (motion vectors)
  mat4 light_vp;        // reversed-Z orthographic light, clip y up
  vec4 light_dir;       // xyz towards the light
  vec4 light_colour;
  vec4 ambient;
  vec4 shadow;          // normal offset, strength, enabled, -
  vec4 region;          // the shadow sub-region of the map
  vec4 params;          // exposure, shadow value scale, saturation scale, LUT on
  vec4 motion;          // on, scale, zero, -
  vec4 eye;             // the camera's position (MToon's rim light)
  vec4 view;            // the projection's [1][1] (1 / tan(fov_y / 2)), -, -, -
} frame;

// Per-primitive MToon data the push constants have no room for, indexed by
// pc.draw (render/frame_draw.cpp writes it).
struct DrawData {
  vec4 outline_colour;  // linear RGB, outline lighting mix
  vec4 outline;         // width factor, mode (1 world, 2 screen), -, -
  vec4 uv_animation;    // UV scroll x, scroll y at this frame's time, rotation (radians), -
};
layout(std430, set = 0, binding = 1) readonly buffer Draws {
  DrawData draws[];
};

const uint MODE_BODY = 0u;
const uint MODE_FACE = 1u;
const uint MODE_CLASSIFY = 2u;
const uint MODE_EYE = 3u;
const uint MODE_TRANSPARENT = 4u;
const uint MODE_SHADOW = 5u;
const uint MODE_OUTLINE = 6u;

const uint FLAG_TEXTURED = 1u;
const uint FLAG_MASK = 2u;
const uint FLAG_MTOON = 4u;           // MToon lighting (shade, shade_band, emissive)
const uint FLAG_SHADE_TEXTURED = 8u;      // MToon's shade multiply texture is bound
const uint FLAG_EMISSIVE_TEXTURED = 16u;  // the emissive texture is bound
const uint FLAG_RIM_TEXTURED = 32u;       // MToon's rim multiply texture is bound
const uint FLAG_MATCAP_TEXTURED = 64u;    // MToon's matcap texture is bound
const uint FLAG_SHIFT_TEXTURED = 128u;    // MToon's shading shift texture is bound
const uint FLAG_UNLIT = 256u;             // KHR_materials_unlit: the base colour, no light
const uint FLAG_MR_TEXTURED = 512u;       // glTF metallicRoughnessTexture (in shade_texture's binding)
const uint FLAG_SINGLE_SIDED = 1024u;     // back faces are dropped (the pipelines do not cull)
const uint FLAG_OUTLINE_TEXTURED = 2048u;  // MToon's outline width multiply texture is bound
const uint FLAG_UV_ANIMATED = 4096u;       // MToon's UV animation moves the texture coordinates
const uint FLAG_UV_MASK_TEXTURED = 8192u;  // MToon's UV animation mask texture is bound

layout(push_constant) uniform Push {
  vec4 base_colour;
  uint mode;
  uint flags;
  float alpha_cutoff;
  uint draw;  // this primitive's entry of draws[]
  vec4 shade;     // MToon: shade colour (linear RGB), shading's lower edge; else metallic, roughness
  vec4 emissive;  // MToon: emissive colour (linear RGB), shading's upper edge
  vec4 rim;       // MToon: rim colour (linear RGB), fresnel power
  vec4 rim2;      // MToon: rim lift, rim lighting mix, shading shift texture scale, -
  vec4 matcap;    // MToon: matcap colour (linear RGB), -
} pc;
