// The AVX attention kernel of the fast inference path (attention.hpp).
#include "surrogate/transformer/attention.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace gpuforecast::detail::transformer {

namespace {

// Eight floats (GCC vector extension: one AVX register, or two SSE ones in the default clone).
// The helpers below pass them by value; they are internal and inlined, so the psABI note about
// 32-byte vector arguments without AVX does not concern any interface. (GCC emits the note at
// the end of the translation unit, so it stays silenced for the rest of this file.)
#pragma GCC diagnostic ignored "-Wpsabi"
using v8sf = float __attribute__((vector_size(32)));
using v8si = std::int32_t __attribute__((vector_size(32)));
[[gnu::always_inline]] inline v8sf load8(const float* p) {
  v8sf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store8(float* p, v8sf v) { std::memcpy(p, &v, sizeof v); }

// exp(x) for x <= 0 (softmax after subtracting the maximum): 2^n * p(r) with x = n ln2 + r,
// |r| <= ln2 / 2, a degree-6 Taylor polynomial (relative error < 3e-7); x < -87 gives ~1e-38
// instead of 0 (negligible next to the maximum's 1).
[[gnu::always_inline]] inline v8sf exp_nonpositive(v8sf x) {
  x = x < -87.0F ? v8sf{} - 87.0F : x;
  const float magic = 12582912.0F;  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  const v8sf n = (x * 1.44269504088896341F + magic) - magic;
  const v8sf r = x - n * 0.693359375F + n * 2.12194440e-4F;  // ln2 in two parts (Cephes)
  v8sf p = v8sf{} + 1.0F / 720;
  p = p * r + 1.0F / 120;
  p = p * r + 1.0F / 24;
  p = p * r + 1.0F / 6;
  p = p * r + 0.5F;
  p = p * r + 1.0F;
  p = p * r + 1.0F;
  const v8si bits = (__builtin_convertvector(n, v8si) + 127) << 23;
  return p * std::bit_cast<v8sf>(bits);
}

// softmax(q k^T / sqrt(dh)) v for candidates [b0, b1) and every head, over [n * l, 3d] rows of
// q|k|v. `pad` ([n, l], true = padding) masks keys. Scores of one (candidate, head) are a tiny
// [l, dh] x [dh, l] product: k is transposed into a scratch buffer padded to l8 (a multiple of
// 8) keys, so scores, exponentials and (for heads of 8 or 16 channels) the weighted sum of
// values run on 8-float vectors. An AVX2 clone is picked at run time.
__attribute__((target_clones("avx2", "default"))) void attention_rows(
    const float* __restrict qkv, const bool* __restrict pad, float* __restrict out, std::int64_t b0, std::int64_t b1,
    std::int64_t l, std::int64_t d, std::int64_t heads, float* __restrict scratch) {
  const std::int64_t dh = d / heads;
  const float scale = 1.0F / std::sqrt(static_cast<float>(dh));
  const std::int64_t stride = 3 * d;
  const std::int64_t l8 = (l + 7) / 8 * 8;
  float* __restrict kt = scratch;      // [dh, l8]
  float* __restrict s = kt + dh * l8;  // [l8] scores, then weights, of one query
  float* __restrict keep = s + l8;     // [l8] 1 for keys, 0 for padding
  for (std::int64_t j = l; j < l8; ++j) keep[j] = 0.0F;
  for (std::int64_t c = 0; c < dh; ++c)
    for (std::int64_t j = l; j < l8; ++j) kt[c * l8 + j] = 0.0F;
  for (std::int64_t b = b0; b < b1; ++b) {
    const float* base = qkv + b * l * stride;
    for (std::int64_t j = 0; j < l; ++j) keep[j] = (pad && pad[b * l + j]) ? 0.0F : 1.0F;
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t qo = h * dh, ko = d + h * dh, vo = 2 * d + h * dh;
      for (std::int64_t j = 0; j < l; ++j)
        for (std::int64_t c = 0; c < dh; ++c) kt[c * l8 + j] = base[j * stride + ko + c];
      for (std::int64_t i = 0; i < l; ++i) {
        const float* q = base + i * stride + qo;
        for (std::int64_t j0 = 0; j0 < l8; j0 += 8) {
          v8sf acc{};
          for (std::int64_t c = 0; c < dh; ++c) acc += (q[c] * scale) * load8(kt + c * l8 + j0);
          store8(s + j0, acc);
        }
        float mx = -std::numeric_limits<float>::infinity();
        for (std::int64_t j = 0; j < l; ++j)
          if (keep[j] > 0.0F) mx = std::max(mx, s[j]);
        for (std::int64_t j0 = 0; j0 < l8; j0 += 8)
          store8(s + j0, exp_nonpositive(load8(s + j0) - mx) * load8(keep + j0));
        float sum = 0;
        for (std::int64_t j = 0; j < l; ++j) sum += s[j];
        const float inv = 1.0F / sum;
        float* o = out + (b * l + i) * d + qo;
        if (dh == 8 || dh == 16) {
          v8sf a0{}, a1{};
          for (std::int64_t j = 0; j < l; ++j) {
            const float p = s[j] * inv;
            const float* v = base + j * stride + vo;
            a0 += p * load8(v);
            if (dh == 16) a1 += p * load8(v + 8);
          }
          store8(o, a0);
          if (dh == 16) store8(o + 8, a1);
        } else {
          for (std::int64_t c = 0; c < dh; ++c) o[c] = 0.0F;
          for (std::int64_t j = 0; j < l; ++j) {
            const float p = s[j] * inv;
            const float* v = base + j * stride + vo;
            for (std::int64_t c = 0; c < dh; ++c) o[c] += p * v[c];
          }
        }
      }
    }
  }
}

}  // namespace

void attention(const float* qkv, const bool* pad, float* out, std::int64_t n, std::int64_t l, std::int64_t d,
               std::int64_t heads) {
  const std::int64_t dh = d / heads;
  const std::int64_t l8 = (l + 7) / 8 * 8;
  const std::int64_t grain = std::max<std::int64_t>(1, 8192 / std::max<std::int64_t>(1, l * l * d));
  const auto rows = [&](std::int64_t b0, std::int64_t b1) {
    std::vector<float> scratch(static_cast<std::size_t>(dh * l8 + 2 * l8));
    attention_rows(qkv, pad, out, b0, b1, l, d, heads, scratch.data());
  };
  // A few sequences (one candidate, a group's context) stay on this thread: waking passive
  // OpenMP threads costs more than they would save.
  if (n <= 4 * grain) rows(0, n);
  else at::parallel_for(0, n, grain, rows);
}

}  // namespace gpuforecast::detail::transformer
