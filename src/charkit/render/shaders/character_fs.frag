// The character passes' fragment shader (docs/render/render.md): one
// program, the pass in pc.mode. Body and face: toon lighting with the 9-tap
// PCF shadow and the HSV-type shadow colour into the four targets (§7);
// eye: premultiplied colour × coverage through the character LUT when one is
// given (§9); transparent: lit, premultiplied, with its motion; the
// classification pass writes no colour (its masks are 0).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "frame.glsl"
#include "shading.glsl"

// Binding 0: the frame constants, 1: the per-primitive data (frame.glsl).
layout(set = 0, binding = 2) uniform sampler2D base_texture;  // linear
layout(set = 0, binding = 3) uniform sampler2D shadow_map;    // nearest (texelFetch)
layout(set = 0, binding = 4) uniform sampler2D lut;           // nearest (texelFetch)
layout(set = 0, binding = 5) uniform sampler2D shade_texture;     // linear: MToon's shade multiply, else glTF metallic-roughness
layout(set = 0, binding = 6) uniform sampler2D emissive_texture;  // linear
layout(set = 0, binding = 7) uniform sampler2D rim_texture;       // linear: MToon's rim multiply
layout(set = 0, binding = 8) uniform sampler2D matcap_texture;    // linear
layout(set = 0, binding = 9) uniform sampler2D shift_texture;     // linear: shading shift (R)
// Binding 10: the outline width texture (the vertex program's).
layout(set = 0, binding = 11) uniform sampler2D uv_mask_texture;  // linear: UV animation mask (B)

layout(location = 0) in vec3 v_world;
layout(location = 1) in vec3 v_normal;
layout(location = 2) in vec2 v_uv;
layout(location = 3) in vec4 v_clip_now;
layout(location = 4) in vec4 v_clip_before;

layout(location = 0) out vec4 out_hdr;
layout(location = 1) out vec4 out_material1;
layout(location = 2) out vec4 out_material2;
layout(location = 3) out vec4 out_normal;

vec3 srgb_to_linear(vec3 c) {
  return mix(c / 12.92, pow((c + 0.055) / 1.055, vec3(2.4)), greaterThan(c, vec3(0.04045)));
}

