// The GRPO-style reinforcement-learning stage on the bin head (TransformerSurrogate::reinforce).
#include <chrono>
#include <cmath>
#include <map>
#include <random>

#include "gpuforecast/core/error.hpp"
#include "surrogate/transformer/impl.hpp"

namespace gpuforecast {

using namespace detail::transformer;  // this folder's internals
using torch::Tensor;

TransformerRlReport TransformerSurrogate::Impl::reinforce(std::span<const Observation> obs, const TransformerRlOptions& ro) {
  if (!net) throw invalid_argument_error("TransformerSurrogate::reinforce: the model is not trained (call fit)");
  if (ro.group_size < 2 || ro.pairs_per_step < 1 || !(ro.noise > 0))
    throw invalid_argument_error("TransformerRlOptions: group_size >= 2, pairs_per_step >= 1, noise > 0");
  const auto t0 = std::chrono::steady_clock::now();
  TransformerRlReport rep;
  torch::manual_seed(ro.seed);
  std::mt19937_64 rng(ro.seed);
  // The encoder is frozen: embeddings and runtime forecasts are computed once, the policy is
  // the bin head alone (the study fine-tunes the answer distribution, not the perception).
  struct Items {
    Tensor h;
    std::vector<double> logt_pred, logt_true;
  };
  std::map<std::string, std::vector<std::size_t>> by_group;
  for (std::size_t i = 0; i < obs.size(); ++i)
    if (obs[i].measurement.ok() && obs[i].measurement.median_ms > 0)
      by_group[normaliser_key(obs[i].candidate)].push_back(i);
  std::vector<Items> items;
  std::vector<double> weights;
  {
    c10::InferenceMode guard;
    for (auto& [key, rows] : by_group) {
      if (rows.size() < 2) continue;
      std::vector<Candidate> cands;
      Items it;
      for (auto r : rows) {
        cands.push_back(obs[r].candidate);
        it.logt_true.push_back(std::log(obs[r].measurement.median_ms));
      }
      auto [h, lp] = embed_all(cands);
      it.h = h.clone();
      it.logt_pred = std::move(lp);
      weights.push_back(static_cast<double>(rows.size()));
      items.push_back(std::move(it));
    }
  }
  if (items.empty()) throw invalid_argument_error("TransformerSurrogate::reinforce: needs >= 2 ok observations of one group");
  // Plain tensors from here on (created outside inference mode so autograd may use them).
  for (auto& it : items) it.h = it.h.clone();
  std::discrete_distribution<std::size_t> pick(weights.begin(), weights.end());
  auto reference_head = std::dynamic_pointer_cast<torch::nn::SequentialImpl>(net->bin_head->clone());
  torch::optim::AdamW optim(net->bin_head->parameters(), torch::optim::AdamWOptions(ro.lr).weight_decay(0.0));
  const auto P = static_cast<std::int64_t>(ro.pairs_per_step);
  const auto G = static_cast<std::int64_t>(ro.group_size);
  const Tensor bins_idx = torch::arange(speedup_bin_count, torch::kLong);
  for (int step = 0; step < ro.steps; ++step) {
    std::vector<Tensor> hr, hc;
    Tensor dq = torch::empty({P});
    Tensor y = torch::empty({P}, torch::kLong);
    for (std::int64_t p = 0; p < P; ++p) {
      const auto& it = items[pick(rng)];
      std::uniform_int_distribution<std::size_t> u(0, it.logt_true.size() - 1);
      const auto a = u(rng);
      auto b = u(rng);
      while (b == a) b = u(rng);
      hr.push_back(it.h[static_cast<std::int64_t>(a)]);
      hc.push_back(it.h[static_cast<std::int64_t>(b)]);
      dq[p] = static_cast<float>((it.logt_pred[a] - it.logt_pred[b]) / ln2);
      y[p] = speedup_bin(std::exp(it.logt_true[a]), std::exp(it.logt_true[b])) - 1;
    }
    const Tensor href = torch::stack(hr), hcand = torch::stack(hc);
    const Tensor feats = torch::cat({href, hcand, href - hcand, dq.unsqueeze(1)}, 1);
    const Tensor logits = net->bin_head->forward(feats);  // [P, 8]
    // G answers per prompt: a stated distribution softmax(a) from a Gaussian policy around the
    // logits, and its mode as the answer bin.
    const Tensor a = logits.detach().unsqueeze(1) + ro.noise * torch::randn({P, G, speedup_bin_count});
    const Tensor q = torch::softmax(a, 2);
    const Tensor answer = a.argmax(2);
    const Tensor yy = y.unsqueeze(1);
    Tensor reward = (answer == yy).to(torch::kFloat);
    const Tensor onehot = (bins_idx.view({1, 1, speedup_bin_count}) == yy.unsqueeze(2)).to(torch::kFloat);
    if (ro.reward == TransformerRlOptions::Reward::correctness_brier) {
      reward = reward + 1.0F - 0.5F * (q - onehot).pow(2).sum(2);
    } else if (ro.reward == TransformerRlOptions::Reward::correctness_crps) {
      const Tensor fq = q.cumsum(2).narrow(2, 0, speedup_bin_count - 1);
      const Tensor fy = onehot.cumsum(2).narrow(2, 0, speedup_bin_count - 1);
      reward = reward + 1.0F - (fq - fy).pow(2).sum(2) / static_cast<float>(speedup_bin_count - 1);
    }
    const Tensor adv = (reward - reward.mean(1, true)) / (reward.std(1, true, true) + 1e-4F);
    const Tensor logp = -(a - logits.unsqueeze(1)).pow(2).sum(2) / (2.0 * ro.noise * ro.noise);
    Tensor loss = -(adv * logp).mean();
    if (ro.kl_weight > 0) {
      Tensor ref_logp;
      {
        torch::NoGradGuard ng;
        ref_logp = torch::log_softmax(reference_head->forward(feats), 1);
      }
      const Tensor lp = torch::log_softmax(logits, 1);
      loss = loss + ro.kl_weight * (lp.exp() * (lp - ref_logp)).sum(1).mean();
    }
    optim.zero_grad();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(net->bin_head->parameters(), 1.0);
    optim.step();
    rep.mean_reward.push_back(reward.mean().item<double>());
  }
  net->eval();
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace gpuforecast
