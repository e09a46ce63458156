// BC7 encoder for modes 1, 5 and 6 (bc7_encode.h). Each subset is fitted
// along its principal axis, its endpoints quantised with every p-bit choice,
// indices chosen against the exact decoded palette, then the endpoints
// refined by least squares; every mode's block is decoded to measure it.
#include "charkit/scene/bc7_encode.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "charkit/core/parallel.h"
#include "charkit/scene/detail/bc7.h"
#include "charkit/scene/detail/bc7_tables.h"
#include "charkit/scene/texture_encode.h"

namespace charkit::scene {
namespace {

using bc7_tables::kWeights2;
using bc7_tables::kWeights3;
using bc7_tables::kWeights4;

const std::uint8_t* weights_for(int index_bits) {
  return index_bits == 2 ? kWeights2 : index_bits == 3 ? kWeights3 : kWeights4;
}

/// Writes the 128-bit block LSB first, as decode_bc7_block reads it.
class BitWriter {
 public:
  void write(std::uint32_t v, int count) {
    for (int i = 0; i < count; ++i, ++pos_) {
      if (((v >> i) & 1u) != 0) block_[pos_ >> 3] |= static_cast<std::uint8_t>(1u << (pos_ & 7));
    }
  }
  const std::array<std::uint8_t, 16>& block() const { return block_; }
  int position() const { return pos_; }

