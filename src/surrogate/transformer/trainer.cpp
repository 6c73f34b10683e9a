// Training: losses, the optimisation loop with early stopping, fit, fine_tune and update.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numbers>

#include "gpuforecast/core/error.hpp"
#include "surrogate/transformer/batch.hpp"
#include "surrogate/transformer/fused_adamw.hpp"
#include "surrogate/transformer/impl.hpp"
#include "surrogate/transformer/inference_path.hpp"
#include "surrogate/transformer/options.hpp"

namespace gpuforecast {

namespace detail::transformer {

struct TrainGroup {
  Block block;
  Normaliser norm;
  Tensor z;   // [N] normalised log time (0 for failed)
  Tensor ok;  // [N] 1 ok, 0 failed
  std::vector<std::int64_t> train, val;
  std::vector<std::int64_t> ok_rows;  // rows with ok status (for pairs)
};

namespace {

// Loss terms for rows `idx` of a group (mean over the batch).
struct Losses {
  Tensor quantile, rank, fail, bin;
};

Tensor pinball(const Tensor& q, const Tensor& z) {
  static const Tensor taus = torch::tensor({0.05F, 0.5F, 0.95F});
  const Tensor e = z.unsqueeze(1) - q;
  return torch::max(taus * e, (taus - 1.0F) * e).sum(1).mean();
}

Tensor pairwise_logistic(const Tensor& s, const Tensor& z) {
  const Tensor dz = z.unsqueeze(0) - z.unsqueeze(1);  // [i, j] = z_j - z_i
  const Tensor ds = s.unsqueeze(0) - s.unsqueeze(1);
  const Tensor w = (dz.abs() > 1e-3).to(torch::kFloat);
  return (torch::nn::functional::softplus(-torch::sign(dz) * ds) * w).sum() / w.sum().clamp_min(1.0);
}

Tensor bin_targets(const Tensor& log2_speedup) {
  return (torch::floor(2.0 * log2_speedup) + 4.0).clamp(1.0, 8.0).to(torch::kLong) - 1;
}

Losses compute_losses(NetImpl& net, const TrainGroup& g, const Tensor& idx, bool with_bins) {
  Losses l;
  const Tensor h = g.block.cls(net, idx);
  const Tensor ok = g.ok.index_select(0, idx);
  l.fail = torch::nn::functional::binary_cross_entropy_with_logits(net.fail_logit(h), 1.0F - ok);
  const Tensor okmask = ok > 0.5F;
  const auto n_ok = okmask.sum().item<std::int64_t>();
  if (n_ok == 0) {
    l.quantile = l.rank = l.bin = torch::zeros({});
    return l;
  }
  const Tensor hk = h.index({okmask});
  const Tensor zk = g.z.index_select(0, idx).index({okmask});
  const Tensor q = net.quantiles(hk);
  l.quantile = pinball(q, zk);
  const Tensor s = q.select(1, 1);
  l.rank = n_ok >= 2 ? pairwise_logistic(s, zk) : torch::zeros({});
  if (with_bins && n_ok >= 2) {
    const Tensor perm = torch::randperm(n_ok, torch::kLong);
    const double scale = g.norm.sigma / ln2;
    const Tensor target = bin_targets((zk - zk.index_select(0, perm)) * scale);
    const Tensor dq = (s - s.index_select(0, perm)) * scale;
    l.bin = torch::nn::functional::cross_entropy(net.bin_logits(hk, hk.index_select(0, perm), dq), target);
  } else {
    l.bin = torch::zeros({});
  }
  return l;
}

}  // namespace
}  // namespace detail::transformer

using namespace detail::transformer;  // this folder's internals
using torch::Tensor;

void TransformerSurrogate::Impl::fit_normalisers(std::span<const Observation> obs, bool replace) {
  if (replace) norms.clear();
  std::map<std::string, std::vector<double>> logs;
  for (const auto& o : obs)
    if (o.measurement.ok() && o.measurement.median_ms > 0)
      logs[normaliser_key(o.candidate)].push_back(std::log(o.measurement.median_ms));
  std::map<std::string, std::vector<double>> small;
  for (auto& [key, v] : logs) {
    if (norms.count(key)) continue;
    double m = 0;
    for (double x : v) m += x;
    m /= static_cast<double>(v.size());
    double var = 0;
    for (double x : v) var += (x - m) * (x - m);
    const double sd = v.size() > 1 ? std::sqrt(var / static_cast<double>(v.size() - 1)) : 0.0;
    if (v.size() >= 10) {
      norms[key] = Normaliser{m, std::max(sd, 0.05)};
    } else {
      small[key] = {m, static_cast<double>(v.size())};
    }
  }
  rebuild_fallbacks();
  // Few points: their own location (>= 3 points), the pooled scale of the kernel's groups.
  for (auto& [key, mv] : small) {
    const auto kp = key.substr(0, key.rfind('|'));
    Normaliser pooled = kp_norms.count(kp) ? kp_norms[kp] : (norms.empty() ? Normaliser{mv[0], 1.0} : global);
    if (mv[1] >= 3) pooled.mu = mv[0];
    norms[key] = pooled;
  }
  rebuild_fallbacks();
}

std::vector<TrainGroup> TransformerSurrogate::Impl::make_groups(std::span<const Observation> obs, double val_fraction, std::mt19937_64& rng) {
  auto idx = group_by_context(obs.size(), [&](std::size_t i) -> const Candidate& { return obs[i].candidate; },
                              opt.source_tokens);
  std::vector<TrainGroup> out;
  CandidateEncoder enc;
  for (auto& rows : idx) {
    std::vector<const Candidate*> cands;
    for (auto r : rows) cands.push_back(&obs[r].candidate);
    TrainGroup g;
    g.block = encode_block(cands, opt, enc);
    g.norm = normaliser(*cands.front());
    const auto n = static_cast<std::int64_t>(rows.size());
    g.z = torch::zeros({n});
    g.ok = torch::zeros({n});
    auto* z = g.z.data_ptr<float>();
    auto* ok = g.ok.data_ptr<float>();
    for (std::int64_t i = 0; i < n; ++i) {
      const auto& m = obs[rows[static_cast<std::size_t>(i)]].measurement;
      if (m.ok() && m.median_ms > 0 && std::isfinite(m.median_ms)) {
        ok[i] = 1;
        z[i] = static_cast<float>((std::log(m.median_ms) - g.norm.mu) / g.norm.sigma);
        g.ok_rows.push_back(i);
      }
    }
    std::vector<std::int64_t> all(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
    std::shuffle(all.begin(), all.end(), rng);
    // Early stopping on a handful of points is noise that also costs training data: small
    // groups train on everything for the fixed schedule.
    const auto n_val = (val_fraction > 0 && n >= 200) ? static_cast<std::size_t>(val_fraction * static_cast<double>(n)) : 0;
    g.val.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n_val));
    g.train.assign(all.begin() + static_cast<std::ptrdiff_t>(n_val), all.end());
    out.push_back(std::move(g));
  }
  return out;
}

