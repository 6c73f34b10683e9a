#pragma once
// Conformal prediction sets of speedup bins that respect their order: every set is a run of
// adjacent bins (e.g. 3..5), never {2, 6}.
//
// The score (ordinal APS, Lu et al. 2022): grow a run of bins from the most probable one, each
// step adding whichever neighbouring bin is more probable (the lower bin on ties), until the
// run holds the true bin; the score is the probability mass of the run at that moment. Scores
// rise along the growth order, so {bins with score <= q} is again a run (possibly empty when q
// is below the top probability). With q the conformal quantile of n calibration scores at
// level alpha, a fresh exchangeable pair's true bin is in its set with probability >= 1 - alpha.
#include <span>
#include <vector>

#include "gpuforecast/calibration/pairs.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// The score of `true_bin` (1..8) under `p`, in (0, 1]. Throws invalid_argument_error for a bin
// outside 1..8.
[[nodiscard]] double ordinal_score(const BinProbabilities& p, int true_bin);
// {bins b : ordinal_score(p, b) <= threshold}; every bin for threshold +infinity.
[[nodiscard]] BinRun ordinal_set(const BinProbabilities& p, double threshold);

class OrdinalConformal {
 public:
  OrdinalConformal() = default;
  // Throws invalid_argument_error for empty or mismatched input, a bin outside 1..8, alpha
  // outside (0, 1).
  static OrdinalConformal fit(std::span<const BinProbabilities> p, std::span<const int> true_bins, double alpha);
  [[nodiscard]] BinRun predict(const BinProbabilities& p) const { return ordinal_set(p, m_threshold); }
  [[nodiscard]] double threshold() const noexcept { return m_threshold; }  // +inf: too few scores
  [[nodiscard]] double alpha() const noexcept { return m_alpha; }

 private:
  double m_threshold = 1;
  double m_alpha = 0.1;
};

}  // namespace gpuforecast
