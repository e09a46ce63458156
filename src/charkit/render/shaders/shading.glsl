// The character shading functions in GLSL (docs/render/shading.md): the
// same formulas, constants and operation order as render/shading.cpp, which
// the compute harness (shading_harness.comp) checks them against. The
// character passes include this file.

const float PCF_WEIGHT = 0.1111;  // as in the character-rendering frame analysis, not 1/9

float saturate1(float x) { return clamp(x, 0.0, 1.0); }

// saturate(log2(colour × exposure × 5.555556 + 0.047996) × 0.0735 + 0.386036)
vec3 lut_shape(vec3 colour, float exposure) {
  precise vec3 x = colour * exposure * 5.555556 + 0.047996;
  return clamp(log2(x) * 0.0735 + 0.386036, 0.0, 1.0);
}

// The inverse of lut_shape inside (0, 1): the colour it came from.
vec3 lut_unshape(vec3 shaped, float exposure) {
  precise vec3 r = (exp2((shaped - 0.386036) / 0.0735) - 0.047996) / (5.555556 * exposure);
  return r;
}

// ((now / w − before / w) × (0.5, −0.5)) → sign · √|d| × scale + zero.
vec2 encode_motion(vec4 now, vec4 before, float scale, float zero) {
  const float wn = now.w != 0.0 ? now.w : 1.0;
  const float wb = before.w != 0.0 ? before.w : 1.0;
  precise vec2 d = (now.xy / wn - before.xy / wb) * vec2(0.5, -0.5);
  precise vec2 s = sign(d) * sqrt(abs(d));
  return clamp(s * scale + zero, 0.0, 1.0);
}

vec2 decode_motion(vec2 rg, float scale, float zero) {
  precise vec2 s = (rg - zero) / scale;
  return sign(s) * s * s;
}

vec3 rgb_to_hsv(vec3 c) {
  const float mx = max(c.r, max(c.g, c.b));
  const float mn = min(c.r, min(c.g, c.b));
  const float chroma = mx - mn;
  float h = 0.0;
  if (chroma > 0.0) {
    if (mx == c.r)
      h = (c.g - c.b) / chroma;
    else if (mx == c.g)
      h = (c.b - c.r) / chroma + 2.0;
    else
      h = (c.r - c.g) / chroma + 4.0;
    h /= 6.0;
    if (h < 0.0) h += 1.0;
  }
  return vec3(h, mx > 0.0 ? chroma / mx : 0.0, mx);
}

vec3 hsv_to_rgb(vec3 hsv) {
  const float h6 = (hsv.x - floor(hsv.x)) * 6.0;
  const float c = hsv.z * hsv.y;
  const float x = c * (1.0 - abs(mod(h6, 2.0) - 1.0));
  const float m = hsv.z - c;
  vec3 r;
  const int sector = int(h6) % 6;
  if (sector == 0) r = vec3(c, x, 0.0);
  else if (sector == 1) r = vec3(x, c, 0.0);
  else if (sector == 2) r = vec3(0.0, c, x);
  else if (sector == 3) r = vec3(0.0, x, c);
  else if (sector == 4) r = vec3(x, 0.0, c);
  else r = vec3(c, 0.0, x);
  return r + m;
}

vec3 shadow_colour(vec3 base, float value_scale, float saturation_scale) {
  const vec3 hsv = rgb_to_hsv(base);
  return hsv_to_rgb(vec3(hsv.x, saturate1(hsv.y * saturation_scale), hsv.z * value_scale));
}

float shadow_visibility(float pass_rate, float occlusion, float strength, bool enabled) {
  return enabled ? 1.0 - strength * (1.0 - pass_rate * occlusion) : 1.0;
}

// ---- 9-tap PCF and cascade selection (§8) ----------------------------------

// (m × (p, 1)) row by row in the C++ reference's order.
vec4 transform_point(mat4 m, vec3 p) {
  precise vec4 r;
  for (int row = 0; row < 4; ++row)
    r[row] = m[0][row] * p.x + m[1][row] * p.y + m[2][row] * p.z + m[3][row];
  return r;
}

