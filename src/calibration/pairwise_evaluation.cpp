#include "calibration/pairwise_evaluation.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "calibration/metrics.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {

// Mean of `right` over the ceil(fraction * n) points of highest confidence (ties broken by index).
double accuracy_at(std::span<const double> confidence, std::span<const double> right, double fraction) {
  std::vector<std::size_t> idx(confidence.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return confidence[a] > confidence[b]; });
  const auto k = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(idx.size()))));
  double s = 0;
  for (std::size_t i = 0; i < k; ++i) s += right[idx[i]];
  return s / static_cast<double>(k);
}

std::vector<PairwiseOptions> every_rule(double alpha, double delta) {
  std::vector<PairwiseOptions> out;
  for (PairLoss l : {PairLoss::wrong_direction, PairLoss::wrong_bin})
    for (PairConfidence c : {PairConfidence::direction_probability, PairConfidence::top_bin_probability,
                             PairConfidence::margin, PairConfidence::entropy})
      out.push_back({alpha, delta, l, c});
  return out;
}

void check_population(const PairPopulation& q, std::size_t sample_size) {
  if (q.sample.size() != sample_size)
    throw invalid_argument_error(
        fmt::format("pair population: {} sample pairs named for {} bin distributions", q.sample.size(), sample_size));
  if (q.p.size() != q.pairs.size() || q.true_bins.size() != q.pairs.size())
    throw invalid_argument_error(fmt::format("pair population: {} pairs, {} bin distributions, {} true bins",
                                             q.pairs.size(), q.p.size(), q.true_bins.size()));
  for (std::size_t i = 0; i < q.true_bins.size(); ++i)
    if (q.true_bins[i] < 1 || q.true_bins[i] > speedup_bin_count)
      throw invalid_argument_error(fmt::format("population pair {}: speedup bin must be 1..8, got {}", i, q.true_bins[i]));
}

}  // namespace

std::vector<std::size_t> population_apart_from(const PairPopulation& q, std::span<const std::size_t> calibration_pairs) {
  std::size_t points = 0;
  for (const auto& x : q.sample) points = std::max({points, x.reference + 1, x.candidate + 1});
  for (const auto& x : q.pairs) points = std::max({points, x.reference + 1, x.candidate + 1});
  std::vector<char> in_calibration(points, 0), calibration_candidate(points, 0);
  for (std::size_t i : calibration_pairs) {
    in_calibration[q.sample[i].reference] = in_calibration[q.sample[i].candidate] = 1;
    calibration_candidate[q.sample[i].candidate] = 1;
  }
  std::vector<std::size_t> out;
  for (std::size_t j = 0; j < q.pairs.size(); ++j)
    if (!in_calibration[q.pairs[j].candidate] &&
        !(q.references_measured ? calibration_candidate : in_calibration)[q.pairs[j].reference])
      out.push_back(j);
  return out;
}

