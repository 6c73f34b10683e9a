#pragma once
// Certified screening: which candidates need not be measured because, with a guarantee, they
// will not beat the incumbent (the best measured so far).
//
// A candidate with forecast f is skipped when f * exp(-margin) >= R * (1 - tolerance): even shrunk
// by the certified margin, its forecast is no improvement. R, the reference, is the incumbent's
// measured time, or the model's forecast of the incumbent made with the candidate's
// (ScreeningReference). A candidate is an
// improvement when its true time y < incumbent * (1 - tolerance); the rule misses it when it
// skips it. The guarantee, for a level (alpha, delta): with probability >= 1 - delta over the
// calibration pairs, the miss rate among improvements is <= alpha.
//
// Calibration, Learn-then-Test on the conditional risk: only the calibration pairs that are
// improvements (y_j < I_j * (1 - tolerance), I_j the incumbent the pair is judged against)
// carry information about misses. Pair j is missed at margin m iff m <= s_j, with
// s_j = log(f_j / (R_j * (1 - tolerance))), so the misses fall monotonically as the margin
// grows. Given the n improvement pairs, they are n draws from the improvements' law (i.i.d.
// pairs stay i.i.d. conditioned on an event of each pair), so with k(m) misses
// p(m) = P(Binomial(n, alpha) <= k(m)) is a valid p-value for H(m): miss rate > alpha.
// Fixed-sequence testing from the widest margin down rejects while p <= delta; the narrowest
// rejected margin is the rule. (1 - alpha)^n > delta for n < log(delta) / log(1 - alpha) (22 at
// 0.1 / 0.1): with fewer improvement pairs nothing is certified and every candidate is measured.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// What a candidate's forecast is set against. Whether it is an improvement is always judged by
// the incumbent's measured time.
enum class ScreeningReference {
  incumbent_time,      // the incumbent's measured time
  // The model's forecast of the incumbent, made at the same time as the candidate's: an error the
  // model makes alike on both (a device it is biased on, a region of the space it has learnt
  // little of) cancels, so a margin certified on other devices fits a new one more closely.
  incumbent_forecast,
};

struct ScreeningOptions {
  double alpha = 0.1;      // allowed share of true improvements skipped
  double delta = 0.1;      // allowed probability that the guarantee fails
  double tolerance = 0;    // improvements are faster than the incumbent by more than this share
  ScreeningReference reference = ScreeningReference::incumbent_time;
};

// One calibration pair: a forecast made before the measurement, the measurement, and the
// incumbent it is judged against, with the model's forecast of that incumbent made at the same
// time (0 when not known; needed with ScreeningReference::incumbent_forecast).
struct ScreeningPair {
  double forecast_ms = 0;
  double measured_ms = 0;
  double incumbent_ms = 0;
  double incumbent_forecast_ms = 0;
};

// True when the pair's measured time beats its incumbent by more than `tolerance`: the pairs
// that carry information about misses.
[[nodiscard]] bool is_improvement(const ScreeningPair& pair, double tolerance = 0) noexcept;

struct ScreeningRule {
  ScreeningOptions options;
  bool certified = false;
  // Log-margin: skip iff log(forecast / (reference * (1 - tolerance))) > margin. +infinity when
  // nothing is certified (nothing is skipped).
  double margin = 0;
  std::size_t calibration_size = 0;  // pairs given
  std::size_t improvements = 0;      // of those, improvements over their incumbent
  std::size_t misses = 0;            // improvements the certified rule would have skipped
  double risk_upper_bound = 1;       // 1 - delta upper confidence bound of the miss rate
  std::string reason;                // why nothing is certified, "" when something is

  // True when the candidate need not be measured, against the incumbent's time or, with
  // ScreeningReference::incumbent_forecast, the model's forecast of the incumbent. Throws
  // invalid_argument_error for a NaN or non-positive forecast or reference.
  [[nodiscard]] bool skip(double forecast_ms, double incumbent_ms, double incumbent_forecast_ms = 0) const;
};

// Throws invalid_argument_error naming the pair for a NaN, infinite or non-positive time (the
// incumbent's forecast too, with ScreeningReference::incumbent_forecast), and for alpha or delta
// outside (0, 1) or a tolerance outside [0, 1).
[[nodiscard]] ScreeningRule certify_screening(std::span<const ScreeningPair> calibration,
                                              const ScreeningOptions& options = {});
// Across groups (a rehearsal per device, exchangeable within a group, not across): the rule is
// certified on each group and the widest margin holds, so that it holds on every group. Groups
// with too few improvements to certify alone are pooled into one. Not certified when no group
// certifies; calibration_size, improvements and misses count every pair, risk_upper_bound is the
// largest of the certified groups'.
[[nodiscard]] ScreeningRule certify_screening_across(std::span<const std::vector<ScreeningPair>> groups,
                                                     const ScreeningOptions& options = {});
// Offline form: pairs of a calibration file (forecast, measured), all judged against one
// incumbent (the one the candidates will be screened against), whose forecast is needed with
// ScreeningReference::incumbent_forecast.
[[nodiscard]] ScreeningRule certify_screening(std::span<const double> forecast_ms, std::span<const double> measured_ms,
                                              double incumbent_ms, const ScreeningOptions& options = {},
                                              double incumbent_forecast_ms = 0);

// How a screening went on candidates whose true times are known (replay, held-out data).
struct ScreeningTally {
  std::size_t considered = 0;            // candidates screened
  std::size_t skipped = 0;               // of those, skipped
  std::size_t improvements = 0;          // candidates that truly beat their incumbent
  std::size_t improvements_skipped = 0;  // of those, skipped: the misses
  // improvements_skipped / improvements; 0 when there were no improvements.
  [[nodiscard]] double miss_rate() const noexcept;
  ScreeningTally& operator+=(const ScreeningTally& other) noexcept;
};

// Adds one candidate's outcome: `skipped` by the rule, true time `measured_ms` (<= 0 or NaN: it
// fails, never an improvement) against `incumbent_ms`.
void tally_screening(ScreeningTally& tally, bool skipped, double measured_ms, double incumbent_ms,
                     double tolerance = 0) noexcept;

}  // namespace gpuforecast
