#include "calibration/ordinal_conformal.hpp"

#include <fmt/core.h>

#include <array>
#include <cmath>

#include "stats/conformal_quantile.hpp"
#include "surrogate/metrics.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {

// score[b - 1] for every bin b: the mass of the growing run when b joins it.
std::array<double, speedup_bin_count> growth_scores(const BinProbabilities& p) {
  std::array<double, speedup_bin_count> score{};
  int low = predicted_bin(p), high = low;
  double mass = p[static_cast<std::size_t>(low - 1)];
  score[static_cast<std::size_t>(low - 1)] = mass;
  while (low > 1 || high < speedup_bin_count) {
    const bool left = high == speedup_bin_count ||
                      (low > 1 && p[static_cast<std::size_t>(low - 2)] >= p[static_cast<std::size_t>(high)]);
    const int b = left ? --low : ++high;
    mass += p[static_cast<std::size_t>(b - 1)];
    score[static_cast<std::size_t>(b - 1)] = mass;
  }
  return score;
}

}  // namespace

double ordinal_score(const BinProbabilities& p, int true_bin) {
  if (true_bin < 1 || true_bin > speedup_bin_count)
    throw invalid_argument_error(fmt::format("speedup bin must be 1..8, got {}", true_bin));
  return growth_scores(p)[static_cast<std::size_t>(true_bin - 1)];
}

BinRun ordinal_set(const BinProbabilities& p, double threshold) {
  const auto score = growth_scores(p);
  BinRun run{speedup_bin_count + 1, 0};
  for (int b = 1; b <= speedup_bin_count; ++b)
    if (score[static_cast<std::size_t>(b - 1)] <= threshold) {
      run.low = std::min(run.low, b);
      run.high = std::max(run.high, b);
    }
  if (run.high == 0) run.low = 1;
  return run;
}

OrdinalConformal OrdinalConformal::fit(std::span<const BinProbabilities> p, std::span<const int> true_bins,
                                       double alpha) {
  check_alpha(alpha);
  if (p.size() != true_bins.size())
    throw invalid_argument_error(
        fmt::format("ordinal conformal: {} bin distributions but {} true bins", p.size(), true_bins.size()));
  if (p.empty()) throw invalid_argument_error("ordinal conformal needs at least one calibration pair");
  std::vector<double> scores;
  scores.reserve(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) scores.push_back(ordinal_score(p[i], true_bins[i]));
  OrdinalConformal c;
  c.m_alpha = alpha;
  c.m_threshold = conformal_quantile(scores, alpha);
  return c;
}

}  // namespace gpuforecast
