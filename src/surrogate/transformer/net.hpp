#pragma once
// The transformer's torch module (libtorch's frontend convention: an Impl class plus the holder
// TORCH_MODULE makes; its options are TransformerOptions). Token embeddings, the encoder, and the
// heads on the [CLS] output: log-runtime quantiles, p_fail and the eight speedup bins.
#include <torch/torch.h>

#include "surrogate/transformer.hpp"

namespace gpuforecast::detail::transformer {

using torch::Tensor;

struct NetImpl : torch::nn::Cloneable<NetImpl> {
  explicit NetImpl(const TransformerOptions& o);
  void reset() override;

  // Token embeddings: [..] ids and [.., numeric_width] features -> [.., d].
  Tensor embed(const Tensor& type, const Tensor& name, const Tensor& cat, const Tensor& num);

  // [CLS] output: [B, d]. The context (device, kernel, problem, source tokens) is encoded once
  // as its own sequence and mean-pooled into ONE token that every candidate sequence shares, so
  // a candidate's sequence is [CLS] + its parameters + geometry + features + that token.
  Tensor cls(const Tensor& ctx, const Tensor& type, const Tensor& name, const Tensor& cat, const Tensor& num,
             const Tensor& pad);

  // The same as cls() with the encoder layers run batch-first by encoder_layer_autograd (no
  // dropout): what training uses.
  Tensor encode_batch_first(Tensor x, const Tensor& pad);
  Tensor cls_batch_first(const Tensor& ctx, const Tensor& type, const Tensor& name, const Tensor& cat,
                         const Tensor& num, const Tensor& pad);

  // Ordered quantiles q05 <= q50 <= q95 in normalised log-time units: [B, 3].
  Tensor quantiles(const Tensor& h);
  Tensor fail_logit(const Tensor& h);
  // dq: predicted log2(t_ref / t_cand) from the quantile head, [B].
  Tensor bin_logits(const Tensor& href, const Tensor& hcand, const Tensor& dq);

  TransformerOptions opt;
  torch::nn::Embedding type_emb{nullptr}, name_emb{nullptr}, cat_emb{nullptr}, name_in{nullptr}, name_out{nullptr};
  torch::nn::Sequential num_proj{nullptr};
  torch::nn::TransformerEncoder encoder{nullptr};
  torch::nn::Linear ctx_proj{nullptr};
  torch::nn::LayerNorm final_norm{nullptr};
  torch::nn::Sequential quant_head{nullptr};
  torch::nn::Linear fail_head{nullptr};
  torch::nn::Sequential bin_head{nullptr};
};
TORCH_MODULE(Net);

// One post-norm GELU encoder layer, batch-first on x [B, L, d] with torch ops (differentiable).
Tensor encoder_layer_autograd(torch::nn::TransformerEncoderLayerImpl& layer, const Tensor& x, const Tensor& pad);

}  // namespace gpuforecast::detail::transformer
