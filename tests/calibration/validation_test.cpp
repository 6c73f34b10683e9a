// Issue 5 point 6 on real spaces: split-conformal coverage over 100 random calibration/test
// splits, the Learn-then-Test (alpha, delta) guarantee over the same splits, and adaptive
// conformal coverage along a replayed search that drifts toward fast configurations.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "fixed_predictions.hpp"
#include "calibration/adaptive_conformal.hpp"
#include "calibration/selective_calibrator.hpp"
#include "calibration/selective_evaluation.hpp"

using namespace gpuforecast;

namespace {

const std::vector<test::HeldOut>& spaces() {
  // knn trained on 10% of each space (seeded); forecasts of the other 90% are fixed.
  static const std::vector<test::HeldOut> s = [] {
    std::vector<test::HeldOut> v;
    v.push_back(test::fixed_predictions("convolution_milo", "A100", 0.1, 1));
    v.push_back(test::fixed_predictions("convolution_milo", "A4000", 0.1, 2));
    v.push_back(test::fixed_predictions("dedispersion_milo", "A100", 0.1, 3));
    v.push_back(test::fixed_predictions("dedispersion_milo", "A6000", 0.1, 4));
    return v;
  }();
  return s;
}

struct SplitResult {
  double coverage_split, coverage_cqr, accepted, risk;
  bool violated;
};

SplitResult run_split(const test::HeldOut& h, std::size_t n_cal, std::uint64_t seed, bool bins = false) {
  std::vector<std::size_t> idx(h.candidates.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(idx.begin(), idx.end(), rng);
  auto take = [&](std::size_t from, std::size_t to, auto& src) {
    std::vector<std::decay_t<decltype(src[0])>> v;
    for (std::size_t i = from; i < to; ++i) v.push_back(src[idx[i]]);
    return v;
  };
  const std::size_t n = idx.size();
  const auto cc = take(0, n_cal, h.candidates);
  const auto cf = take(0, n_cal, h.forecasts);
  const auto ct = take(0, n_cal, h.runtimes_ms);
  const auto tc = take(n_cal, n, h.candidates);
  const auto tf = take(n_cal, n, h.forecasts);
  const auto tt = take(n_cal, n, h.runtimes_ms);

  CalibrationOptions o;  // alpha 0.1 intervals; deferral risk 0.1 with delta 0.1
  o.seed = seed;
  if (bins) {  // the GPU Forecasters setting: wrong speedup bin, confidence = top bin probability
    o.loss = DeferralLoss::wrong_bin;
    o.confidence = ConfidenceScore::top_bin_probability;
  }
  const auto cal = SelectiveCalibrator::fit(cc, cf, ct, o);
  const auto e = evaluate_selective(cal, tc, tf, tt, seed);
  if (bins) return {e.coverage, 0, e.accepted_fraction, e.risk_accepted, e.accepted > 0 && e.risk_accepted > 0.1};
  CalibrationOptions oq = o;
  oq.score = ConformalScore::cqr;
  const auto cal_q = SelectiveCalibrator::fit(cc, cf, ct, oq);
  const auto eq = evaluate_selective(cal_q, tc, tf, tt, seed);
  return {e.coverage, eq.coverage, e.accepted_fraction, e.risk_accepted, e.accepted > 0 && e.risk_accepted > 0.1};
}

}  // namespace

TEST_CASE("split conformal and Learn-then-Test over 100 random splits of real spaces", "[data]") {
  const auto& s = spaces();
  const int splits = 100;
  double cov = 0, cov_q = 0, acc = 0;
  int violations = 0;
  for (int k = 0; k < splits; ++k) {
    const auto& h = s[static_cast<std::size_t>(k) % s.size()];
    const auto r = run_split(h, 400, 1000 + static_cast<std::uint64_t>(k));
    cov += r.coverage_split;
    cov_q += r.coverage_cqr;
    acc += r.accepted;
    violations += r.violated ? 1 : 0;
  }
  cov /= splits;
  cov_q /= splits;
  acc /= splits;
  WARN("mean coverage of the 90% interval over " << splits << " splits: split " << cov << ", CQR " << cov_q
       << "; LTT (alpha 0.1, delta 0.1) accepts " << acc << " of test points, risk > alpha in " << violations
       << " splits");
  CHECK(cov >= 0.88);
  CHECK(cov <= 0.93);
  CHECK(cov_q >= 0.88);
  CHECK(cov_q <= 0.93);
  CHECK(violations <= static_cast<int>(std::floor((0.1 + 0.03) * splits)));
}

TEST_CASE("Learn-then-Test on the wrong-speedup-bin loss over 100 random splits", "[data]") {
  const auto& s = spaces();
  const int splits = 100;
  double acc = 0;
  int violations = 0;
  for (int k = 0; k < splits; ++k) {
    const auto r = run_split(s[static_cast<std::size_t>(k) % s.size()], 400, 2000 + static_cast<std::uint64_t>(k), true);
    acc += r.accepted;
    violations += r.violated ? 1 : 0;
  }
  WARN("wrong-bin loss, top-bin confidence: LTT (alpha 0.1, delta 0.1) accepts " << acc / splits
       << " of test points, risk > alpha in " << violations << " splits");
  CHECK(violations <= static_cast<int>(std::floor((0.1 + 0.03) * splits)));
}

TEST_CASE("adaptive conformal keeps coverage along a search drifting to fast configurations", "[data]") {
  for (const auto& h : spaces()) {
    // Calibrate on 300 random points, then replay the rest as a search would meet them: slow
    // configurations first, ending at the fastest (noisy order, seeded).
    std::vector<std::size_t> idx(h.candidates.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::mt19937_64 rng(99);
    std::shuffle(idx.begin(), idx.end(), rng);
    const std::size_t n_cal = 300;
    std::vector<Candidate> cc;
    std::vector<Forecast> cf;
    std::vector<double> ct;
    for (std::size_t i = 0; i < n_cal; ++i) {
      cc.push_back(h.candidates[idx[i]]);
      cf.push_back(h.forecasts[idx[i]]);
      ct.push_back(h.runtimes_ms[idx[i]]);
    }
    std::vector<std::size_t> traj(idx.begin() + n_cal, idx.end());
    std::normal_distribution<double> jitter(0, 0.1);
    std::vector<double> key(h.candidates.size());
    for (auto i : traj) key[i] = std::log(h.runtimes_ms[i]) + jitter(rng);
    std::sort(traj.begin(), traj.end(), [&](auto a, auto b) { return key[a] > key[b]; });

    CalibrationOptions o;
    o.aci_gamma = 0.02;
    auto cal = SelectiveCalibrator::fit(cc, cf, ct, o);
    std::size_t static_miss = 0, online_miss = 0, tail_static = 0, tail_online = 0;
    const std::size_t tail_from = traj.size() * 2 / 3;
    for (std::size_t s = 0; s < traj.size(); ++s) {
      const auto i = traj[s];
      const bool miss_static = !cal.conformal().interval(h.candidates[i], h.forecasts[i]).contains(h.runtimes_ms[i]);
      const bool miss_online = !cal.interval(h.candidates[i], h.forecasts[i]).contains(h.runtimes_ms[i]);
      static_miss += miss_static;
      online_miss += miss_online;
      if (s >= tail_from) {
        tail_static += miss_static;
        tail_online += miss_online;
      }
      cal.update(h.candidates[i], h.forecasts[i], h.runtimes_ms[i]);
    }
    const double T = static_cast<double>(traj.size());
    const double tail = static_cast<double>(traj.size() - tail_from);
    const double cov_online = 1 - static_cast<double>(online_miss) / T;
    WARN(h.label << ": coverage along the drifting trajectory (" << traj.size() << " steps): static split "
                 << 1 - static_cast<double>(static_miss) / T << " (fastest third " << 1 - tail_static / tail
                 << "), adaptive " << cov_online << " (fastest third " << 1 - tail_online / tail << ")");
    CHECK(std::abs(cov_online - 0.9) <= 0.03);
  }
}