void main() {
  const bool outline = pc.mode == MODE_OUTLINE;
  // MToon's UV animation (VRMC_materials_mtoon 1.0, as three-vrm applies
  // it): turned about (0.5, 0.5), then scrolled, both × the mask's blue
  // channel read at the unmoved coordinates; wrapped into [0, 1) as glTF's
  // default REPEAT sampler does. The matcap and the outline width texture
  // keep their own coordinates.
  vec2 uv = v_uv;
  if ((pc.flags & FLAG_UV_ANIMATED) != 0u) {
    const vec4 anim = draws[pc.draw].uv_animation;
    const float mask =
        (pc.flags & FLAG_UV_MASK_TEXTURED) != 0u ? texture(uv_mask_texture, v_uv).b : 1.0;
    const float c = cos(anim.z * mask), s = sin(anim.z * mask);
    const vec2 d = uv - 0.5;
    uv = fract(vec2(c * d.x + s * d.y, -s * d.x + c * d.y) + 0.5 + anim.xy * mask);
  }
  vec4 base = pc.base_colour;
  if ((pc.flags & FLAG_TEXTURED) != 0u) {
    const vec4 t = texture(base_texture, uv);
    base *= vec4(srgb_to_linear(t.rgb), t.a);
  }
  if ((pc.flags & FLAG_MASK) != 0u && base.a < pc.alpha_cutoff) discard;
  // The outline draws the hull's back faces; it keeps them and lights them
  // with the surface's outward normal (three-vrm flips it back).
  if (!outline && (pc.flags & FLAG_SINGLE_SIDED) != 0u && !gl_FrontFacing) discard;
  vec3 n = normalize(v_normal);
  if (!outline && !gl_FrontFacing) n = -n;
  const vec3 l = normalize(frame.light_dir.xyz);

  // Toon lighting: a narrow step across the terminator (our reading of the
  // face's shading), the PCF pass rate through the material's switch. MToon
  // materials step between their own edges and shade colour instead
  // (docs/render/shading.md).
  const float ndl = dot(n, l);
  const float pass_rate = pcf9(shadow_map, v_world, n, frame.shadow.x, frame.light_vp,
                               frame.region, true, 0.0);
  const float visibility = shadow_visibility(pass_rate, 1.0, frame.shadow.y, frame.shadow.z != 0.0);
  const bool mtoon = (pc.flags & FLAG_MTOON) != 0u;
  float lit;
  vec3 shade;
  if (mtoon) {
    float shifted = ndl;
    if ((pc.flags & FLAG_SHIFT_TEXTURED) != 0u) shifted += texture(shift_texture, uv).r * pc.rim2.z;
    lit = clamp((shifted - pc.shade.w) / max(pc.emissive.w - pc.shade.w, 1e-4), 0.0, 1.0);
    shade = pc.shade.rgb;
    if ((pc.flags & FLAG_SHADE_TEXTURED) != 0u)
      shade *= srgb_to_linear(texture(shade_texture, uv).rgb);
  } else {
    lit = smoothstep(-0.05, 0.05, ndl);
    shade = shadow_colour(base.rgb, frame.params.y, frame.params.z);
  }
  const float light = lit * visibility;
  vec3 colour;
  if (mtoon) {
    colour = mix(shade, base.rgb, light) * frame.light_colour.rgb + base.rgb * frame.ambient.rgb;
  } else if ((pc.flags & FLAG_UNLIT) != 0u) {
    colour = base.rgb;  // KHR_materials_unlit: the base colour is the result
  } else {
    // The glTF metallic-roughness model (glTF 2.0, Appendix B: the
    // dielectric and metal BRDFs mixed by metallic; Lambert diffuse under a
    // dielectric Schlick Fresnel (f0 0.04), GGX distribution, height-
    // correlated Smith visibility), the light's radiance π × its colour so
    // that a white Lambert surface facing it receives the colour. The
    // ambient lights the diffuse part less what the dielectric layer
    // reflects: its directional albedo by Karis's analytic fit ("Physically
    // Based Shading on Mobile") with Fdez-Agüera's multiple-scattering term
    // ("A Multiple-Scattering Microfacet Model for Real-Time Image-based
    // Lighting"). The toon step above still gives the control outputs.
    float metallic = pc.shade.x, roughness = pc.shade.y;
    if ((pc.flags & FLAG_MR_TEXTURED) != 0u) {
      const vec4 mr = texture(shade_texture, uv);  // G roughness, B metallic (linear)
      roughness *= mr.g;
      metallic *= mr.b;
    }
    metallic = clamp(metallic, 0.0, 1.0);
    roughness = clamp(roughness, 0.045, 1.0);
    const float alpha = roughness * roughness, a2 = alpha * alpha;
    const vec3 c_diff = base.rgb * (1.0 - metallic);
    const vec3 f0 = mix(vec3(0.04), base.rgb, metallic);
    const vec3 v = normalize(frame.eye.xyz - v_world);
    const vec3 h = normalize(l + v);
    const float nl = clamp(ndl, 0.0, 1.0), nv = clamp(dot(n, v), 0.0, 1.0);
    const float nh = clamp(dot(n, h), 0.0, 1.0), vh = clamp(dot(v, h), 0.0, 1.0);
    const float schlick = pow(1.0 - vh, 5.0);
    const vec3 fresnel = f0 + (1.0 - f0) * schlick;
    const float dielectric = 0.04 + 0.96 * schlick;
    const float vis =
        0.5 / max(nl * sqrt(nv * nv * (1.0 - a2) + a2) + nv * sqrt(nl * nl * (1.0 - a2) + a2), 1e-6);
    const float dd = nh * nh * (a2 - 1.0) + 1.0;
    const float distribution = a2 / (3.14159265 * dd * dd);
    const vec3 direct = (1.0 - dielectric) * c_diff + 3.14159265 * fresnel * vis * distribution;
    const vec4 r = roughness * vec4(-1.0, -0.0275, -0.572, 0.022) + vec4(1.0, 0.0425, 1.04, -0.04);
    const float a004 = min(r.x * r.x, exp2(-9.28 * nv)) * r.x + r.y;
    const vec2 ab = vec2(-1.04, 1.04) * a004 + r.zw;
    const float single = 0.04 * ab.x + ab.y;  // the dielectric layer's single scattering
    const float e_ms = 1.0 - (ab.x + ab.y);
    const float f_avg = 0.04 + 0.96 / 21.0;
    const float multiple = single * f_avg / (1.0 - e_ms * f_avg) * e_ms;
    colour = direct * nl * visibility * frame.light_colour.rgb +
             c_diff * (1.0 - single - multiple) * frame.ambient.rgb;
  }
  if (mtoon) {
    vec3 emissive = pc.emissive.rgb;
    if ((pc.flags & FLAG_EMISSIVE_TEXTURED) != 0u)
      emissive *= srgb_to_linear(texture(emissive_texture, uv).rgb);
    // The rim light: a fresnel term towards the silhouette, as bright as
    // the light received where rim2.y is 1, as an emission where it is 0.
    const vec3 v = normalize(frame.eye.xyz - v_world);
    const float fresnel = pow(clamp(1.0 - dot(n, v) + pc.rim2.x, 0.0, 1.0), max(pc.rim.w, 1e-5));
    vec3 rim = pc.rim.rgb * fresnel;
    if ((pc.flags & FLAG_MATCAP_TEXTURED) != 0u) {
      // The normal in a frame facing the camera, as MToon's matcap reads it.
      const vec3 vx = normalize(vec3(v.z, 0.0, -v.x));
      const vec3 vy = cross(v, vx);
      const vec2 matcap_uv = vec2(dot(vx, n), dot(vy, n)) * 0.495 + 0.5;
      rim += pc.matcap.rgb * srgb_to_linear(texture(matcap_texture, matcap_uv).rgb);
    }
    if ((pc.flags & FLAG_RIM_TEXTURED) != 0u)
      rim *= srgb_to_linear(texture(rim_texture, uv).rgb);
    const vec3 received = frame.light_colour.rgb * light + frame.ambient.rgb;
    colour += emissive + rim * mix(vec3(1.0), received, pc.rim2.y);
  }
  if (outline) {
    // The outline colour × mix(1, the surface's MToon colour, lighting mix).
    const vec4 oc = draws[pc.draw].outline_colour;
    colour = oc.rgb * mix(vec3(1.0), colour, oc.a);
  }

  // Motion: the encoding of the character-rendering frame analysis, or the
  // constant zero when it is off.
  const float zero = frame.motion.z;
  const vec2 motion = frame.motion.x != 0.0
                          ? encode_motion(v_clip_now, v_clip_before, frame.motion.y, zero)
                          : vec2(zero);
  const uint flags = (pc.mode == MODE_FACE ? 1u : 0u) | (light < 0.5 ? 2u : 0u) |
                     ((pc.flags & FLAG_TEXTURED) != 0u ? 4u : 0u) |
                     (frame.motion.x != 0.0 ? 8u : 0u);

  if (pc.mode == MODE_EYE) {
    vec3 eye = base.rgb;
    if (frame.params.w != 0.0)
      eye = lut_unshape(lut_sample(lut, lut_shape(eye, frame.params.x), 2u), frame.params.x);
    out_hdr = vec4(eye * base.a, base.a);  // premultiplied: colour × coverage, coverage
    out_material1 = vec4(0.0);              // written directly: zero
    out_material2 = vec4(0.0);              // masked
    out_normal = vec4(0.0);                 // masked
    return;
  }
  if (pc.mode == MODE_TRANSPARENT) {
    out_hdr = vec4(colour * base.a, base.a);
    out_material1 = vec4(0.0);
    out_material2 = vec4(motion, 0.0, 0.0);  // RG only (mask)
    out_normal = vec4(0.0);
    return;
  }
  out_hdr = vec4(colour, 1.0);
  // The control value, square-root compressed (our reading: the lit term).
  out_material1 = vec4(vec3(sqrt(light)), pc.mode == MODE_FACE ? 0.0 : 1.0);
  out_material2 = vec4(motion, float(flags) / 255.0,
                       pc.mode == MODE_FACE && frame.shadow.z != 0.0 ? 87.0 / 255.0 : 0.0);
  out_normal = vec4(0.5 * n + 0.5, 1.0);
}