 private:
  std::array<std::uint8_t, 16> block_{};
  int pos_ = 0;
};

/// The 8-bit value of an n-bit code (top bits replicated), as the decoder does.
int expand(int v, int bits) {
  v <<= (8 - bits);
  return (v | (v >> bits)) & 0xFF;
}

int interpolate(int e0, int e1, int w) {
  return ((64 - w) * e0 + w * e1 + 32) >> 6;
}

enum class PBits { kNone, kEndpoint, kShared };

/// How one subset's endpoints are stored.
struct Params {
  int channels = 4;  ///< 1..4 channels fitted together (slots 0..channels-1)
  int bits = 7;      ///< code bits per channel, without the p-bit
  PBits pbits = PBits::kNone;
  int index_bits = 4;
};

/// A subset's pixels: up to 16, integer channel values in slots 0..3.
struct Pixels {
  int count = 0;
  int v[16][4] = {};
};

struct Fit {
  int q[2][4] = {};  ///< endpoint codes without the p-bit
  int p[2] = {};     ///< p-bits
  int e[2][4] = {};  ///< endpoints as the decoder expands them
  std::uint8_t index[16] = {};
  std::uint64_t error = std::numeric_limits<std::uint64_t>::max();
};

/// Quantise one endpoint channel value (0..255) with p-bit p.
void quantise(const Params& pr, float value, int p, int& code, int& expanded) {
  const int max_code = (1 << pr.bits) - 1;
  if (pr.pbits == PBits::kNone) {
    code = std::clamp(static_cast<int>(std::lround(value * static_cast<float>(max_code) / 255.0F)),
                      0, max_code);
    expanded = expand(code, pr.bits);
  } else {
    const float levels = static_cast<float>((1 << (pr.bits + 1)) - 1);
    const float target = value * levels / 255.0F;
    code = std::clamp(static_cast<int>(std::lround((target - static_cast<float>(p)) / 2.0F)), 0,
                      max_code);
    expanded = expand((code << 1) | p, pr.bits + 1);
  }
}

/// Best index per pixel against the palette of `f`'s endpoints; sets f.index, f.error.
void assign_indices(const Params& pr, const Pixels& px, Fit& f) {
  const std::uint8_t* w = weights_for(pr.index_bits);
  const int n = 1 << pr.index_bits;
  int palette[16][4];
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < pr.channels; ++c) palette[i][c] = interpolate(f.e[0][c], f.e[1][c], w[i]);
  std::uint64_t total = 0;
  for (int k = 0; k < px.count; ++k) {
    int best = 0;
    int best_err = std::numeric_limits<int>::max();
    for (int i = 0; i < n; ++i) {
      int err = 0;
      for (int c = 0; c < pr.channels; ++c) {
        const int d = palette[i][c] - px.v[k][c];
        err += d * d;
      }
      if (err < best_err) {
        best_err = err;
        best = i;
      }
    }
    f.index[k] = static_cast<std::uint8_t>(best);
    total += static_cast<std::uint64_t>(best_err);
  }
  f.error = total;
}

/// Quantise float endpoints with every p-bit choice; keep the best into `best`.
void try_endpoints(const Params& pr, const Pixels& px, const float e0[4], const float e1[4],
                   Fit& best) {
  const int choices = pr.pbits == PBits::kEndpoint ? 4 : pr.pbits == PBits::kShared ? 2 : 1;
  for (int choice = 0; choice < choices; ++choice) {
    Fit f;
    f.p[0] = pr.pbits == PBits::kNone ? 0 : (choice & 1);
    f.p[1] = pr.pbits == PBits::kEndpoint ? (choice >> 1) : f.p[0];
    for (int c = 0; c < pr.channels; ++c) {
      quantise(pr, e0[c], f.p[0], f.q[0][c], f.e[0][c]);
      quantise(pr, e1[c], f.p[1], f.q[1][c], f.e[1][c]);
    }
    assign_indices(pr, px, f);
    if (f.error < best.error) best = f;
  }
}

/// Principal-axis fit, then least-squares refinements.
Fit fit_subset(const Params& pr, const Pixels& px, int refinements) {
  const int ch = pr.channels;
  float mean[4] = {};
  for (int k = 0; k < px.count; ++k)
    for (int c = 0; c < ch; ++c) mean[c] += static_cast<float>(px.v[k][c]);
  for (int c = 0; c < ch; ++c) mean[c] /= static_cast<float>(std::max(px.count, 1));
  float cov[4][4] = {};
  for (int k = 0; k < px.count; ++k)
    for (int a = 0; a < ch; ++a)
      for (int b = 0; b < ch; ++b)
        cov[a][b] +=
            (static_cast<float>(px.v[k][a]) - mean[a]) * (static_cast<float>(px.v[k][b]) - mean[b]);
  // Power iteration from the channel with the largest spread.
  float axis[4] = {};
  int widest = 0;
  for (int c = 1; c < ch; ++c)
    if (cov[c][c] > cov[widest][widest]) widest = c;
  axis[widest] = 1.0F;
  for (int it = 0; it < 8; ++it) {
    float next[4] = {};
    for (int a = 0; a < ch; ++a)
      for (int b = 0; b < ch; ++b) next[a] += cov[a][b] * axis[b];
    float len = 0;
    for (int c = 0; c < ch; ++c) len += next[c] * next[c];
    len = std::sqrt(len);
    if (!(len > 1e-12F)) break;
    for (int c = 0; c < ch; ++c) axis[c] = next[c] / len;
  }
  float lo = 0;
  float hi = 0;
  for (int k = 0; k < px.count; ++k) {
    float t = 0;
    for (int c = 0; c < ch; ++c) t += (static_cast<float>(px.v[k][c]) - mean[c]) * axis[c];
    lo = std::min(lo, t);
    hi = std::max(hi, t);
  }
  float e0[4] = {};
  float e1[4] = {};
  for (int c = 0; c < ch; ++c) {
    e0[c] = std::clamp(mean[c] + lo * axis[c], 0.0F, 255.0F);
    e1[c] = std::clamp(mean[c] + hi * axis[c], 0.0F, 255.0F);
  }
  Fit best;
  try_endpoints(pr, px, e0, e1, best);
  const std::uint8_t* w = weights_for(pr.index_bits);
  for (int r = 0; r < refinements && best.error != 0; ++r) {
    // Minimise sum |(1 - w) e0 + w e1 - x|^2 over e0, e1 for the chosen weights.
    float a = 0;
    float b = 0;
    float d = 0;
    float r0[4] = {};
    float r1[4] = {};
    for (int k = 0; k < px.count; ++k) {
      const float wk = static_cast<float>(w[best.index[k]]) / 64.0F;
      a += (1 - wk) * (1 - wk);
      b += (1 - wk) * wk;
      d += wk * wk;
      for (int c = 0; c < ch; ++c) {
        r0[c] += (1 - wk) * static_cast<float>(px.v[k][c]);
        r1[c] += wk * static_cast<float>(px.v[k][c]);
      }
    }
    const float det = a * d - b * b;
    if (std::abs(det) < 1e-6F) break;
    for (int c = 0; c < ch; ++c) {
      e0[c] = std::clamp((d * r0[c] - b * r1[c]) / det, 0.0F, 255.0F);
      e1[c] = std::clamp((a * r1[c] - b * r0[c]) / det, 0.0F, 255.0F);
    }
    const std::uint64_t before = best.error;
    try_endpoints(pr, px, e0, e1, best);
    if (best.error >= before) break;
  }
  return best;
}

/// The anchor pixel's index must have its top bit clear: otherwise swap the
/// endpoints and mirror every index of the subset.
void fix_anchor(const Params& pr, Fit& f, int anchor_local, int count) {
  const int top = 1 << (pr.index_bits - 1);
  if (f.index[anchor_local] < top) return;
  std::swap(f.q[0], f.q[1]);
  std::swap(f.p[0], f.p[1]);
  std::swap(f.e[0], f.e[1]);
  const int max_index = (1 << pr.index_bits) - 1;
  for (int k = 0; k < count; ++k) f.index[k] = static_cast<std::uint8_t>(max_index - f.index[k]);
}

std::uint64_t block_error(const std::uint8_t* in, const std::array<std::uint8_t, 16>& block) {
  std::uint8_t out[64];
  decode_bc7_block(block.data(), out);
  std::uint64_t err = 0;
  for (int i = 0; i < 64; ++i) {
    const int d = static_cast<int>(in[i]) - static_cast<int>(out[i]);
    err += static_cast<std::uint64_t>(d * d);
  }
  return err;
}

std::array<std::uint8_t, 16> encode_mode6(const std::uint8_t* in, int refinements) {
  const Params pr{4, 7, PBits::kEndpoint, 4};
  Pixels px;
  px.count = 16;
  for (int i = 0; i < 16; ++i)
    for (int c = 0; c < 4; ++c) px.v[i][c] = in[4 * i + c];
  Fit f = fit_subset(pr, px, refinements);
  fix_anchor(pr, f, 0, 16);
  BitWriter bw;
  bw.write(1u << 6, 7);
  for (int c = 0; c < 4; ++c)
    for (int e = 0; e < 2; ++e) bw.write(static_cast<std::uint32_t>(f.q[e][c]), 7);
  bw.write(static_cast<std::uint32_t>(f.p[0]), 1);
  bw.write(static_cast<std::uint32_t>(f.p[1]), 1);
  for (int i = 0; i < 16; ++i) bw.write(f.index[i], i == 0 ? 3 : 4);
  return bw.block();
}

std::array<std::uint8_t, 16> encode_mode5(const std::uint8_t* in, int rotation, int refinements) {
  const Params colour{3, 7, PBits::kNone, 2};
  const Params alpha{1, 8, PBits::kNone, 2};
  Pixels cpx;
  Pixels apx;
  cpx.count = apx.count = 16;
  for (int i = 0; i < 16; ++i) {
    int p[4] = {in[4 * i], in[4 * i + 1], in[4 * i + 2], in[4 * i + 3]};
    if (rotation != 0) std::swap(p[3], p[rotation - 1]);
    for (int c = 0; c < 3; ++c) cpx.v[i][c] = p[c];
    apx.v[i][0] = p[3];
  }
  Fit fc = fit_subset(colour, cpx, refinements);
  Fit fa = fit_subset(alpha, apx, refinements);
  fix_anchor(colour, fc, 0, 16);
  fix_anchor(alpha, fa, 0, 16);
  BitWriter bw;
  bw.write(1u << 5, 6);
  bw.write(static_cast<std::uint32_t>(rotation), 2);
  for (int c = 0; c < 3; ++c)
    for (int e = 0; e < 2; ++e) bw.write(static_cast<std::uint32_t>(fc.q[e][c]), 7);
  for (int e = 0; e < 2; ++e) bw.write(static_cast<std::uint32_t>(fa.q[e][0]), 8);
  for (int i = 0; i < 16; ++i) bw.write(fc.index[i], i == 0 ? 1 : 2);
  for (int i = 0; i < 16; ++i) bw.write(fa.index[i], i == 0 ? 1 : 2);
  return bw.block();
}

/// Mode 1's quick partition estimate: per subset, the RGB variance off its
/// principal axis (what a line through the subset cannot represent).
float partition_estimate(const std::uint8_t* in, int partition) {
  float total = 0;
  for (int s = 0; s < 2; ++s) {
    float mean[3] = {};
    int n = 0;
    for (int i = 0; i < 16; ++i) {
      if (bc7_tables::kPartition2[partition * 16 + i] != s) continue;
      for (int c = 0; c < 3; ++c) mean[c] += static_cast<float>(in[4 * i + c]);
      ++n;
    }
    if (n == 0) continue;
    for (float& m : mean) m /= static_cast<float>(n);
    float cov[3][3] = {};
    for (int i = 0; i < 16; ++i) {
      if (bc7_tables::kPartition2[partition * 16 + i] != s) continue;
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
          cov[a][b] += (static_cast<float>(in[4 * i + a]) - mean[a]) *
                       (static_cast<float>(in[4 * i + b]) - mean[b]);
    }
    float axis[3] = {1, 1, 1};
    float lambda = 0;
    for (int it = 0; it < 6; ++it) {
      float next[3] = {};
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) next[a] += cov[a][b] * axis[b];
      const float len = std::sqrt(next[0] * next[0] + next[1] * next[1] + next[2] * next[2]);
      if (!(len > 1e-12F)) break;
      lambda = len;
      for (int c = 0; c < 3; ++c) axis[c] = next[c] / len;
    }
    total += cov[0][0] + cov[1][1] + cov[2][2] - lambda;
  }
  return total;
}

