#pragma once
// The fast inference path's attention kernel (hand-written, 8-float vectors, AVX2 clone picked at
// run time): no libtorch in its interface.
#include <cstdint>

namespace gpuforecast::detail::transformer {

// softmax(q k^T / sqrt(dh)) v for n sequences of l tokens and every head: `qkv` is [n * l, 3d]
// rows of q|k|v, `pad` ([n, l], true = padding; may be null) masks keys, `out` receives [n * l, d].
// Runs on ATen's intra-op threads when there are enough sequences.
void attention(const float* qkv, const bool* pad, float* out, std::int64_t n, std::int64_t l, std::int64_t d,
               std::int64_t heads);

}  // namespace gpuforecast::detail::transformer
