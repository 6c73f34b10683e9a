#pragma once
// The inference path: the same function as NetImpl::cls (up to float rounding), computed faster:
// - each distinct token of a group is embedded once, with its first-layer q/k/v projection,
//   and gathered (a space has a handful of values per parameter);
// - the encoder runs batch-first on [n * l, d] rows with a hand-written attention: libtorch
//   1.13's MultiheadAttention does one bmm per (candidate, head), i.e. thousands of tiny GEMMs
//   with their dispatch overhead per batch;
// - the shared context is encoded once per group, not once per batch.
// Training keeps the module path (autograd); a test checks both paths agree.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "surrogate/transformer/encoding.hpp"
#include "surrogate/transformer/net.hpp"

namespace gpuforecast::detail::transformer {

// One post-norm GELU encoder layer (TransformerEncoderLayerImpl::forward without dropout) on
// x: [n * l, d]. `qkv` may hold the layer's input projection of x already.
Tensor encoder_layer(torch::nn::TransformerEncoderLayerImpl& layer, const Tensor& x, Tensor qkv, std::int64_t n,
                     std::int64_t l, const bool* pad);
torch::nn::TransformerEncoderLayerImpl& layer_at(NetImpl& net, std::size_t i);
// The encoder on n sequences of l tokens: x [n * l, d] -> [n * l, d].
Tensor encode_rows(NetImpl& net, Tensor x, Tensor qkv0, std::int64_t n, std::int64_t l, const bool* pad);

// Candidates of one context, tokenised into rows of a table of distinct tokens whose embeddings
// (and first-layer q/k/v) are computed once.
class PreparedGroup {
 public:
  PreparedGroup(NetImpl& net, const std::vector<const Candidate*>& cands, const TransformerOptions& opt,
                CandidateEncoder& encoder);

  [[nodiscard]] std::int64_t length(std::size_t i) const { return m_offsets[i + 1] - m_offsets[i]; }

  // [CLS] outputs [rows, d] of candidates `rows`, their own tokens padded to `lp`.
  [[nodiscard]] Tensor cls(std::span<const std::size_t> rows, std::int64_t lp) const;

 private:
  NetImpl& m_net;
  std::vector<std::int64_t> m_ids, m_offsets;
  std::int64_t m_pad = 0, m_summary = -1;
  Tensor m_x, m_qkv;  // [U (+ summary), d], [U (+ summary), 3d]
};

}  // namespace gpuforecast::detail::transformer
