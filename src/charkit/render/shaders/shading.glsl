// The character shading functions in GLSL (docs/render/shading.md): the
// same formulas, constants and operation order as render/shading.cpp, which
// the compute harness (shading_harness.comp) checks them against. The
// character passes include this file.

const float PCF_WEIGHT = 0.1111;  // the seed's constant, not 1/9

float saturate1(float x) { return clamp(x, 0.0, 1.0); }

// saturate(log2(colour × exposure × 5.555556 + 0.047996) × 0.0735 + 0.386036)
vec3 lut_shape(vec3 colour, float exposure) {
  precise vec3 x = colour * exposure * 5.555556 + 0.047996;
  return clamp(log2(x) * 0.0735 + 0.386036, 0.0, 1.0);
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