// The pass rate: 0.1111 × the lit taps among the centre, (±1, ±1) and
// (±√2, 0), (0, ±√2) texels, rotated by `rotation`; each tap reads the
// nearest texel of the (square) map, clamped to its edge.
float pcf9(sampler2D shadow_map, vec3 position, vec3 normal, float normal_offset, mat4 light_vp,
           vec4 region, bool greater_equal, float rotation) {
  const int size = textureSize(shadow_map, 0).x;
  precise const vec3 offset = position + normal * normal_offset;
  precise const vec4 clip = transform_point(light_vp, offset);
  const float w = clip.w != 0.0 ? clip.w : 1.0;
  precise const float depth = clip.z / w;
  precise const float u = region.x + (clip.x / w * 0.5 + 0.5) * region.z;
  precise const float v = region.y + (clip.y / w * -0.5 + 0.5) * region.w;
  const float texel = 1.0 / float(size);
  const float r2 = sqrt(2.0);
  const vec2 taps[9] = vec2[9](vec2(0, 0), vec2(1, 1), vec2(-1, 1), vec2(1, -1), vec2(-1, -1),
                               vec2(r2, 0), vec2(-r2, 0), vec2(0, r2), vec2(0, -r2));
  const float cr = cos(rotation);
  const float sr = sin(rotation);
  float lit = 0.0;
  for (int i = 0; i < 9; ++i) {
    precise const float ox = taps[i].x * cr - taps[i].y * sr;
    precise const float oy = taps[i].x * sr + taps[i].y * cr;
    precise const float tu = u + ox * texel;
    precise const float tv = v + oy * texel;
    const int x = int(clamp(floor(tu * float(size)), 0.0, float(size - 1)));
    const int y = int(clamp(floor(tv * float(size)), 0.0, float(size - 1)));
    const float stored = texelFetch(shadow_map, ivec2(x, y), 0).r;
    const bool pass = greater_equal ? depth >= stored : depth <= stored;
    lit += pass ? 1.0 : 0.0;
  }
  return PCF_WEIGHT * lit;
}

// The first cascade whose sphere (xyz centre, w = r²) holds p; 4 when none.
uint cascade_level(vec3 p, vec4 spheres[4]) {
  for (uint i = 0u; i < 4u; ++i) {
    precise const vec3 d = p - spheres[i].xyz;
    precise const float d2 = d.x * d.x + d.y * d.y + d.z * d.z;
    if (d2 < spheres[i].w) return i;
  }
  return 4u;
}

// The cascade taps' perturbation angle from the pixel position
// (interleaved gradient noise: our reading).
float cascade_rotation(vec2 pixel) {
  precise const float a = 0.06711056 * pixel.x + 0.00583715 * pixel.y;
  precise const float f = 52.9829189 * (a - floor(a));
  precise const float r = 6.2831853 * (f - floor(f));
  return r;
}

// ---- character LUT strip (§9) -----------------------------------------------

// A 32-level cube as a 1024 × 32 strip: slice s at x in [32 s, 32 s + 32).
// Two bilinear samples (texel fetches, weights as the C++ reference) in the
// neighbouring slices of the slice axis, interpolated by its fraction.
vec3 lut_fetch(sampler2D lut, uint s, uint x, uint y) {
  return texelFetch(lut, ivec2(int(s * 32u + x), int(y)), 0).rgb;
}
vec3 lut_bilinear(sampler2D lut, uint s, float fx, float fy) {
  const uint x0 = uint(floor(fx)), y0 = uint(floor(fy));
  const uint x1 = min(x0 + 1u, 31u), y1 = min(y0 + 1u, 31u);
  precise const float tx = fx - float(x0);
  precise const float ty = fy - float(y0);
  const vec3 a = lut_fetch(lut, s, x0, y0), b = lut_fetch(lut, s, x1, y0);
  const vec3 c = lut_fetch(lut, s, x0, y1), d = lut_fetch(lut, s, x1, y1);
  precise const vec3 top = a + (b - a) * tx;
  precise const vec3 bottom = c + (d - c) * tx;
  precise const vec3 r = top + (bottom - top) * ty;
  return r;
}
vec3 lut_sample(sampler2D lut, vec3 shaped, uint slice_axis) {
  const uint axis = min(slice_axis, 2u);
  const uint ia = axis == 0u ? 1u : 0u;
  const uint ib = axis == 2u ? 1u : 2u;
  precise const float fs = clamp(shaped[axis], 0.0, 1.0) * 31.0;
  precise const float fx = clamp(shaped[ia], 0.0, 1.0) * 31.0;
  precise const float fy = clamp(shaped[ib], 0.0, 1.0) * 31.0;
  const uint s0 = uint(floor(fs));
  const uint s1 = min(s0 + 1u, 31u);
  precise const float ts = fs - float(s0);
  const vec3 lo = lut_bilinear(lut, s0, fx, fy);
  const vec3 hi = lut_bilinear(lut, s1, fx, fy);
  precise const vec3 r = lo + (hi - lo) * ts;
  return r;
}
