// Certified screening: the rule against hand-computed cases, its input checks, and its
// guarantee on real held-out forecasts (a k-NN fitted on 10% of a space, the rest split into
// calibration and test halves many times).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "calibration/fixed_predictions.hpp"
#include "stats/learn_then_test.hpp"
#include "gpuforecast/stats/screening.hpp"
#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

TEST_CASE("screening certifies nothing from fewer improvement pairs than the binomial test needs") {
  // 21 improvements with perfect forecasts: 0.9^21 = 0.109 > 0.1, so no margin can be certified.
  std::vector<ScreeningPair> pairs;
  for (int i = 0; i < 21; ++i) pairs.push_back({1.0, 1.0, 2.0});
  for (int i = 0; i < 100; ++i) pairs.push_back({5.0, 5.0, 2.0});  // no improvements: no information
  const auto rule = certify_screening(pairs);
  CHECK_FALSE(rule.certified);
  CHECK(rule.improvements == 21);
  CHECK(std::isinf(rule.margin));
  CHECK_THAT(rule.reason, Contains("21 improvement pairs") && Contains("at least 22"));
  CHECK_FALSE(rule.skip(1000.0, 1.0));  // nothing certified: everything is measured
}

TEST_CASE("screening takes the narrowest margin the fixed sequence certifies") {
  // 60 improvements over incumbent 1 ms: scores s_j = log(f_j / 1) = 0.01 * j for j = 1..60.
  std::vector<ScreeningPair> pairs;
  for (int j = 1; j <= 60; ++j) pairs.push_back({std::exp(0.01 * j), 0.5, 1.0});
  ScreeningOptions o;
  const auto rule = certify_screening(pairs, o);
  REQUIRE(rule.certified);
  // The margin at the k-th widest score misses the k - 1 pairs above it; the last k with
  // P(Bin(60, 0.1) <= k - 1) <= 0.1 is the rule.
  std::size_t k_expected = 0;
  for (std::size_t k = 1; k <= 60; ++k)
    if (binomial_cdf(k - 1, 60, 0.1) <= 0.1) k_expected = k;
    else break;
  CHECK(rule.misses == k_expected - 1);
  CHECK(rule.margin == Approx(0.01 * static_cast<double>(61 - k_expected)));
  CHECK(rule.risk_upper_bound <= 0.1 + 1e-9);
  // Skipped iff log(f / I) > margin.
  CHECK(rule.skip(std::exp(rule.margin + 0.001), 1.0));
  CHECK_FALSE(rule.skip(std::exp(rule.margin - 0.001), 1.0));
  // A tolerance moves the bar: improvements must beat 0.9 * incumbent.
  o.tolerance = 0.1;
  const auto tolerant = certify_screening(pairs, o);
  REQUIRE(tolerant.certified);
  CHECK(tolerant.margin == Approx(rule.margin - std::log(0.9)));
}

TEST_CASE("screening against the incumbent's forecast sets each forecast against the model's forecast of the incumbent") {
  // The scores of the test above, but every pair's incumbent forecast is twice the incumbent's
  // time: against the forecast the scores fall by log 2, and so does the margin.
  std::vector<ScreeningPair> pairs;
  for (int j = 1; j <= 60; ++j) pairs.push_back({std::exp(0.01 * j), 0.5, 1.0, 2.0});
  const auto by_time = certify_screening(pairs);
  ScreeningOptions o;
  o.reference = ScreeningReference::incumbent_forecast;
  const auto by_forecast = certify_screening(pairs, o);
  REQUIRE(by_time.certified);
  REQUIRE(by_forecast.certified);
  CHECK(by_forecast.margin == Approx(by_time.margin - std::log(2.0)));
  CHECK(by_forecast.misses == by_time.misses);
  // A candidate is set against the incumbent's forecast, not its time.
  const double f = 2.0 * std::exp(by_forecast.margin + 0.001);
  CHECK(by_forecast.skip(f, 1.0, 2.0));
  CHECK_FALSE(by_forecast.skip(f, 1.0, 4.0));
  // Whether a pair is an improvement is still judged by the incumbent's time.
  std::vector<ScreeningPair> slower(30, ScreeningPair{1.0, 1.5, 1.0, 2.0});
  CHECK(certify_screening(slower, o).improvements == 0);
  // Without the incumbent's forecast neither a pair nor a candidate can be judged.
  pairs[7].incumbent_forecast_ms = 0;
  CHECK_THROWS_WITH(certify_screening(pairs, o), Contains("pair 7 of 60") && Contains("incumbent forecast"));
  CHECK_NOTHROW(certify_screening(pairs));  // against the time it is not needed
  CHECK_THROWS_WITH(by_forecast.skip(f, 1.0), Contains("incumbent's forecast"));
  // The offline form takes it as an argument.
  const std::vector<double> forecasts(30, 1.0), measured(30, 0.5);
  CHECK(certify_screening(forecasts, measured, 1.0, o, 2.0).certified);
  CHECK_THROWS_WITH(certify_screening(forecasts, measured, 1.0, o), Contains("incumbent forecast"));
}

