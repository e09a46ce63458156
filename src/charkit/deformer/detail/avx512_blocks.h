// Internal: AVX-512 pieces shared by the batch kernels (batch_kernels.cpp)
// and the fused training products (fused_product.cpp): the masks of a block
// of output vectors, and one block of 16 parameters of Adam (adam_step and
// the products that run Adam on their sums give the same bits).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>

#include <algorithm>
#include <cstddef>

#include "charkit/deformer/detail/batch_kernels.h"

namespace charkit::deformer::detail {

/// The masks of the J vectors of 16 outputs from o0 (zero past out).
template <int J>
inline void output_masks(std::size_t o0, std::size_t out, __mmask16* m) {
  for (int j = 0; j < J; ++j) {
    const std::size_t first = o0 + 16 * static_cast<std::size_t>(j);
    const std::size_t lanes = first >= out ? 0 : std::min<std::size_t>(16, out - first);
    m[j] = static_cast<__mmask16>((1u << lanes) - 1u);
  }
}

/// m̃ = β1·m̃ + g; ṽ = β2·ṽ + g²; p −= m̃ / (root_scale·√ṽ + floor) (the
/// scaled moments of AdamStep) for the lanes in k (Whole: all 16, plain
/// loads and stores). √ṽ = ṽ·rsqrt(ṽ) and the reciprocal from AVX-512's
/// 14-bit estimates, each refined by one Newton step (within 2 ulp); ṽ below
/// FLT_MIN counts as 0. 14 vector operations per 16 parameters besides the
/// loads and stores.
template <bool Whole>
__attribute__((target("avx512f"))) inline void adam16(__m512 gi, float* p, float* m, float* v,
                                                      __mmask16 k, const AdamStep& c) {
  const __m512 m0 = Whole ? _mm512_loadu_ps(m) : _mm512_maskz_loadu_ps(k, m);
  const __m512 v0 = Whole ? _mm512_loadu_ps(v) : _mm512_maskz_loadu_ps(k, v);
  const __m512 p0 = Whole ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(k, p);
  const __m512 one = _mm512_set1_ps(1.0F);
  const __m512 mi = _mm512_fmadd_ps(_mm512_set1_ps(c.beta1), m0, gi);
  const __m512 vi = _mm512_fmadd_ps(_mm512_set1_ps(c.beta2), v0, _mm512_mul_ps(gi, gi));
  // s = ṽ·r refined: s + (s/2)·(1 − s·r) with r ≈ 1/√ṽ; 0 where ṽ < FLT_MIN.
  const __m512 r = _mm512_maskz_rsqrt14_ps(static_cast<__mmask16>(0xFFFF), vi);
  const __m512 s0 = _mm512_mul_ps(vi, r);
  const __mmask16 pos = _mm512_cmp_ps_mask(vi, _mm512_set1_ps(1.17549435e-38F), _CMP_GE_OQ);
  const __m512 s = _mm512_maskz_fmadd_ps(pos, _mm512_mul_ps(_mm512_set1_ps(0.5F), s0),
                                         _mm512_fnmadd_ps(s0, r, one), s0);
  // 1/d refined: x + x·(1 − d·x).
  const __m512 d = _mm512_fmadd_ps(s, _mm512_set1_ps(c.root_scale), _mm512_set1_ps(c.floor));
  const __m512 x0 = _mm512_maskz_rcp14_ps(static_cast<__mmask16>(0xFFFF), d);
  const __m512 x = _mm512_fmadd_ps(x0, _mm512_fnmadd_ps(d, x0, one), x0);
  const __m512 pi = _mm512_fnmadd_ps(mi, x, p0);
  if (Whole) {
    _mm512_storeu_ps(m, mi);
    _mm512_storeu_ps(v, vi);
    _mm512_storeu_ps(p, pi);
  } else {
    _mm512_mask_storeu_ps(m, k, mi);
    _mm512_mask_storeu_ps(v, k, vi);
    _mm512_mask_storeu_ps(p, k, pi);
  }
}

}  // namespace charkit::deformer::detail
#endif
