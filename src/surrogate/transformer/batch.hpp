#pragma once
// Candidates into tensors for the module path and training: a Block holds the candidates of
// one context (kernel, device, problem) padded to a common length.
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "surrogate/transformer/encoding.hpp"
#include "surrogate/transformer/net.hpp"

namespace gpuforecast::detail::transformer {

struct Block {  // candidates sharing a context
  Tensor ctx_type, ctx_name, ctx_cat, ctx_num;  // [Lc], [Lc, F]
  Tensor type, name, cat, num;                  // [N, Lp], [N, Lp, F]
  Tensor pad;                                   // [N, Lp] bool, undefined when all lengths agree
  Tensor ctx(NetImpl& net) const {
    if (ctx_type.size(0) == 0) return {};
    return net.embed(ctx_type, ctx_name, ctx_cat, ctx_num);
  }
  Tensor cls(NetImpl& net, const Tensor& idx) const {
    const Tensor c = ctx(net);
    if (!idx.defined()) return net.cls(c, type, name, cat, num, pad);
    return net.cls(c, type.index_select(0, idx), name.index_select(0, idx), cat.index_select(0, idx),
                   num.index_select(0, idx), pad.defined() ? pad.index_select(0, idx) : Tensor{});
  }
};

void tokens_to_tensors(const std::vector<Token>& toks, Tensor& type, Tensor& name, Tensor& cat, Tensor& num);
Block encode_block(const std::vector<const Candidate*>& cands, const TransformerOptions& opt, CandidateEncoder& encoder);
// A copy of `v` as a 1-D long tensor.
Tensor as_index(const std::vector<std::int64_t>& v);

// Groups candidate indices by context key, keeping first-seen order.
template <class Get>
std::vector<std::vector<std::size_t>> group_by_context(std::size_t n, Get get, bool source_tokens) {
  std::unordered_map<std::string, std::size_t> where;
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < n; ++i) {
    auto key = context_key(get(i), source_tokens);
    auto [it, fresh] = where.try_emplace(std::move(key), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

}  // namespace gpuforecast::detail::transformer