std::array<std::uint8_t, 16> encode_mode1(const std::uint8_t* in, int partition, int refinements) {
  const Params pr{3, 6, PBits::kShared, 3};
  Pixels px[2];
  int pixel_of[2][16] = {};
  int anchor_local[2] = {0, 0};
  const int anchor2 = bc7_tables::kAnchor2[partition];
  for (int i = 0; i < 16; ++i) {
    const int s = bc7_tables::kPartition2[partition * 16 + i];
    const int k = px[s].count++;
    pixel_of[s][k] = i;
    if (s == 1 && i == anchor2) anchor_local[1] = k;
    for (int c = 0; c < 3; ++c) px[s].v[k][c] = in[4 * i + c];
  }
  Fit f[2];
  std::uint8_t index[16] = {};
  for (int s = 0; s < 2; ++s) {
    f[s] = fit_subset(pr, px[s], refinements);
    fix_anchor(pr, f[s], anchor_local[s], px[s].count);
    for (int k = 0; k < px[s].count; ++k) index[pixel_of[s][k]] = f[s].index[k];
  }
  BitWriter bw;
  bw.write(1u << 1, 2);
  bw.write(static_cast<std::uint32_t>(partition), 6);
  for (int c = 0; c < 3; ++c)
    for (int s = 0; s < 2; ++s)
      for (int e = 0; e < 2; ++e) bw.write(static_cast<std::uint32_t>(f[s].q[e][c]), 6);
  for (int s = 0; s < 2; ++s) bw.write(static_cast<std::uint32_t>(f[s].p[0]), 1);
  for (int i = 0; i < 16; ++i) bw.write(index[i], i == 0 || i == anchor2 ? 2 : 3);
  return bw.block();
}

