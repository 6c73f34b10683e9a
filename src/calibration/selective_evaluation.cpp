#include "calibration/selective_evaluation.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <random>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

SelectiveEvaluation evaluate_selective(const SelectiveCalibrator& cal, std::span<const Candidate> c,
                                       std::span<const Forecast> f, std::span<const double> t, std::uint64_t seed) {
  if (c.size() != f.size() || c.size() != t.size())
    throw invalid_argument_error(fmt::format("evaluation needs as many candidates, forecasts and runtimes; got {}, {}, {}",
                                             c.size(), f.size(), t.size()));
  if (c.empty()) throw invalid_argument_error("evaluation needs at least one test point");
  const auto& o = cal.options();
  SelectiveEvaluation e;
  e.test_size = c.size();
  std::mt19937_64 rng(seed);
  std::map<std::string, std::vector<std::size_t>> by_space;
  for (std::size_t i = 0; i < c.size(); ++i) by_space[group_key(GroupBy::kernel_and_device, c[i])].push_back(i);

  std::vector<Interval> iv;
  std::vector<double> conf, loss;
  std::vector<BinProbabilities> probs;
  std::vector<int> bins;
  double loss_accepted = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const auto& peers = by_space[group_key(GroupBy::kernel_and_device, c[i])];
    const std::size_t j = peers[std::uniform_int_distribution<std::size_t>(0, peers.size() - 1)(rng)];
    const double ref = t[j];
    const bool with_ref = o.loss == DeferralLoss::wrong_bin || o.confidence == ConfidenceScore::top_bin_probability;
    const Decision d = cal.decide(c[i], f[i], with_ref ? std::optional<double>(ref) : std::nullopt);
    iv.push_back({d.interval_low_ms, d.interval_high_ms});
    conf.push_back(d.confidence);
    const Forecast& fb = d.forecast;
    const double l = deferral_loss(o, fb, t[i], ref);
    loss.push_back(l);
    if (!d.defer) {
      ++e.accepted;
      loss_accepted += l;
    }
    const Decision db = with_ref ? d : cal.decide(c[i], f[i], ref);
    probs.push_back(*db.forecast.bin_probabilities);
    bins.push_back(speedup_bin(ref, t[i]));
  }
  e.coverage = empirical_coverage(iv, t);
  e.mean_width_ms = mean_interval_width(iv);
  e.mean_log_width = mean_log_interval_width(iv);
  e.accepted_fraction = static_cast<double>(e.accepted) / static_cast<double>(c.size());
  e.risk_accepted = e.accepted ? loss_accepted / static_cast<double>(e.accepted) : 0.0;
  double all = 0;
  for (double l : loss) all += l;
  e.risk_all = all / static_cast<double>(loss.size());
  e.risk_coverage = risk_coverage_curve(conf, loss);
  e.aurc = aurc(conf, loss);
  e.reliability = reliability_bins(probs, bins, 10);
  e.ece = expected_calibration_error(probs, bins, 10);
  e.brier = brier_score(probs, bins);
  e.crps = crps_ordinal(probs, bins);
  e.nll = negative_log_likelihood(probs, bins);
  double right = 0;
  for (std::size_t i = 0; i < probs.size(); ++i)
    right += (std::max_element(probs[i].begin(), probs[i].end()) - probs[i].begin() + 1) == bins[i] ? 1 : 0;
  e.bin_accuracy = right / static_cast<double>(probs.size());
  return e;
}

}  // namespace gpuforecast
