#include "surrogate/transformer/fast_encoder.hpp"

#include <algorithm>
#include <memory>

#include "surrogate/transformer/attention.hpp"
#include "surrogate/transformer/batch.hpp"

namespace gpuforecast::detail::transformer {

Tensor encoder_layer(torch::nn::TransformerEncoderLayerImpl& layer, const Tensor& x, Tensor qkv, std::int64_t n,
                     std::int64_t l, const bool* pad) {
  const auto d = x.size(1);
  auto& sa = *layer.self_attn;
  if (!qkv.defined()) qkv = torch::linear(x, sa.in_proj_weight, sa.in_proj_bias);
  qkv = qkv.contiguous();
  Tensor att = torch::empty({n * l, d});
  attention(qkv.data_ptr<float>(), pad, att.data_ptr<float>(), n, l, d, sa.options.num_heads());
  Tensor y = torch::linear(att, sa.out_proj->weight, sa.out_proj->bias);
  y.add_(x);
  y = torch::layer_norm(y, {d}, layer.norm1->weight, layer.norm1->bias, layer.norm1->options.eps());
  Tensor f = torch::linear(torch::gelu(torch::linear(y, layer.linear1->weight, layer.linear1->bias)),
                           layer.linear2->weight, layer.linear2->bias);
  f.add_(y);
  return torch::layer_norm(f, {d}, layer.norm2->weight, layer.norm2->bias, layer.norm2->options.eps());
}

torch::nn::TransformerEncoderLayerImpl& layer_at(NetImpl& net, std::size_t i) {
  return *net.encoder->layers->ptr<torch::nn::TransformerEncoderLayerImpl>(i);
}

Tensor encode_rows(NetImpl& net, Tensor x, Tensor qkv0, std::int64_t n, std::int64_t l, const bool* pad) {
  const auto depth = net.encoder->layers->size();
  for (std::size_t i = 0; i < depth; ++i) x = encoder_layer(layer_at(net, i), x, i == 0 ? qkv0 : Tensor{}, n, l, pad);
  return x;
}

PreparedGroup::PreparedGroup(NetImpl& net, const std::vector<const Candidate*>& cands, const TransformerOptions& opt,
                             CandidateEncoder& encoder)
    : m_net(net) {
  TokenTable table;
  std::vector<Token> toks;
  m_offsets.reserve(cands.size() + 1);
  m_offsets.push_back(0);
  for (const auto* c : cands) {
    encoder.encode(*c, toks);
    for (const auto& t : toks) m_ids.push_back(table.add(t));
    m_offsets.push_back(static_cast<std::int64_t>(m_ids.size()));
  }
  m_pad = table.add(Token{});
  Tensor type, name, cat, num;
  tokens_to_tensors(table.tokens(), type, name, cat, num);
  m_x = net.embed(type, name, cat, num);  // [U, d]
  const auto ctx = context_tokens(*cands.front(), opt.source_tokens, opt.max_source_tokens);
  if (!ctx.empty()) {
    tokens_to_tensors(ctx, type, name, cat, num);
    const auto lc = static_cast<std::int64_t>(ctx.size());
    const Tensor y = encode_rows(net, net.embed(type, name, cat, num), {}, 1, lc, nullptr);
    const Tensor summary = net.ctx_proj(y.mean(0, true));  // [1, d]
    m_summary = m_x.size(0);
    m_x = torch::cat({m_x, summary}, 0);
  }
  auto& sa = *layer_at(net, 0).self_attn;
  m_qkv = torch::linear(m_x, sa.in_proj_weight, sa.in_proj_bias);
}

Tensor PreparedGroup::cls(std::span<const std::size_t> rows, std::int64_t lp) const {
  const auto n = static_cast<std::int64_t>(rows.size());
  const std::int64_t l = lp + (m_summary >= 0 ? 1 : 0);
  Tensor idx = torch::empty({n * l}, torch::kLong);
  auto* ix = idx.data_ptr<std::int64_t>();
  std::unique_ptr<bool[]> pad;  // [n, l], true = padding
  bool padded = false;
  for (std::int64_t r = 0; r < n; ++r) {
    const auto c = rows[static_cast<std::size_t>(r)];
    const auto len = length(c);
    padded = padded || len < lp;
    std::copy(m_ids.begin() + m_offsets[c], m_ids.begin() + m_offsets[c + 1], ix + r * l);
    std::fill(ix + r * l + len, ix + r * l + lp, m_pad);
    if (m_summary >= 0) ix[r * l + lp] = m_summary;
  }
  if (padded) {
    pad = std::make_unique<bool[]>(static_cast<std::size_t>(n * l));  // value-initialised: false
    for (std::int64_t r = 0; r < n; ++r)
      for (std::int64_t j = length(rows[static_cast<std::size_t>(r)]); j < lp; ++j) pad[static_cast<std::size_t>(r * l + j)] = true;
  }
  const Tensor x = m_x.index_select(0, idx);
  const Tensor qkv = m_qkv.index_select(0, idx);
  const Tensor y = encode_rows(m_net, x, qkv, n, l, pad.get())
                       .view({n, l, x.size(1)});
  return m_net.final_norm(y.select(1, 0) + y.mean(1));
}

}  // namespace gpuforecast::detail::transformer
