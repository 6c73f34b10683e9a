// compare() and calibrate_pairs(): the pairwise selective layer over a loaded Model.
#include "gpuforecast/compare.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "compose/model_impl.hpp"
#include "calibration/candidate_pairs.hpp"
#include "calibration/pairwise_selective.hpp"
#include "surrogate/metrics.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {

using SpaceKey = std::tuple<std::string, std::string, std::vector<std::int64_t>>;

SpaceKey space_of(const Candidate& c) { return {c.kernel, c.device ? c.device->name : "", c.problem_size}; }

// A measured runtime as a forecast: certain, so a pair's bin distribution is the other point's.
Forecast measured(double ms) {
  Forecast f;
  f.median_ms = ms;
  return f;
}

// The pairs of one space's points (`configs`), `count` at most. Child pairs: every point a child
// once, of a neighbour drawn among all of its neighbours.
std::vector<CandidatePair> pairs_of_space(const PairCalibrationOptions& o, std::span<const Config> configs,
                                          std::size_t count, std::uint64_t seed) {
  if (o.kind == PairKind::child)
    return one_pair_per_child(neighbour_pairs(configs, std::numeric_limits<std::size_t>::max(), seed), count);
  return sample_pairs(o.kind, configs, count, seed, o.disjoint);
}

}  // namespace

struct PairCalibration::Impl {
  PairwiseSelector selector;
  PairKind kind = PairKind::neighbour;
};

const PairCalibration::Impl& PairCalibration::impl() const {
  if (!m_impl) throw invalid_argument_error("empty gpuforecast::PairCalibration: fit one with calibrate_pairs()");
  return *m_impl;
}
const PairwiseOptions& PairCalibration::options() const { return impl().selector.options(); }
PairKind PairCalibration::kind() const { return impl().kind; }
double PairCalibration::threshold() const { return impl().selector.deferral().threshold; }
std::size_t PairCalibration::calibration_pairs() const { return impl().selector.deferral().calibration_size; }
double PairCalibration::answered_fraction() const { return impl().selector.deferral().coverage; }
double PairCalibration::risk_upper_bound() const { return impl().selector.deferral().risk_upper_bound; }

PairCalibration calibrate_pairs(const Model& model, std::span<const Observation> calibration,
                                 const PairCalibrationOptions& options) {
  const auto& m = model.impl();
  std::vector<Candidate> points;
  std::vector<double> runtimes;
  std::vector<std::size_t> rows;  // row in `calibration` of each point
  for (std::size_t i = 0; i < calibration.size(); ++i)
    if (calibration[i].measurement.ok()) {
      points.push_back(calibration[i].candidate);
      runtimes.push_back(calibration[i].measurement.median_ms);
      rows.push_back(i);
    }
  try {
    (void)check_candidates(m, points);
  } catch (const invalid_configuration_error& e) {
    const std::size_t row = rows[e.get_row()];
    throw invalid_configuration_error(row, e.get_parameter(), e.get_expected(),
                                      fmt::format("calibration observation {}: {}", row, e.what()));
  }
  std::map<SpaceKey, std::vector<std::size_t>> spaces;
  for (std::size_t i = 0; i < points.size(); ++i) spaces[space_of(points[i])].push_back(i);

  const std::vector<Forecast> forecasts = predict_all(m, points);
  std::vector<CandidatePair> pairs;
  std::uint64_t space_index = 0;
  for (const auto& [key, members] : spaces) {
    std::vector<Config> configs;
    for (std::size_t i : members) configs.push_back(points[i].config);
    // Each space's share of the pairs follows its share of the points.
    const std::size_t count = std::max<std::size_t>(1, options.pairs * members.size() / points.size());
    for (const auto& p : pairs_of_space(options, configs, count, options.seed + 0x9e3779b97f4a7c15ULL * space_index++))
      pairs.push_back({members[p.reference], members[p.candidate]});
  }
  if (pairs.size() < 2)
    throw invalid_argument_error(fmt::format("calibrate_pairs: {} {} pair(s) from {} successful measurements; need at least 2",
                                             pairs.size(), to_string(options.kind), points.size()));
  std::vector<BinProbabilities> p;
  if (options.kind == PairKind::child) {
    p.reserve(pairs.size());
    for (const auto& pr : pairs) p.push_back(bin_probabilities(measured(runtimes[pr.reference]), forecasts[pr.candidate]));
  } else {
    p = pair_bin_probabilities(forecasts, pairs);
  }
  const auto bins = pair_true_bins(runtimes, pairs);
  return PairCalibration(std::make_shared<const PairCalibration::Impl>(
      PairCalibration::Impl{PairwiseSelector::fit(p, bins, options.selective), options.kind}));
}

namespace {

std::vector<Comparison> compare_with(const Model& model, const PairCalibration& pairs, const Candidate& reference,
                                     std::optional<double> reference_ms, std::span<const Candidate> candidates,
                                     const TuningSpace* space) {
  const auto& m = model.impl();
  const PairwiseSelector& selector = pairs.impl().selector;
  // A measured parent's pairs are tighter than two forecasts': a rule fitted on one kind misjudges the other.
  if (reference_ms.has_value() != (pairs.kind() == PairKind::child))
    throw invalid_argument_error(fmt::format(
        "compare: the rule was calibrated on {} pairs, which answer a reference {}; calibrate_pairs with kind {} for "
        "a reference {}",
        to_string(pairs.kind()), pairs.kind() == PairKind::child ? "at its measured runtime" : "that is forecast",
        reference_ms ? "child" : "neighbour (or random)",
        reference_ms ? "at its measured runtime" : "that is forecast"));
  std::string reference_note;
  try {
    reference_note = check_candidates(m, std::span<const Candidate>(&reference, 1), space).front();
  } catch (const invalid_configuration_error& e) {
    throw invalid_configuration_error(e.get_row(), e.get_parameter(), e.get_expected(),
                                      fmt::format("the reference, {}", e.what()));
  }
  std::vector<std::string> notes = check_candidates(m, candidates, space);

  std::vector<Candidate> points;
  points.reserve(candidates.size() + 1);
  points.push_back(reference);
  points.insert(points.end(), candidates.begin(), candidates.end());
  std::vector<Forecast> forecasts = predict_all(m, points);
  if (reference_ms) forecasts.front() = measured(*reference_ms);
  std::vector<CandidatePair> against_reference;
  for (std::size_t i = 0; i < candidates.size(); ++i) against_reference.push_back({0, i + 1});
  const auto p = pair_bin_probabilities(forecasts, against_reference);

  std::vector<Comparison> out(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    out[i].decision = selector.decide(p[i]);
    std::string& note = out[i].extrapolation;
    note = std::move(notes[i]);
    if (!reference_note.empty()) note += (note.empty() ? "reference: " : "; reference: ") + reference_note;
  }
  return out;
}

}  // namespace

std::vector<Comparison> compare(const Model& model, const PairCalibration& pairs, const Candidate& reference,
                                std::span<const Candidate> candidates, const TuningSpace* space) {
  return compare_with(model, pairs, reference, std::nullopt, candidates, space);
}

std::vector<Comparison> compare(const Model& model, const PairCalibration& pairs, const Candidate& reference,
                                double reference_ms, std::span<const Candidate> candidates, const TuningSpace* space) {
  if (!(reference_ms > 0) || !std::isfinite(reference_ms))
    throw invalid_argument_error(
        fmt::format("compare: the reference's measured runtime must be finite and positive, got {} ms", reference_ms));
  return compare_with(model, pairs, reference, reference_ms, candidates, space);
}

}  // namespace gpuforecast
