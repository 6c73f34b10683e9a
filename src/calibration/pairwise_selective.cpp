#include "calibration/pairwise_selective.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "surrogate/metrics.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

std::string_view to_string(PairLoss l) noexcept { return l == PairLoss::wrong_bin ? "wrong_bin" : "wrong_direction"; }

std::string_view to_string(PairConfidence c) noexcept {
  switch (c) {
    case PairConfidence::top_bin_probability: return "top_bin_probability";
    case PairConfidence::margin: return "margin";
    case PairConfidence::entropy: return "entropy";
    case PairConfidence::direction_probability: return "direction_probability";
  }
  return "?";
}

PairLoss parse_pair_loss(std::string_view s) {
  if (s == "wrong_bin") return PairLoss::wrong_bin;
  if (s == "wrong_direction") return PairLoss::wrong_direction;
  throw invalid_argument_error(fmt::format("unknown pair loss \"{}\" (expected wrong_bin or wrong_direction)", s));
}

PairConfidence parse_pair_confidence(std::string_view s) {
  if (s == "top_bin_probability") return PairConfidence::top_bin_probability;
  if (s == "margin") return PairConfidence::margin;
  if (s == "entropy") return PairConfidence::entropy;
  if (s == "direction_probability") return PairConfidence::direction_probability;
  throw invalid_argument_error(fmt::format(
      "unknown pair confidence \"{}\" (expected top_bin_probability, margin, entropy or direction_probability)", s));
}

double faster_probability(const BinProbabilities& p) {
  double s = 0;
  for (std::size_t b = 3; b < p.size(); ++b) s += p[b];
  return s;
}

bool called_faster(const BinProbabilities& p) { return faster_probability(p) >= 0.5; }

namespace {
void check_bin(int bin) {
  if (bin < 1 || bin > speedup_bin_count)
    throw invalid_argument_error(fmt::format("speedup bin must be 1..8, got {}", bin));
}
}  // namespace

double pair_loss(PairLoss loss, const BinProbabilities& p, int true_bin) {
  check_bin(true_bin);
  if (loss == PairLoss::wrong_bin) return predicted_bin(p) == true_bin ? 0.0 : 1.0;
  return called_faster(p) == (true_bin >= 4) ? 0.0 : 1.0;
}

double pair_confidence(PairConfidence c, const BinProbabilities& p) {
  switch (c) {
    case PairConfidence::top_bin_probability: return *std::max_element(p.begin(), p.end());
    case PairConfidence::margin: {
      BinProbabilities s = p;
      std::partial_sort(s.begin(), s.begin() + 2, s.end(), std::greater<>());
      return s[0] - s[1];
    }
    case PairConfidence::entropy: {
      double h = 0;
      for (double v : p)
        if (v > 0) h -= v * std::log(v);
      return -h;
    }
    case PairConfidence::direction_probability: {
      const double f = faster_probability(p);
      return std::max(f, 1 - f);
    }
  }
  return 0;
}

std::vector<BinProbabilities> pair_bin_probabilities(std::span<const Forecast> f, std::span<const CandidatePair> pairs) {
  std::vector<BinProbabilities> out;
  out.reserve(pairs.size());
  for (const auto& pr : pairs) {
    if (pr.reference >= f.size() || pr.candidate >= f.size())
      throw invalid_argument_error(fmt::format("pair ({}, {}) outside the {} forecasts", pr.reference, pr.candidate,
                                               f.size()));
    out.push_back(bin_probabilities(f[pr.reference], f[pr.candidate]));
  }
  return out;
}

std::vector<int> pair_true_bins(std::span<const double> t, std::span<const CandidatePair> pairs) {
  std::vector<int> out;
  out.reserve(pairs.size());
  for (const auto& pr : pairs) {
    if (pr.reference >= t.size() || pr.candidate >= t.size())
      throw invalid_argument_error(fmt::format("pair ({}, {}) outside the {} runtimes", pr.reference, pr.candidate,
                                               t.size()));
    for (std::size_t i : {pr.reference, pr.candidate})
      if (!(t[i] > 0) || !std::isfinite(t[i]))
        throw invalid_argument_error(fmt::format("runtime of point {} must be positive and finite, got {} ms", i, t[i]));
    out.push_back(speedup_bin(t[pr.reference], t[pr.candidate]));
  }
  return out;
}

PairwiseSelector PairwiseSelector::fit(std::span<const BinProbabilities> p, std::span<const int> true_bins,
                                       const PairwiseOptions& o) {
  PairwiseSelector s;
  s.m_options = o;
  s.m_sets = OrdinalConformal::fit(p, true_bins, o.alpha);
  std::vector<double> confidence, loss;
  confidence.reserve(p.size());
  loss.reserve(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    confidence.push_back(pair_confidence(o.confidence, p[i]));
    loss.push_back(pair_loss(o.loss, p[i], true_bins[i]));
  }
  LttOptions lo;
  lo.alpha = o.alpha;
  lo.delta = o.delta;
  lo.start_fraction = o.start_fraction;
  s.m_deferral = learn_then_test(confidence, loss, lo);
  return s;
}

PairDecision PairwiseSelector::decide(const BinProbabilities& p) const {
  PairDecision d;
  d.probabilities = p;
  d.predicted_bin = predicted_bin(p);
  d.faster = called_faster(p);
  d.set = m_sets.predict(p);
  d.confidence = pair_confidence(m_options.confidence, p);
  d.defer = !(m_deferral.any_valid && d.confidence >= m_deferral.threshold);
  return d;
}

}  // namespace gpuforecast
