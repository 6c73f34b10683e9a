#include "stats/learn_then_test.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "stats/conformal_quantile.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

double binomial_cdf(std::size_t k, std::size_t n, double p) {
  if (!(p >= 0 && p <= 1)) throw invalid_argument_error(fmt::format("binomial probability {} outside [0, 1]", p));
  if (k >= n) return 1.0;
  if (p == 0) return 1.0;
  if (p == 1) return 0.0;
  const double lp = std::log(p), lq = std::log1p(-p);
  const double nn = static_cast<double>(n);
  const double lg_n1 = std::lgamma(nn + 1);
  double max_term = -std::numeric_limits<double>::infinity();
  std::vector<double> terms(k + 1);
  for (std::size_t i = 0; i <= k; ++i) {
    const double ii = static_cast<double>(i);
    terms[i] = lg_n1 - std::lgamma(ii + 1) - std::lgamma(nn - ii + 1) + ii * lp + (nn - ii) * lq;
    max_term = std::max(max_term, terms[i]);
  }
  double sum = 0;
  for (double t : terms) sum += std::exp(t - max_term);
  return std::min(1.0, std::exp(max_term + std::log(sum)));
}

double binomial_upper_bound(std::size_t k, std::size_t n, double delta) {
  check_alpha(delta, "delta");
  if (n == 0 || k >= n) return 1.0;
  double lo = static_cast<double>(k) / static_cast<double>(n), hi = 1.0;
  for (int it = 0; it < 100; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (binomial_cdf(k, n, mid) <= delta) hi = mid;
    else lo = mid;
  }
  return hi;
}

LttResult learn_then_test(std::span<const double> confidence, std::span<const double> loss, const LttOptions& o) {
  check_alpha(o.alpha, "Learn-then-Test alpha");
  check_alpha(o.delta, "Learn-then-Test delta");
  if (confidence.size() != loss.size())
    throw invalid_argument_error(fmt::format("Learn-then-Test needs one loss per confidence, got {} and {}",
                                             confidence.size(), loss.size()));
  if (confidence.empty()) throw invalid_argument_error("Learn-then-Test needs a non-empty calibration set");
  const std::size_t n = confidence.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(confidence[i]))
      throw invalid_argument_error(fmt::format("confidence score {} of {} is NaN", i, n));
    if (!(loss[i] == 0.0 || loss[i] == 1.0))
      throw invalid_argument_error(
          fmt::format("Learn-then-Test uses 0/1 losses (binomial tail), loss {} of {} is {}", i, n, loss[i]));
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return confidence[a] > confidence[b]; });

  // Candidate thresholds: each distinct confidence (ties are accepted together), with the
  // number accepted and the losses among them.
  struct Cand {
    double threshold;
    std::size_t accepted, losses;
  };
  std::vector<Cand> cands;
  std::size_t cum_loss = 0;
  for (std::size_t j = 0; j < n; ++j) {
    cum_loss += loss[order[j]] == 1.0 ? 1 : 0;
    if (j + 1 == n || confidence[order[j + 1]] != confidence[order[j]])
      cands.push_back({confidence[order[j]], j + 1, cum_loss});
  }
  // Below n_min accepted points even zero losses cannot reject (1 - alpha)^n > delta: testing
  // those first would stop the sequence before it starts, so the sequence begins at n_min.
  if (!(o.start_fraction >= 0 && o.start_fraction < 1))
    throw invalid_argument_error(fmt::format("Learn-then-Test start fraction must be in [0, 1), got {}", o.start_fraction));
  const auto n_min = std::max(static_cast<std::size_t>(std::ceil(std::log(o.delta) / std::log1p(-o.alpha) - 1e-9)),
                              static_cast<std::size_t>(std::ceil(o.start_fraction * static_cast<double>(n))));
  std::vector<Cand> grid;
  const std::size_t steps = std::max<std::size_t>(1, o.max_thresholds);
  if (n >= n_min) {
    std::size_t next = 0;
    for (std::size_t s = 0; s < steps; ++s) {
      const double target = static_cast<double>(n_min) +
                            (steps == 1 ? 0.0 : static_cast<double>(n - n_min) * static_cast<double>(s) / static_cast<double>(steps - 1));
      while (next < cands.size() && static_cast<double>(cands[next].accepted) < target - 1e-9) ++next;
      if (next >= cands.size()) break;
      if (grid.empty() || grid.back().accepted != cands[next].accepted) grid.push_back(cands[next]);
    }
  }

  LttResult r;
  r.alpha = o.alpha;
  r.delta = o.delta;
  r.calibration_size = n;
  r.threshold = std::numeric_limits<double>::infinity();
  for (const auto& c : grid) {
    LttStep st{c.threshold, c.accepted, c.losses, binomial_cdf(c.losses, c.accepted, o.alpha), false};
    st.rejected = st.p_value <= o.delta;
    r.steps.push_back(st);
    if (!st.rejected) break;
    r.any_valid = true;
    r.threshold = c.threshold;
    r.accepted = c.accepted;
    r.empirical_risk = static_cast<double>(c.losses) / static_cast<double>(c.accepted);
    r.risk_upper_bound = binomial_upper_bound(c.losses, c.accepted, o.delta);
  }
  r.coverage = static_cast<double>(r.accepted) / static_cast<double>(n);
  return r;
}

}  // namespace gpuforecast
