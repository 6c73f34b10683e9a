// The module: layers, embeddings, heads, and the batch-first encoder used in training.
#include "surrogate/transformer/net.hpp"

#include <cmath>
#include <limits>

#include "surrogate/transformer/encoding.hpp"
#include "surrogate/transformer/inference_path.hpp"

namespace gpuforecast::detail::transformer {

// One post-norm GELU encoder layer, batch-first on x [B, L, d] with torch ops (differentiable):
// TransformerEncoderLayerImpl::forward without dropout. libtorch 1.13's MultiheadAttention does
// its two products as bmm over B * heads tiny matrices, which the CPU backend runs as one GEMM
// call per matrix; here scores and weighted values are broadcast products summed over one axis.
Tensor encoder_layer_autograd(torch::nn::TransformerEncoderLayerImpl& layer, const Tensor& x, const Tensor& pad) {
  auto& sa = *layer.self_attn;
  const auto b = x.size(0), l = x.size(1), d = x.size(2), heads = sa.options.num_heads(), dh = d / heads;
  const Tensor qkv = torch::linear(x, sa.in_proj_weight, sa.in_proj_bias);  // [B, L, 3d]
  const Tensor q = qkv.narrow(2, 0, d).reshape({b, l, heads, dh}).transpose(1, 2) *
                   (1.0 / std::sqrt(static_cast<double>(dh)));                      // [B, H, L, dh]
  const Tensor k = qkv.narrow(2, d, d).reshape({b, l, heads, dh}).transpose(1, 2);  // [B, H, L, dh]
  const Tensor v = qkv.narrow(2, 2 * d, d).reshape({b, l, heads, dh}).transpose(1, 2);
  Tensor scores = (q.unsqueeze(3) * k.unsqueeze(2)).sum(-1);  // [B, H, Lq, Lk]
  if (pad.defined()) scores = scores.masked_fill(pad.view({b, 1, 1, l}), -std::numeric_limits<float>::infinity());
  const Tensor w = torch::softmax(scores, -1);
  const Tensor att = (w.unsqueeze(-1) * v.unsqueeze(2)).sum(3).transpose(1, 2).reshape({b, l, d});
  Tensor y = torch::layer_norm(x + torch::linear(att, sa.out_proj->weight, sa.out_proj->bias), {d}, layer.norm1->weight,
                               layer.norm1->bias, layer.norm1->options.eps());
  const Tensor f = torch::linear(torch::gelu(torch::linear(y, layer.linear1->weight, layer.linear1->bias)),
                                 layer.linear2->weight, layer.linear2->bias);
  return torch::layer_norm(y + f, {d}, layer.norm2->weight, layer.norm2->bias, layer.norm2->options.eps());
}

NetImpl::NetImpl(const TransformerOptions& o) : opt(o) { reset(); }

void NetImpl::reset() {
  const std::int64_t d = opt.width;
  type_emb = register_module("type_emb", torch::nn::Embedding(token_type_count, d));
  name_emb = register_module("name_emb", torch::nn::Embedding(name_vocab, d));
  cat_emb = register_module("cat_emb", torch::nn::Embedding(category_vocab, d));
  num_proj = register_module("num_proj", torch::nn::Sequential(torch::nn::Linear(numeric_width, d),
                                                               torch::nn::GELU(), torch::nn::Linear(d, d)));
  auto layer = torch::nn::TransformerEncoderLayerOptions(d, opt.heads)
                   .dim_feedforward(static_cast<std::int64_t>(opt.ffn_multiplier) * d)
                   .dropout(opt.dropout)
                   .activation(torch::kGELU);
  encoder = register_module("encoder", torch::nn::TransformerEncoder(
                                           torch::nn::TransformerEncoderOptions(layer, opt.depth)));
  ctx_proj = register_module("ctx_proj", torch::nn::Linear(d, d));
  final_norm = register_module("final_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
  quant_head = register_module("quant_head", torch::nn::Sequential(torch::nn::Linear(d, d), torch::nn::GELU(),
                                                                   torch::nn::Linear(d, 3)));
  fail_head = register_module("fail_head", torch::nn::Linear(d, 1));
  bin_head = register_module("bin_head", torch::nn::Sequential(torch::nn::Linear(3 * d + 1, d), torch::nn::GELU(),
                                                               torch::nn::Linear(d, speedup_bin_count)));
  // The value projection is modulated per name (a cheap form of FT-Transformer's per-feature
  // embedding): without it, block_size_x=16 and tile_size_x=16 embed almost identically and
  // small models often fail to start learning.
  name_in = register_module("name_in", torch::nn::Embedding(name_vocab, numeric_width));
  name_out = register_module("name_out", torch::nn::Embedding(name_vocab, d));
  torch::NoGradGuard ng;
  name_in->weight.normal_(0.0, 0.3);
  name_out->weight.normal_(0.0, 0.3);
}

Tensor NetImpl::embed(const Tensor& type, const Tensor& name, const Tensor& cat, const Tensor& num) {
  const Tensor value = num_proj->forward(num * (1.0 + name_in(name))) * (1.0 + name_out(name));
  return type_emb(type) + name_emb(name) + cat_emb(cat) + value;
}

Tensor NetImpl::cls(const Tensor& ctx, const Tensor& type, const Tensor& name, const Tensor& cat, const Tensor& num,
           const Tensor& pad) {
  if (opt.dropout == 0.0 && !module_path())
    return cls_batch_first(ctx, type, name, cat, num, pad);
  const auto b = type.size(0);
  Tensor x = embed(type, name, cat, num).transpose(0, 1);  // [Lp, B, d]
  Tensor mask = pad;
  if (ctx.defined() && ctx.size(0) > 0) {
    const Tensor summary = ctx_proj(encoder->forward(ctx.unsqueeze(1)).mean(0));  // [1, d]
    x = torch::cat({x, summary.unsqueeze(0).expand({1, b, summary.size(1)})}, 0);
    if (pad.defined()) mask = torch::cat({pad, torch::zeros({b, 1}, torch::kBool)}, 1);
  }
  Tensor y = encoder->forward(x, {}, mask);
  // [CLS] plus the mean of all outputs: pooling gives every token a direct gradient path.
  return final_norm(y[0] + y.mean(0));
}

Tensor NetImpl::encode_batch_first(Tensor x, const Tensor& pad) {
  for (std::size_t i = 0; i < encoder->layers->size(); ++i)
    x = encoder_layer_autograd(*encoder->layers->ptr<torch::nn::TransformerEncoderLayerImpl>(i), x, pad);
  return x;
}
Tensor NetImpl::cls_batch_first(const Tensor& ctx, const Tensor& type, const Tensor& name, const Tensor& cat,
                       const Tensor& num, const Tensor& pad) {
  const auto b = type.size(0);
  Tensor x = embed(type, name, cat, num);  // [B, Lp, d]
  Tensor mask = pad;
  if (ctx.defined() && ctx.size(0) > 0) {
    const Tensor summary = ctx_proj(encode_batch_first(ctx.unsqueeze(0), {}).mean(1));  // [1, d]
    x = torch::cat({x, summary.unsqueeze(1).expand({b, 1, summary.size(1)})}, 1);
    if (pad.defined()) mask = torch::cat({pad, torch::zeros({b, 1}, torch::kBool)}, 1);
  }
  const Tensor y = encode_batch_first(x, mask);
  return final_norm(y.select(1, 0) + y.mean(1));
}

Tensor NetImpl::quantiles(const Tensor& h) {
  Tensor o = quant_head->forward(h);
  Tensor mid = o.select(1, 0);
  Tensor lo = mid - torch::nn::functional::softplus(o.select(1, 1)) - 1e-3;
  Tensor hi = mid + torch::nn::functional::softplus(o.select(1, 2)) + 1e-3;
  return torch::stack({lo, mid, hi}, 1);
}
Tensor NetImpl::fail_logit(const Tensor& h) { return fail_head(h).squeeze(1); }
Tensor NetImpl::bin_logits(const Tensor& href, const Tensor& hcand, const Tensor& dq) {
  return bin_head->forward(torch::cat({href, hcand, href - hcand, dq.unsqueeze(1)}, 1));
}

}  // namespace gpuforecast::detail::transformer