TEST_CASE("screening rejects bad calibration pairs and options by name") {
  std::vector<ScreeningPair> pairs{{1.0, 1.0, 2.0}, {1.0, std::nan(""), 2.0}};
  CHECK_THROWS_WITH(certify_screening(pairs), Contains("pair 1 of 2") && Contains("measured"));
  pairs[1] = {-1.0, 1.0, 2.0};
  CHECK_THROWS_WITH(certify_screening(pairs), Contains("pair 1 of 2") && Contains("forecast"));
  pairs[1] = {1.0, 1.0, 0.0};
  CHECK_THROWS_WITH(certify_screening(pairs), Contains("incumbent"));
  ScreeningOptions o;
  o.alpha = 1.5;
  CHECK_THROWS_AS(certify_screening(std::span<const ScreeningPair>{}, o), invalid_argument_error);
  o = {};
  o.tolerance = 1;
  CHECK_THROWS_WITH(certify_screening(std::span<const ScreeningPair>{}, o), Contains("tolerance"));
  const std::vector<double> f{1, 2}, y{1};
  CHECK_THROWS_WITH(certify_screening(f, y, 1.0), Contains("one measurement per forecast"));
  const auto rule = certify_screening(std::span<const ScreeningPair>{});
  CHECK_THROWS_WITH(rule.skip(std::nan(""), 1.0), Contains("forecast"));
}

// The guarantee on real forecasts: the calibration half certifies a rule against an incumbent
// at a quantile of the space. The rule's miss rate on the held-out population it was drawn from
// (both halves: a calibration half is a sample without replacement of it) exceeds alpha in at
// most delta of the splits, plus binomial slack for the finite number of splits. The test half
// alone is no judge: its few improvements add their own noise, and they are the complement of
// the calibration half, so a lucky calibration half leaves an unlucky test half.
TEST_CASE("screening holds its miss-rate guarantee on held-out forecasts of real spaces") {
  for (const auto& [kernel, device] : {std::pair{"convolution_milo", "A100"}, std::pair{"dedispersion_milo", "A4000"}}) {
    const auto held = test::fixed_predictions(kernel, device, 0.1, 7);
    std::vector<double> sorted = held.runtimes_ms;
    std::sort(sorted.begin(), sorted.end());
    for (const double quantile : {0.05, 0.2}) {
      const double incumbent = sorted[static_cast<std::size_t>(quantile * static_cast<double>(sorted.size()))];
      const std::size_t splits = 100;
      std::size_t violations = 0, test_half_violations = 0, certified = 0;
      double skipped_share = 0;
      std::vector<std::size_t> order(held.runtimes_ms.size());
      std::iota(order.begin(), order.end(), 0);
      std::mt19937_64 rng(11);
      for (std::size_t s = 0; s < splits; ++s) {
        std::shuffle(order.begin(), order.end(), rng);
        const std::size_t half = order.size() / 2;
        std::vector<double> f, y;
        for (std::size_t i = 0; i < half; ++i) {
          f.push_back(held.forecasts[order[i]].median_ms);
          y.push_back(held.runtimes_ms[order[i]]);
        }
        const auto rule = certify_screening(f, y, incumbent);
        if (rule.certified) ++certified;
        ScreeningTally population, test_half;
        for (std::size_t i = 0; i < order.size(); ++i) {
          const bool skip = rule.skip(held.forecasts[order[i]].median_ms, incumbent);
          tally_screening(population, skip, held.runtimes_ms[order[i]], incumbent);
          if (i >= half) tally_screening(test_half, skip, held.runtimes_ms[order[i]], incumbent);
        }
        if (population.miss_rate() > 0.1) ++violations;
        if (test_half.miss_rate() > 0.1) ++test_half_violations;
        skipped_share += static_cast<double>(test_half.skipped) / static_cast<double>(test_half.considered);
      }
      INFO(held.label << ", incumbent at quantile " << quantile << ": " << violations << " of " << splits
                      << " splits missed more than alpha of the held-out improvements (" << test_half_violations
                      << " on the test half alone); " << certified << " certified; mean share skipped "
                      << skipped_share / static_cast<double>(splits));
      // delta = 0.1 of 100 splits, plus 2 binomial standard deviations (sqrt(100 * 0.1 * 0.9) = 3).
      CHECK(violations <= 16);
      // And it pays: most candidates are slower than an incumbent at the 5% or 20% quantile, and
      // the rule skips a real share of them.
      CHECK(certified == splits);
      CHECK(skipped_share / static_cast<double>(splits) > 0.3);
    }
  }
}

TEST_CASE("screening across rehearsal groups keeps the widest margin, so the rule holds on each") {
  // Group a: 60 improvements with scores 0.01..0.60; group b: the same scores doubled (a device on
  // which the forecasts of fast configurations sit further above the incumbent).
  std::vector<ScreeningPair> a, b;
  for (int j = 1; j <= 60; ++j) {
    a.push_back({std::exp(0.01 * j), 0.5, 1.0});
    b.push_back({std::exp(0.02 * j), 0.5, 1.0});
  }
  const std::vector<std::vector<ScreeningPair>> groups{a, b};
  const auto across = certify_screening_across(groups);
  const auto ra = certify_screening(a), rb = certify_screening(b);
  REQUIRE(across.certified);
  CHECK(across.margin == Approx(rb.margin));
  CHECK(across.margin > ra.margin);
  CHECK(across.calibration_size == 120);
  CHECK(across.improvements == 120);
  CHECK(across.misses == rb.misses);  // group a's scores all lie below b's margin
  // Groups too small to certify alone (10 improvements each) are pooled into one that can.
  std::vector<std::vector<ScreeningPair>> small(3);
  for (int j = 1; j <= 30; ++j) small[static_cast<std::size_t>(j % 3)].push_back({std::exp(0.01 * j), 0.5, 1.0});
  const auto pooled = certify_screening_across(small);
  std::vector<ScreeningPair> together;
  for (const auto& g : small) together.insert(together.end(), g.begin(), g.end());
  REQUIRE(pooled.certified);
  CHECK(pooled.margin == Approx(certify_screening(together).margin));
  // Nothing to certify on: the reason says so.
  const std::vector<std::vector<ScreeningPair>> none{{{1.0, 2.0, 1.0}}};
  const auto nothing = certify_screening_across(none);
  CHECK_FALSE(nothing.certified);
  CHECK_FALSE(nothing.reason.empty());
}
