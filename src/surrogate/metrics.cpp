#include "surrogate/metrics.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {
void check_pair(const char* what, std::size_t a, std::size_t b) {
  if (a != b) throw invalid_argument_error(fmt::format("{}: sizes differ ({} vs {})", what, a, b));
  if (a == 0) throw invalid_argument_error(fmt::format("{}: empty input", what));
}

std::vector<double> average_ranks(std::span<const double> v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t i, std::size_t j) { return v[i] < v[j]; });
  std::vector<double> rank(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double r = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) rank[idx[k]] = r;
    i = j + 1;
  }
  return rank;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n;
  const double mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  if (saa <= 0 || sbb <= 0) return 0.0;
  return sab / std::sqrt(saa * sbb);
}

// Number of pairs tied within runs of equal values in sorted order.
template <class Eq>
std::uint64_t tied_pairs(std::size_t n, Eq eq) {
  std::uint64_t t = 0, run = 1;
  for (std::size_t i = 1; i < n; ++i) {
    if (eq(i - 1, i)) {
      ++run;
    } else {
      t += run * (run - 1) / 2;
      run = 1;
    }
  }
  return t + run * (run - 1) / 2;
}

std::vector<std::size_t> best_indices(std::span<const double> v, std::size_t k) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  k = std::min(k, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
                    [&](std::size_t i, std::size_t j) { return v[i] < v[j] || (v[i] == v[j] && i < j); });
  idx.resize(k);
  return idx;
}

std::size_t count_of(double fraction, std::size_t n) {
  return std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(n) - 1e-9)));
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
}  // namespace

double spearman(std::span<const double> a, std::span<const double> b) {
  check_pair("spearman", a.size(), b.size());
  return pearson(average_ranks(a), average_ranks(b));
}

double kendall_tau_b(std::span<const double> a, std::span<const double> b) {
  check_pair("kendall_tau_b", a.size(), b.size());
  const std::size_t n = a.size();
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t i, std::size_t j) { return a[i] < a[j] || (a[i] == a[j] && b[i] < b[j]); });
  const std::uint64_t n0 = static_cast<std::uint64_t>(n) * (n - 1) / 2;
  const std::uint64_t n1 = tied_pairs(n, [&](std::size_t i, std::size_t j) { return a[idx[i]] == a[idx[j]]; });
  const std::uint64_t n3 = tied_pairs(n, [&](std::size_t i, std::size_t j) {
    return a[idx[i]] == a[idx[j]] && b[idx[i]] == b[idx[j]];
  });
  // Merge sort on b counting swaps = discordant pairs (ties in a are ordered by b, so they add none).
  std::vector<double> v(n), tmp(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = b[idx[i]];
  std::uint64_t swaps = 0;
  for (std::size_t width = 1; width < n; width *= 2) {
    for (std::size_t lo = 0; lo < n; lo += 2 * width) {
      const std::size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      std::size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        if (v[j] < v[i]) {
          swaps += mid - i;
          tmp[k++] = v[j++];
        } else {
          tmp[k++] = v[i++];
        }
      }
      while (i < mid) tmp[k++] = v[i++];
      while (j < hi) tmp[k++] = v[j++];
    }
    std::swap(v, tmp);
  }
  const std::uint64_t n2 = tied_pairs(n, [&](std::size_t i, std::size_t j) { return v[i] == v[j]; });
  const double concordant_minus_discordant =
      static_cast<double>(n0) - static_cast<double>(n1) - static_cast<double>(n2) + static_cast<double>(n3) -
      2.0 * static_cast<double>(swaps);
  const double denom = std::sqrt(static_cast<double>(n0 - n1) * static_cast<double>(n0 - n2));
  return denom > 0 ? concordant_minus_discordant / denom : 0.0;
}

double mape(std::span<const double> predicted, std::span<const double> truth) {
  check_pair("mape", predicted.size(), truth.size());
  double s = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    if (!(truth[i] > 0)) throw invalid_argument_error(fmt::format("mape: true time {} at index {} is not positive", truth[i], i));
    s += std::abs(predicted[i] - truth[i]) / truth[i];
  }
  return 100.0 * s / static_cast<double>(truth.size());
}

double top_recall(std::span<const double> predicted, std::span<const double> truth, double true_fraction,
                  double predicted_fraction) {
  check_pair("top_recall", predicted.size(), truth.size());
  const auto best_true = best_indices(truth, count_of(true_fraction, truth.size()));
  auto best_pred = best_indices(predicted, count_of(predicted_fraction, predicted.size()));
  std::sort(best_pred.begin(), best_pred.end());
  std::size_t hit = 0;
  for (auto i : best_true) hit += std::binary_search(best_pred.begin(), best_pred.end(), i) ? 1 : 0;
  return static_cast<double>(hit) / static_cast<double>(best_true.size());
}