/// Mode 5 colour endpoint codes (7 bits) for one channel value v such that
/// index 1 (weight 21) of the palette decodes to v exactly or as near as the
/// format allows: the single-colour block's best representation.
struct SingleColourEntry {
  std::uint8_t q0 = 0;
  std::uint8_t q1 = 0;
};

const std::array<SingleColourEntry, 256>& single_colour_table() {
  static const std::array<SingleColourEntry, 256> table = [] {
    std::array<SingleColourEntry, 256> t{};
    std::array<int, 256> best_error{};
    best_error.fill(std::numeric_limits<int>::max());
    for (int q0 = 0; q0 < 128; ++q0)
      for (int q1 = 0; q1 < 128; ++q1) {
        const int v = interpolate(expand(q0, 7), expand(q1, 7), kWeights2[1]);
        for (int target = std::max(0, v - 2); target <= std::min(255, v + 2); ++target) {
          const int err = std::abs(v - target) * 256 + std::abs(q0 - q1);  // prefer close codes
          if (err < best_error[static_cast<std::size_t>(target)]) {
            best_error[static_cast<std::size_t>(target)] = err;
            t[static_cast<std::size_t>(target)] = {static_cast<std::uint8_t>(q0),
                                                   static_cast<std::uint8_t>(q1)};
          }
        }
      }
    return t;
  }();
  return table;
}