PairEvaluation evaluate_pairs(std::span<const BinProbabilities> p, std::span<const int> bins,
                              const PairEvaluationOptions& o, const PairPopulation* population) {
  if (p.size() != bins.size())
    throw invalid_argument_error(fmt::format("pair evaluation: {} bin distributions but {} true bins", p.size(), bins.size()));
  if (p.size() < 2) throw invalid_argument_error(fmt::format("pair evaluation needs at least 2 pairs, got {}", p.size()));
  if (!(o.calibration_fraction > 0 && o.calibration_fraction < 1))
    throw invalid_argument_error(fmt::format("calibration fraction must be in (0, 1), got {}", o.calibration_fraction));
  if (o.splits == 0) throw invalid_argument_error("pair evaluation needs at least one split");
  if (population) check_population(*population, p.size());
  const std::size_t n = p.size();
  const std::size_t n_cal = std::clamp<std::size_t>(
      static_cast<std::size_t>(std::round(o.calibration_fraction * static_cast<double>(n))), 1, n - 1);

  PairEvaluation e;
  e.pairs = n;
  e.population_pairs = population ? population->pairs.size() : 0;
  e.splits = o.splits;
  e.alpha = o.alpha;
  e.delta = o.delta;
  std::array<std::size_t, speedup_bin_count> bin_count{};
  std::size_t faster = 0;
  std::vector<double> top_conf, dir_conf, exact_right, dir_right;
  for (std::size_t i = 0; i < n; ++i) {
    const int pb = predicted_bin(p[i]);
    if (bins[i] < 1 || bins[i] > speedup_bin_count)
      throw invalid_argument_error(fmt::format("pair {}: speedup bin must be 1..8, got {}", i, bins[i]));
    ++bin_count[static_cast<std::size_t>(bins[i] - 1)];
    faster += bins[i] >= 4 ? 1 : 0;
    exact_right.push_back(pb == bins[i] ? 1 : 0);
    e.within_one += std::abs(pb - bins[i]) <= 1 ? 1 : 0;
    dir_right.push_back(1 - pair_loss(PairLoss::wrong_direction, p[i], bins[i]));
    top_conf.push_back(pair_confidence(PairConfidence::top_bin_probability, p[i]));
    dir_conf.push_back(pair_confidence(PairConfidence::direction_probability, p[i]));
  }
  const auto dn = static_cast<double>(n);
  e.exact = std::accumulate(exact_right.begin(), exact_right.end(), 0.0) / dn;
  e.within_one /= dn;
  e.direction_accuracy = std::accumulate(dir_right.begin(), dir_right.end(), 0.0) / dn;
  e.brier = brier_score(p, bins);
  e.crps = crps_ordinal(p, bins);
  e.ece = expected_calibration_error(p, bins);
  e.majority_exact = static_cast<double>(*std::max_element(bin_count.begin(), bin_count.end())) / dn;
  e.majority_direction = static_cast<double>(std::max(faster, n - faster)) / dn;
  e.exact_at_50 = accuracy_at(top_conf, exact_right, 0.5);
  e.exact_at_80 = accuracy_at(top_conf, exact_right, 0.8);
  e.direction_at_50 = accuracy_at(dir_conf, dir_right, 0.5);
  e.direction_at_80 = accuracy_at(dir_conf, dir_right, 0.8);

  const std::vector<PairwiseOptions> rules = o.rules.empty() ? every_rule(o.alpha, o.delta) : o.rules;
  for (const auto& r : rules) {
    PairRuleSummary s;
    s.loss = r.loss;
    s.confidence = r.confidence;
    std::vector<double> conf, loss;
    for (std::size_t i = 0; i < n; ++i) {
      conf.push_back(pair_confidence(r.confidence, p[i]));
      loss.push_back(pair_loss(r.loss, p[i], bins[i]));
    }
    s.aurc = aurc(conf, loss);
    s.risk_all = std::accumulate(loss.begin(), loss.end(), 0.0) / dn;
    s.answered_min = 1;
    e.rules.push_back(s);
  }

  std::vector<std::size_t> idx(n);
  std::vector<BinProbabilities> cal_p;
  std::vector<int> cal_bins;
  std::vector<double> answered(rules.size(), 0), lost(rules.size(), 0);
  std::vector<double> population_answered(rules.size(), 0), population_lost(rules.size(), 0);
  for (std::size_t split = 0; split < o.splits; ++split) {
    std::iota(idx.begin(), idx.end(), 0);
    std::mt19937_64 rng(o.seed + split);
    std::shuffle(idx.begin(), idx.end(), rng);
    cal_p.clear();
    cal_bins.clear();
    for (std::size_t i = 0; i < n_cal; ++i) {
      cal_p.push_back(p[idx[i]]);
      cal_bins.push_back(bins[idx[i]]);
    }
    const std::size_t n_test = n - n_cal;
    const std::vector<std::size_t> judged =
        population ? population_apart_from(*population, std::span<const std::size_t>(idx).first(n_cal))
                   : std::vector<std::size_t>{};
    for (std::size_t r = 0; r < rules.size(); ++r) {
      PairwiseOptions ro = rules[r];
      ro.alpha = o.alpha;
      ro.delta = o.delta;
      ro.start_fraction = o.start_fraction;
      const PairwiseSelector sel = PairwiseSelector::fit(cal_p, cal_bins, ro);
      std::size_t acc = 0;
      double losses = 0, covered = 0, size = 0;
      for (std::size_t i = n_cal; i < n; ++i) {
        const PairDecision d = sel.decide(p[idx[i]]);
        if (r == 0) {
          covered += d.set.contains(bins[idx[i]]) ? 1 : 0;
          size += d.set.size();
        }
        if (d.defer) continue;
        ++acc;
        losses += pair_loss(ro.loss, p[idx[i]], bins[idx[i]]);
      }
      if (r == 0) {
        e.set_coverage += covered / static_cast<double>(n_test) / static_cast<double>(o.splits);
        e.mean_set_size += size / static_cast<double>(n_test) / static_cast<double>(o.splits);
      }
      auto& s = e.rules[r];
      const double frac = static_cast<double>(acc) / static_cast<double>(n_test);
      s.answered += frac / static_cast<double>(o.splits);
      s.answered_min = std::min(s.answered_min, frac);
      s.answered_max = std::max(s.answered_max, frac);
      if (acc > 0 && losses / static_cast<double>(acc) > o.alpha) ++s.violations;
      answered[r] += static_cast<double>(acc);
      lost[r] += losses;
      if (population) {
        std::size_t pop_acc = 0;
        double pop_losses = 0;
        for (std::size_t j : judged) {
          if (sel.decide(population->p[j]).defer) continue;
          ++pop_acc;
          pop_losses += pair_loss(ro.loss, population->p[j], population->true_bins[j]);
        }
        if (pop_acc > 0 && pop_losses / static_cast<double>(pop_acc) > o.alpha) ++s.population_violations;
        population_answered[r] += static_cast<double>(pop_acc);
        population_lost[r] += pop_losses;
      }
    }
  }
  for (std::size_t r = 0; r < rules.size(); ++r) {
    e.rules[r].risk_answered = answered[r] > 0 ? lost[r] / answered[r] : 0;
    e.rules[r].population_risk = population_answered[r] > 0 ? population_lost[r] / population_answered[r] : 0;
    e.rules[r].population_answered = population_answered[r];
  }
  return e;
}

}  // namespace gpuforecast
