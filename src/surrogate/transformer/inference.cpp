// Inference: forecasts and speedup-bin probabilities, on the fast path or the module path.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "gpuforecast/core/error.hpp"
#include "surrogate/transformer/batch.hpp"
#include "surrogate/transformer/fast_encoder.hpp"
#include "surrogate/transformer/impl.hpp"
#include "surrogate/transformer/inference_path.hpp"

namespace gpuforecast {

using namespace detail::transformer;  // this folder's internals
using torch::Tensor;

// [CLS] outputs of the candidates `rows` of one context, in chunks: f(first, h) with h the
// outputs of rows[first, first + h.size(0)). Batches of `inference_batch` are padded to their
// longest candidate (as the module path does); the fast path runs them in sub-batches of at
// most `fast_chunk` rows, which only bounds memory (same results).
template <class F>
void TransformerSurrogate::Impl::forward_rows(std::span<const Candidate> cands, const std::vector<std::size_t>& rows,
                                              CandidateEncoder& enc, F&& f) {
  const auto batch = static_cast<std::size_t>(opt.inference_batch);
  if (module_path()) {
    for (std::size_t start = 0; start < rows.size(); start += batch) {
      const auto end = std::min(rows.size(), start + batch);
      std::vector<const Candidate*> chunk;
      for (auto i = start; i < end; ++i) chunk.push_back(&cands[rows[i]]);
      f(start, encode_block(chunk, opt, enc).cls(*net, {}));
    }
    return;
  }
  std::vector<const Candidate*> all;
  all.reserve(rows.size());
  for (auto r : rows) all.push_back(&cands[r]);
  const PreparedGroup group(*net, all, opt, enc);
  std::vector<std::size_t> local(rows.size());
  std::iota(local.begin(), local.end(), std::size_t{0});
  constexpr std::size_t fast_chunk = 512;  // 256-512 measured best (cache-sized activations)
  for (std::size_t start = 0; start < rows.size(); start += batch) {
    const auto end = std::min(rows.size(), start + batch);
    std::int64_t lp = 0;
    for (auto i = start; i < end; ++i) lp = std::max(lp, group.length(i));
    for (auto s = start; s < end; s += fast_chunk) {
      const auto e = std::min(end, s + fast_chunk);
      f(s, group.cls(std::span<const std::size_t>(local).subspan(s, e - s), lp));
    }
  }
}

std::vector<Forecast> TransformerSurrogate::Impl::predict(std::span<const Candidate> cands) {
  if (!net) throw invalid_argument_error("TransformerSurrogate::predict: the model is not trained (call fit)");
  std::vector<Forecast> out(cands.size());
  if (cands.empty()) return out;
  c10::InferenceMode guard;
  CandidateEncoder enc;
  Tensor href;
  double ref_log = 0;
  if (reference) {
    forward_rows(std::span<const Candidate>(&*reference, 1), {0}, enc, [&](std::size_t, const Tensor& h) {
      href = h;
      const auto rn = normaliser(*reference);
      ref_log = rn.mu + rn.sigma * net->quantiles(h)[0][1].item<double>();
    });
  }
  const auto groups = group_by_context(cands.size(), [&](std::size_t i) -> const Candidate& { return cands[i]; },
                                       opt.source_tokens);
  for (const auto& rows : groups) {
    const Normaliser nm = normaliser(cands[rows.front()]);
    forward_rows(cands, rows, enc, [&](std::size_t start, const Tensor& h) {
      const auto n = h.size(0);
      const Tensor q = net->quantiles(h).contiguous();
      const Tensor pf = torch::sigmoid(net->fail_logit(h)).contiguous();
      const auto* qa = q.data_ptr<float>();
      const auto* fa = pf.data_ptr<float>();
      Tensor bins;
      if (href.defined()) {
        const Tensor logt = nm.mu + nm.sigma * q.select(1, 1).to(torch::kDouble);
        const Tensor dq = ((ref_log - logt) / ln2).to(torch::kFloat);
        bins = torch::softmax(net->bin_logits(href.expand({n, href.size(1)}), h, dq), 1).contiguous();
      }
      for (std::int64_t k = 0; k < n; ++k) {
        auto& f = out[rows[start + static_cast<std::size_t>(k)]];
        const double lo = qa[3 * k], mid = qa[3 * k + 1], hi = qa[3 * k + 2];
        f.median_ms = std::exp(nm.mu + nm.sigma * mid);
        f.lower_ms = std::exp(nm.mu + nm.sigma * lo);
        f.upper_ms = std::exp(nm.mu + nm.sigma * hi);
        f.p_fail = fa[k];
        f.spread = nm.sigma * (hi - lo) / 3.29;  // a normal's 5-95% width is 3.29 std
        if (bins.defined()) {
          std::array<double, speedup_bin_count> p{};
          const auto* ba = bins.data_ptr<float>() + k * speedup_bin_count;
          for (int j = 0; j < speedup_bin_count; ++j) p[static_cast<std::size_t>(j)] = ba[j];
          f.bin_probabilities = p;
        }
      }
    });
  }
  return out;
}

std::pair<Tensor, std::vector<double>> TransformerSurrogate::Impl::embed_all(std::span<const Candidate> cands) {
  const auto d = static_cast<std::int64_t>(opt.width);
  Tensor h = torch::zeros({static_cast<std::int64_t>(cands.size()), d});
  std::vector<double> logt(cands.size());
  CandidateEncoder enc;
  const auto groups = group_by_context(cands.size(), [&](std::size_t i) -> const Candidate& { return cands[i]; },
                                       opt.source_tokens);
  for (const auto& rows : groups) {
    const Normaliser nm = normaliser(cands[rows.front()]);
    forward_rows(cands, rows, enc, [&](std::size_t start, const Tensor& hc) {
      const auto n = hc.size(0);
      std::vector<std::int64_t> where(static_cast<std::size_t>(n));
      for (std::int64_t k = 0; k < n; ++k)
        where[static_cast<std::size_t>(k)] = static_cast<std::int64_t>(rows[start + static_cast<std::size_t>(k)]);
      h.index_copy_(0, as_index(where), hc);
      const Tensor q = net->quantiles(hc).contiguous();
      const auto* qa = q.data_ptr<float>();
      for (std::int64_t k = 0; k < n; ++k)
        logt[static_cast<std::size_t>(where[static_cast<std::size_t>(k)])] = nm.mu + nm.sigma * qa[3 * k + 1];
    });
  }
  return {h, logt};
}

std::vector<std::array<double, 8>> TransformerSurrogate::Impl::predict_bins(std::span<const Candidate> refs, std::span<const Candidate> cands) {
  if (!net) throw invalid_argument_error("TransformerSurrogate::predict_bins: the model is not trained (call fit)");
  if (refs.size() != 1 && refs.size() != cands.size())
    throw invalid_argument_error("TransformerSurrogate::predict_bins: need one reference or one per candidate (got " +
                                 std::to_string(refs.size()) + " for " + std::to_string(cands.size()) + ")");
  std::vector<std::array<double, 8>> out(cands.size());
  if (cands.empty()) return out;
  c10::InferenceMode guard;
  auto [hr, lr] = embed_all(refs);
  auto [hc, lc] = embed_all(cands);
  const auto n = static_cast<std::int64_t>(cands.size());
  Tensor dq = torch::empty({n});
  for (std::int64_t i = 0; i < n; ++i)
    dq[i] = static_cast<float>((lr[refs.size() == 1 ? 0 : static_cast<std::size_t>(i)] - lc[static_cast<std::size_t>(i)]) / ln2);
  if (refs.size() == 1) hr = hr.expand({n, hr.size(1)});
  const Tensor p = torch::softmax(net->bin_logits(hr, hc, dq), 1).contiguous();
  const auto* pa = p.data_ptr<float>();
  for (std::int64_t i = 0; i < n; ++i)
    for (int j = 0; j < 8; ++j) out[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = pa[i * 8 + j];
  return out;
}

}  // namespace gpuforecast
