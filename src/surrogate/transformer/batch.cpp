#include "surrogate/transformer/batch.hpp"

#include <algorithm>
#include <cstdint>

namespace gpuforecast::detail::transformer {

void tokens_to_tensors(const std::vector<Token>& toks, Tensor& type, Tensor& name, Tensor& cat, Tensor& num) {
  const auto n = static_cast<std::int64_t>(toks.size());
  type = torch::empty({n}, torch::kLong);
  name = torch::empty({n}, torch::kLong);
  cat = torch::empty({n}, torch::kLong);
  num = torch::empty({n, numeric_width}, torch::kFloat);
  auto* t = type.data_ptr<std::int64_t>();
  auto* m = name.data_ptr<std::int64_t>();
  auto* c = cat.data_ptr<std::int64_t>();
  auto* f = num.data_ptr<float>();
  for (std::int64_t i = 0; i < n; ++i) {
    const auto& k = toks[static_cast<std::size_t>(i)];
    t[i] = k.type;
    m[i] = k.name;
    c[i] = k.category;
    std::copy(k.numeric.begin(), k.numeric.end(), f + i * numeric_width);
  }
}

Block encode_block(const std::vector<const Candidate*>& cands, const TransformerOptions& opt,
                   CandidateEncoder& encoder) {
  Block b;
  tokens_to_tensors(context_tokens(*cands.front(), opt.source_tokens, opt.max_source_tokens), b.ctx_type,
                    b.ctx_name, b.ctx_cat, b.ctx_num);
  std::vector<std::vector<Token>> per(cands.size());
  std::size_t lp = 0, lmin = SIZE_MAX;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    encoder.encode(*cands[i], per[i]);
    lp = std::max(lp, per[i].size());
    lmin = std::min(lmin, per[i].size());
  }
  const auto n = static_cast<std::int64_t>(cands.size());
  const auto l = static_cast<std::int64_t>(lp);
  b.type = torch::zeros({n, l}, torch::kLong);
  b.name = torch::zeros({n, l}, torch::kLong);
  b.cat = torch::zeros({n, l}, torch::kLong);
  b.num = torch::zeros({n, l, numeric_width}, torch::kFloat);
  if (lmin != lp) b.pad = torch::zeros({n, l}, torch::kBool);
  auto* t = b.type.data_ptr<std::int64_t>();
  auto* m = b.name.data_ptr<std::int64_t>();
  auto* c = b.cat.data_ptr<std::int64_t>();
  auto* f = b.num.data_ptr<float>();
  bool* p = b.pad.defined() ? b.pad.data_ptr<bool>() : nullptr;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto& toks = per[static_cast<std::size_t>(i)];
    for (std::int64_t j = 0; j < l; ++j) {
      const auto o = i * l + j;
      if (j < static_cast<std::int64_t>(toks.size())) {
        const auto& k = toks[static_cast<std::size_t>(j)];
        t[o] = k.type;
        m[o] = k.name;
        c[o] = k.category;
        std::copy(k.numeric.begin(), k.numeric.end(), f + o * numeric_width);
      } else if (p) {
        p[o] = true;
      }
    }
  }
  return b;
}

Tensor as_index(const std::vector<std::int64_t>& v) {
  return torch::from_blob(const_cast<std::int64_t*>(v.data()), {static_cast<std::int64_t>(v.size())}, torch::kLong)
      .clone();
}

}  // namespace gpuforecast::detail::transformer
