#pragma once
// Learn-then-Test (Angelopoulos, Bates, Candes, Jordan, Lei 2021) for selective forecasting:
// accept a forecast when its confidence is >= a threshold chosen so that, with probability
// >= 1 - delta over the calibration set, the risk among accepted forecasts is <= alpha.
//
// Each threshold lambda is a hypothesis H(lambda): risk(lambda) > alpha. Given the n(lambda)
// calibration points it accepts, its losses are n(lambda) draws from the accepted population,
// so p(lambda) = P(Binomial(n(lambda), alpha) <= k(lambda)) is a valid p-value (k = losses).
// Fixed-sequence testing walks the thresholds from most to least confident and rejects while
// p <= delta: the family-wise error is <= delta with no multiplicity correction, and every
// rejected threshold is valid. The last one rejected accepts the most.
#include <cstddef>
#include <span>
#include <vector>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// P(Binomial(n, p) <= k), exact (log-space sums; fine for n up to millions).
[[nodiscard]] double binomial_cdf(std::size_t k, std::size_t n, double p);
// The smallest r with P(Binomial(n, r) <= k) <= delta: a one-sided 1 - delta upper confidence
// bound on a risk observed as k losses in n (Clopper-Pearson). 1 when n == 0.
[[nodiscard]] double binomial_upper_bound(std::size_t k, std::size_t n, double delta);

struct LttOptions {
  double alpha = 0.1;  // risk level among accepted forecasts
  double delta = 0.1;  // allowed probability that the guarantee fails
  // Thresholds tested: every distinct confidence value, thinned to at most this many (evenly in
  // accepted count) so a long sequence does not stop on a random fluctuation of a tiny step.
  std::size_t max_thresholds = 100;
  // The sequence starts at the threshold accepting at least this fraction of the calibration
  // points (never below the fewest that can be certified at all). A start among a few dozen
  // most confident points stops the whole sequence on one or two unlucky losses; a later start
  // gives up answering fewer than that fraction in exchange. The order stays fixed by the
  // confidences alone, so the guarantee is unchanged.
  double start_fraction = 0;
};

struct LttStep {
  double threshold = 0;
  std::size_t accepted = 0;
  std::size_t losses = 0;
  double p_value = 1;
  bool rejected = false;  // H(threshold) rejected: threshold certified
};

struct LttResult {
  double alpha = 0.1;
  double delta = 0.1;
  // Accept iff confidence >= threshold. +infinity when no threshold is certified (defer all).
  double threshold = 0;
  bool any_valid = false;
  std::size_t calibration_size = 0;
  std::size_t accepted = 0;           // calibration points accepted at the threshold
  double coverage = 0;                // accepted / calibration_size: answered without measuring
  double empirical_risk = 0;          // losses / accepted on the calibration set
  double risk_upper_bound = 1;        // 1 - delta upper confidence bound of that risk
  std::vector<LttStep> steps;         // the sequence as tested, most confident first
};

// Confidence: higher is more confident. Loss: 0 or 1 per point. Throws invalid_argument_error
// for empty or mismatched inputs, NaN confidences, losses other than 0/1, alpha or delta
// outside (0, 1).
[[nodiscard]] LttResult learn_then_test(std::span<const double> confidence, std::span<const double> loss,
                                        const LttOptions& options = {});

}  // namespace gpuforecast