double utility(std::span<const double> predicted, std::span<const double> truth, double fraction) {
  check_pair("utility", predicted.size(), truth.size());
  const double best = *std::min_element(truth.begin(), truth.end());
  double found = std::numeric_limits<double>::infinity();
  for (auto i : best_indices(predicted, count_of(fraction, predicted.size()))) found = std::min(found, truth[i]);
  return found / best;
}

BinProbabilities bin_probabilities(const Forecast& reference, const Forecast& candidate) {
  auto log_sd = [](const Forecast& f) {
    if (f.lower_ms > 0 && f.upper_ms > f.lower_ms) return std::log(f.upper_ms / f.lower_ms) / (2.0 * 1.6448536269514722);
    return std::max(f.spread, 1e-3);
  };
  // z = 2*log2(t_ref/t_cand) ~ N(mu, sd); bin = clamp(floor(z) + 4, 1, 8).
  const double mu = 2.0 * std::log2(reference.median_ms / candidate.median_ms);
  const double s = 2.0 / std::log(2.0) * std::hypot(log_sd(reference), log_sd(candidate));
  BinProbabilities p{};
  double prev = 0.0;
  for (int k = 1; k <= speedup_bin_count; ++k) {
    // bin k holds z in [k-4, k-3), except the end bins which are open.
    const double cdf = k == speedup_bin_count ? 1.0 : normal_cdf((static_cast<double>(k) - 3.0 - mu) / s);
    p[static_cast<std::size_t>(k - 1)] = std::max(0.0, cdf - prev);
    prev = cdf;
  }
  return p;
}

double brier(const BinProbabilities& p, int bin) {
  double s = 0;
  for (int k = 1; k <= speedup_bin_count; ++k) {
    const double d = p[static_cast<std::size_t>(k - 1)] - (k == bin ? 1.0 : 0.0);
    s += d * d;
  }
  return s;
}

double crps_ordinal(const BinProbabilities& p, int bin) {
  double cdf = 0, s = 0;
  for (int k = 1; k < speedup_bin_count; ++k) {
    cdf += p[static_cast<std::size_t>(k - 1)];
    const double d = cdf - (bin <= k ? 1.0 : 0.0);
    s += d * d;
  }
  return s / (speedup_bin_count - 1);
}

int predicted_bin(const BinProbabilities& p) {
  return static_cast<int>(std::max_element(p.begin(), p.end()) - p.begin()) + 1;
}

BinScores bin_scores(std::span<const Forecast> forecasts, std::span<const double> truth, std::size_t pairs,
                     std::uint64_t seed, std::span<const std::uint32_t> group) {
  check_pair("bin_scores", forecasts.size(), truth.size());
  if (!group.empty() && group.size() != truth.size())
    throw invalid_argument_error("bin_scores: one group id per forecast is needed");
  BinScores s;
  if (truth.size() < 2 || pairs == 0) return s;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, truth.size() - 1);
  std::size_t attempts = 0;
  while (s.pairs < pairs && attempts < pairs * 20) {
    ++attempts;
    const std::size_t r = pick(rng), c = pick(rng);
    if (r == c || (!group.empty() && group[r] != group[c])) continue;
    const int bin = speedup_bin(truth[r], truth[c]);
    const auto p = bin_probabilities(forecasts[r], forecasts[c]);
    const int guess = predicted_bin(p);
    s.exact += guess == bin ? 1 : 0;
    s.within_one += std::abs(guess - bin) <= 1 ? 1 : 0;
    s.brier += brier(p, bin);
    s.crps += crps_ordinal(p, bin);
    ++s.pairs;
  }
  if (s.pairs) {
    const double n = static_cast<double>(s.pairs);
    s.exact /= n;
    s.within_one /= n;
    s.brier /= n;
    s.crps /= n;
  }
  return s;
}

ForecastScores score_forecasts(std::span<const Forecast> forecasts, std::span<const double> truth, std::uint64_t seed,
                               std::size_t pairs) {
  check_pair("score_forecasts", forecasts.size(), truth.size());
  std::vector<double> pred(forecasts.size());
  for (std::size_t i = 0; i < pred.size(); ++i) pred[i] = forecasts[i].median_ms;
  ForecastScores s;
  s.count = truth.size();
  s.spearman = spearman(pred, truth);
  s.kendall = kendall_tau_b(pred, truth);
  s.mape = mape(pred, truth);
  s.top1_recall = top_recall(pred, truth, 0.01, 0.05);
  s.utility = utility(pred, truth, 0.10);
  s.bins = bin_scores(forecasts, truth, pairs, seed);
  return s;
}

}  // namespace gpuforecast
