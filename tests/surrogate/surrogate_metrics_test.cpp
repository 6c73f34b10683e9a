#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "surrogate/metrics.hpp"

using namespace gpuforecast;

namespace {
double brute_tau_b(const std::vector<double>& a, const std::vector<double>& b) {
  double c = 0, d = 0, ta = 0, tb = 0, n0 = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = i + 1; j < a.size(); ++j) {
      ++n0;
      const double s = (a[i] - a[j]) * (b[i] - b[j]);
      if (a[i] == a[j]) ++ta;
      if (b[i] == b[j]) ++tb;
      if (s > 0) ++c;
      if (s < 0) ++d;
    }
  return (c - d) / std::sqrt((n0 - ta) * (n0 - tb));
}
}  // namespace

TEST_CASE("spearman: perfect, reversed and tied by hand") {
  std::vector<double> a{1, 2, 3, 4}, r{4, 3, 2, 1};
  CHECK(spearman(a, a) == Approx(1.0));
  CHECK(spearman(a, r) == Approx(-1.0));
  // ranks of {1,2,2,3} are {1,2.5,2.5,4}: rho = 4.5 / sqrt(4.5 * 5)
  std::vector<double> t{1, 2, 2, 3};
  CHECK(spearman(t, a) == Approx(4.5 / std::sqrt(22.5)));
  std::vector<double> constant{5, 5, 5, 5};
  CHECK(spearman(constant, a) == 0.0);
  CHECK_THROWS_AS(spearman(std::vector<double>{1, 2}, a), invalid_argument_error);
  CHECK_THROWS_AS(spearman(std::vector<double>{}, std::vector<double>{}), invalid_argument_error);
}

TEST_CASE("kendall tau-b: hand cases and brute force with ties") {
  // C = 7, D = 3 over 10 pairs.
  CHECK(kendall_tau_b(std::vector<double>{1, 2, 3, 4, 5}, std::vector<double>{3, 1, 2, 5, 4}) == Approx(0.4));
  // one tie in a: C = 5, D = 0, tau_b = 5 / sqrt(5 * 6)
  CHECK(kendall_tau_b(std::vector<double>{1, 2, 2, 3}, std::vector<double>{1, 2, 3, 4}) == Approx(5.0 / std::sqrt(30.0)));
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> v(0, 6);
  for (int round = 0; round < 20; ++round) {
    std::vector<double> a(60), b(60);
    for (auto& x : a) x = v(rng);
    for (auto& x : b) x = v(rng);
    CHECK(kendall_tau_b(a, b) == Approx(brute_tau_b(a, b)).margin(1e-12));
  }
}

TEST_CASE("mape, top recall and utility by hand") {
  CHECK(mape(std::vector<double>{110, 90}, std::vector<double>{100, 100}) == Approx(10.0));
  CHECK_THROWS_AS(mape(std::vector<double>{1}, std::vector<double>{0}), invalid_argument_error);

  // 200 candidates, truth = index + 1: true top-1% = {0, 1}; predicted top-5% = 10 smallest predictions.
  std::vector<double> truth(200), pred(200);
  for (int i = 0; i < 200; ++i) {
    truth[static_cast<std::size_t>(i)] = i + 1;
    pred[static_cast<std::size_t>(i)] = i + 1;
  }
  CHECK(top_recall(pred, truth) == 1.0);
  pred[0] = 1000;  // the best is predicted worst; the second stays in
  CHECK(top_recall(pred, truth) == 0.5);
  // predicted top-10% = 20 candidates: indices 1..20 -> best true among them is 2; best overall is 1.
  CHECK(utility(pred, truth) == Approx(2.0));
  pred[0] = 1;
  CHECK(utility(pred, truth) == Approx(1.0));
}

TEST_CASE("bin probabilities, Brier and ordinal CRPS by hand") {
  BinProbabilities one_hot{};
  one_hot[5] = 1.0;  // bin 6
  CHECK(brier(one_hot, 6) == 0.0);
  CHECK(crps_ordinal(one_hot, 6) == 0.0);
  CHECK(predicted_bin(one_hot) == 6);
  BinProbabilities uniform;
  uniform.fill(1.0 / 8);
  CHECK(brier(uniform, 3) == Approx(7.0 / 64 + 49.0 / 64));
  BinProbabilities first{};
  first[0] = 1.0;
  CHECK(crps_ordinal(first, 8) == Approx(1.0));
  CHECK(brier(first, 8) == Approx(2.0));

  // Reference 2.5 ms, candidate 1 ms, both sharp: 2*log2(2.5) = 2.64 -> bin 6.
  Forecast ref{2.5, 2.49, 2.51, 0, 0, std::nullopt};
  Forecast cand{1.0, 0.995, 1.005, 0, 0, std::nullopt};
  const auto p = bin_probabilities(ref, cand);
  double sum = 0;
  for (double x : p) sum += x;
  CHECK(sum == Approx(1.0));
  CHECK(predicted_bin(p) == 6);
  CHECK(speedup_bin(2.5, 1.0) == 6);
  CHECK(predicted_bin(bin_probabilities(cand, ref)) == speedup_bin(1.0, 2.5));
}

TEST_CASE("bin scores and the bundle of all metrics") {
  std::vector<Forecast> f;
  std::vector<double> truth;
  for (int i = 1; i <= 50; ++i) {
    const double t = std::exp(0.1 * i);
    truth.push_back(t);
    f.push_back({t, t * 0.999, t * 1.001, 0, 0, std::nullopt});
  }
  const auto s = score_forecasts(f, truth, 3, 500);
  CHECK(s.spearman == Approx(1.0));
  CHECK(s.kendall == Approx(1.0));
  CHECK(s.mape == Approx(0.0).margin(1e-9));
  CHECK(s.top1_recall == 1.0);
  CHECK(s.utility == 1.0);
  CHECK(s.bins.pairs == 500);
  CHECK(s.bins.exact > 0.95);  // sharp, exact forecasts hit the bin unless it sits on an edge
  CHECK(s.bins.within_one == 1.0);
  CHECK(s.bins.brier < 0.1);
  // Same seed, same pairs.
  CHECK(bin_scores(f, truth, 100, 9).exact == bin_scores(f, truth, 100, 9).exact);
}