TransformerTrainReport TransformerSurrogate::Impl::train(std::vector<TrainGroup>& groups, int steps, double lr, bool schedule, std::mt19937_64& rng) {
  const auto t0 = std::chrono::steady_clock::now();
  TransformerTrainReport rep;
  std::vector<double> weights;
  bool any_val = false;
  for (const auto& g : groups) {
    weights.push_back(static_cast<double>(g.train.size()));
    any_val = any_val || !g.val.empty();
  }
  std::discrete_distribution<std::size_t> pick(weights.begin(), weights.end());
  // torch::optim::AdamW and clip_grad_norm_ on the module path (the reference), else fused.
  const bool reference = module_path();
  torch::optim::AdamW optim(net->parameters(), torch::optim::AdamWOptions(lr).weight_decay(opt.weight_decay));
  FusedAdamW fused(net->parameters(), lr, opt.weight_decay);
  const int warm = schedule ? std::max(1, static_cast<int>(opt.warmup_fraction * steps)) : 0;
  const int check_every = std::max(10, steps / 40);
  double best = std::numeric_limits<double>::infinity();
  std::vector<Tensor> best_state;
  int since_best = 0;
  static const bool trace = std::getenv("GPUFORECAST_TRANSFORMER_TRACE") != nullptr;  // diagnostics
  net->train();
  for (int step = 0; step < steps; ++step) {
    double lr_now = lr;
    if (schedule) {
      lr_now = step < warm ? lr * (step + 1) / warm
                           : 0.5 * lr * (1.0 + std::cos(std::numbers::pi * (step - warm) / std::max(1, steps - warm)));
    }
    for (auto& pg : optim.param_groups()) static_cast<torch::optim::AdamWOptions&>(pg.options()).lr(lr_now);
    fused.set_lr(lr_now);
    auto& g = groups[pick(rng)];
    auto& rows = g.train;
    const auto bs = std::min(rows.size(), static_cast<std::size_t>(opt.batch_size));
    for (std::size_t i = 0; i < bs; ++i) {
      std::uniform_int_distribution<std::size_t> u(i, rows.size() - 1);
      std::swap(rows[i], rows[u(rng)]);
    }
    const Tensor idx = as_index(std::vector<std::int64_t>(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(bs)));
    const Losses l = compute_losses(*net, g, idx, opt.bin_weight > 0);
    const Tensor loss = opt.quantile_weight * l.quantile + opt.rank_weight * l.rank + opt.fail_weight * l.fail +
                        opt.bin_weight * l.bin;
    if (reference) {
      optim.zero_grad();
      loss.backward();
      torch::nn::utils::clip_grad_norm_(net->parameters(), 1.0);
      optim.step();
    } else {
      fused.zero_grad();
      loss.backward();
      fused.step(1.0);
    }
    rep.steps = step + 1;
    if (any_val && ((step + 1) % check_every == 0 || step + 1 == steps)) {
      const double v = validation_loss(groups);
      if (trace) std::fprintf(stderr, "step %d lr %.2e train %.4f val %.4f\n", step + 1, lr_now, loss.item<double>(), v);
      net->train();
      if (v < best) {
        best = v;
        rep.best_step = step + 1;
        since_best = 0;
        best_state.clear();
        for (const auto& p : net->parameters()) best_state.push_back(p.detach().clone());
      } else if (++since_best >= opt.patience) {
        rep.stopped_early = true;
        break;
      }
    }
  }
  if (!best_state.empty()) {
    torch::NoGradGuard ng;
    auto params = net->parameters();
    for (std::size_t i = 0; i < params.size(); ++i) params[i].copy_(best_state[i]);
  }
  net->eval();
  rep.best_validation_loss = any_val ? best : 0.0;
  if (!any_val) rep.best_step = rep.steps;
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

double TransformerSurrogate::Impl::validation_loss(std::vector<TrainGroup>& groups) {
  torch::NoGradGuard ng;
  net->eval();
  double total = 0, count = 0;
  for (auto& g : groups) {
    if (g.val.empty()) continue;
    const Losses l = compute_losses(*net, g, as_index(g.val), false);
    const double n = static_cast<double>(g.val.size());
    total += n * (opt.quantile_weight * l.quantile.item<double>() + opt.rank_weight * l.rank.item<double>());
    count += n;
  }
  return count > 0 ? total / count : 0.0;
}

void TransformerSurrogate::Impl::fit(std::span<const Observation> obs) {
  bool any_ok = std::any_of(obs.begin(), obs.end(), [](const Observation& o) { return o.measurement.ok(); });
  if (!any_ok) throw invalid_argument_error("TransformerSurrogate::fit: no observation with status ok");
  torch::set_num_threads(resolved_threads(opt.threads));
  torch::manual_seed(opt.seed);
  std::mt19937_64 rng(opt.seed);
  fit_normalisers(obs, true);
  net = Net(opt);
  auto groups = make_groups(obs, opt.validation_fraction, rng);
  std::size_t n_train = 0;
  for (const auto& g : groups) n_train += g.train.size();
  const auto per_epoch = static_cast<int>((n_train + static_cast<std::size_t>(opt.batch_size) - 1) /
                                          static_cast<std::size_t>(opt.batch_size));
  const int steps = std::clamp(opt.epochs * per_epoch, opt.min_steps, std::max(opt.min_steps, opt.max_steps));
  report = train(groups, steps, opt.lr, true, rng);
  buffer.clear();
}

void TransformerSurrogate::Impl::fine_tune(std::span<const Observation> obs, int steps) {
  if (!net) throw invalid_argument_error("TransformerSurrogate::fine_tune: the model is not trained (call fit)");
  if (obs.empty() || steps <= 0) return;
  fit_normalisers(obs, false);
  std::mt19937_64 rng(opt.seed + 0x9e3779b97f4a7c15ULL * (++updates));
  torch::manual_seed(opt.seed + updates);
  auto groups = make_groups(obs, 0.0, rng);
  report = train(groups, steps, opt.update_lr, false, rng);
}

void TransformerSurrogate::Impl::update(std::span<const Observation> obs) {
  for (const auto& o : obs) buffer.push_back(o);
  while (buffer.size() > static_cast<std::size_t>(std::max(1, opt.update_buffer))) buffer.pop_front();
  std::vector<Observation> all(buffer.begin(), buffer.end());
  if (!net) {
    fit(all);
    buffer.assign(all.begin(), all.end());
    return;
  }
  fine_tune(all, opt.update_steps);
}

}  // namespace gpuforecast