/// A block of one colour: mode 5, colour from the table at index 1 (the
/// anchor's top bit is clear), alpha exact in 8 bits at index 0.
std::array<std::uint8_t, 16> encode_single_colour(const std::uint8_t* rgba) {
  const auto& table = single_colour_table();
  BitWriter bw;
  bw.write(1u << 5, 6);
  bw.write(0, 2);  // no rotation
  for (int c = 0; c < 3; ++c) {
    const SingleColourEntry& e = table[rgba[c]];
    bw.write(e.q0, 7);
    bw.write(e.q1, 7);
  }
  bw.write(rgba[3], 8);
  bw.write(rgba[3], 8);
  for (int i = 0; i < 16; ++i) bw.write(1, i == 0 ? 1 : 2);
  for (int i = 0; i < 16; ++i) bw.write(0, i == 0 ? 1 : 2);
  return bw.block();
}

}  // namespace

std::uint64_t encode_bc7_block(const std::uint8_t* in, std::uint8_t* out,
                               const Bc7EncodeOptions& options) {
  std::array<std::uint8_t, 16> best{};
  std::uint64_t best_error = std::numeric_limits<std::uint64_t>::max();
  auto consider = [&](const std::array<std::uint8_t, 16>& block) {
    const std::uint64_t err = block_error(in, block);
    if (err < best_error) {
      best_error = err;
      best = block;
    }
  };
  const int refinements = std::max(options.refinements, 0);
  bool single = true;
  for (int i = 1; i < 16 && single; ++i) single = std::memcmp(in, in + 4 * i, 4) == 0;
  if (single) consider(encode_single_colour(in));

  bool opaque = true;
  for (int i = 0; i < 16; ++i) opaque = opaque && in[4 * i + 3] == 255;
  if (best_error != 0 &&
      ((options.modes & (1u << 6)) != 0 || (options.modes & ((1u << 1) | (1u << 5))) == 0))
    consider(encode_mode6(in, refinements));
  if ((options.modes & (1u << 5)) != 0)
    for (int rotation = 0; rotation < 4 && best_error != 0; ++rotation)
      consider(encode_mode5(in, rotation, refinements));
  // Mode 1 decodes alpha as 255: only worth trying for opaque blocks.
  if ((options.modes & (1u << 1)) != 0 && opaque && best_error != 0) {
    std::array<std::pair<float, int>, 64> ranked;
    for (int p = 0; p < 64; ++p)
      ranked[static_cast<std::size_t>(p)] = {partition_estimate(in, p), p};
    const int tried = std::clamp(options.partitions_tried, 1, 64);
    std::partial_sort(ranked.begin(), ranked.begin() + tried, ranked.end());
    for (int k = 0; k < tried && best_error != 0; ++k)
      consider(encode_mode1(in, ranked[static_cast<std::size_t>(k)].second, refinements));
  }
  // Only mode 1 asked for a block with alpha: mode 6 is the fallback.
  if (best_error == std::numeric_limits<std::uint64_t>::max())
    consider(encode_mode6(in, refinements));
  std::memcpy(out, best.data(), 16);
  return best_error;
}

std::vector<std::uint8_t> encode_bc7(const RgbaImage& image, const Bc7EncodeOptions& options,
                                     core::Executor* executor) {
  const std::uint32_t bw = (image.width + 3) / 4;
  const std::uint32_t bh = (image.height + 3) / 4;
  std::vector<std::uint8_t> out(std::size_t{bw} * bh * 16);
  if (image.width == 0 || image.height == 0) return out;
  core::Executor& ex = executor != nullptr ? *executor : core::default_executor();
  ex.parallel_for(0, bh, 1, [&](std::size_t row_begin, std::size_t row_end) {
    std::uint8_t block[64];
    for (std::size_t by = row_begin; by < row_end; ++by) {
      for (std::uint32_t bx = 0; bx < bw; ++bx) {
        // Pixels past the edge repeat the last row / column.
        for (std::uint32_t y = 0; y < 4; ++y) {
          const std::uint32_t sy =
              std::min<std::uint32_t>(static_cast<std::uint32_t>(by) * 4 + y, image.height - 1);
          for (std::uint32_t x = 0; x < 4; ++x) {
            const std::uint32_t sx = std::min(bx * 4 + x, image.width - 1);
            std::memcpy(block + 4 * (x + 4 * y), image.pixels.data() + image.pixel_offset(sx, sy),
                        4);
          }
        }
        encode_bc7_block(block, out.data() + (by * bw + bx) * 16, options);
      }
    }
  });
  return out;
}

}  // namespace charkit::scene
