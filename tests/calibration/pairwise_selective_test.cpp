// Pairwise selective prediction: losses, confidences, and the deferral rule's guarantee.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "calibration/pairwise_selective.hpp"
#include "gpuforecast/core/error.hpp"
#include "surrogate/metrics.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

TEST_CASE("direction: bins 4-8 are faster, bin 4 holding speedups from 1 to sqrt 2") {
  const BinProbabilities slower{0.1, 0.2, 0.3, 0.2, 0.1, 0.05, 0.05, 0.0};
  CHECK(faster_probability(slower) == Approx(0.4));
  CHECK_FALSE(called_faster(slower));
  CHECK(pair_loss(PairLoss::wrong_direction, slower, 3) == 0);
  CHECK(pair_loss(PairLoss::wrong_direction, slower, 4) == 1);
  CHECK(pair_loss(PairLoss::wrong_bin, slower, 3) == 0);
  CHECK(pair_loss(PairLoss::wrong_bin, slower, 2) == 1);
  CHECK_THROWS_WITH(pair_loss(PairLoss::wrong_bin, slower, 0), Contains("1..8"));
}

TEST_CASE("confidences rise with concentration") {
  const BinProbabilities sharp{0, 0, 0, 0.9, 0.1, 0, 0, 0};
  const BinProbabilities flat{0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125};
  for (auto c : {PairConfidence::top_bin_probability, PairConfidence::margin, PairConfidence::entropy,
                 PairConfidence::direction_probability})
    CHECK(pair_confidence(c, sharp) > pair_confidence(c, flat));
  CHECK(pair_confidence(PairConfidence::margin, sharp) == Approx(0.8));
  CHECK(pair_confidence(PairConfidence::direction_probability, flat) == Approx(0.625));  // bins 4-8 are faster
  CHECK(pair_confidence(PairConfidence::entropy, flat) == Approx(-std::log(8.0)));
  CHECK(parse_pair_confidence("margin") == PairConfidence::margin);
  CHECK(parse_pair_loss("wrong_direction") == PairLoss::wrong_direction);
  CHECK_THROWS_WITH(parse_pair_loss("wrong"), Contains("\"wrong\""));
  CHECK_THROWS_WITH(parse_pair_confidence("x"), Contains("direction_probability"));
}

TEST_CASE("pair bins from runtimes and forecasts") {
  const std::vector<double> t{1.0, 1.6, 0.6};  // away from the bin edges
  const std::vector<CandidatePair> pairs{{0, 1}, {0, 2}, {1, 2}};
  CHECK(pair_true_bins(t, pairs) == std::vector<int>{2, 5, 6});
  CHECK_THROWS_WITH(pair_true_bins(t, std::vector<CandidatePair>{{0, 3}}), Contains("outside"));
  std::vector<Forecast> f(3);
  for (std::size_t i = 0; i < 3; ++i) {
    f[i].median_ms = t[i];
    f[i].lower_ms = t[i] * 0.9;
    f[i].upper_ms = t[i] * 1.1;
  }
  const auto p = pair_bin_probabilities(f, pairs);
  REQUIRE(p.size() == 3);
  CHECK(predicted_bin(p[0]) == 2);
  CHECK(predicted_bin(p[1]) == 5);
  CHECK(called_faster(p[2]));
}

TEST_CASE("the deferral rule answers the confident pairs and keeps the risk among them within alpha") {
  // Confidence c uniform in (0.5, 1), the call right with probability c: among calls with
  // c >= t the risk is (1 - t) / 2, so t = 0.8 is the loosest safe threshold at alpha = 0.1 and
  // answers 40%; the finite-sample certificate answers somewhat less.
  std::mt19937_64 rng(5);
  auto draw = [&](std::size_t n, std::vector<BinProbabilities>& ps, std::vector<int>& bins) {
    for (std::size_t i = 0; i < n; ++i) {
      const double c = std::uniform_real_distribution<double>(0.5, 1.0)(rng);
      BinProbabilities p{};
      p[4] = c;  // faster, bin 5
      p[2] = 1 - c;
      const bool right = std::bernoulli_distribution(c)(rng);
      ps.push_back(p);
      bins.push_back(right ? 5 : 3);
    }
  };
  std::size_t violations = 0;
  double answered = 0;
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<BinProbabilities> cal_p, test_p;
    std::vector<int> cal_b, test_b;
    draw(2000, cal_p, cal_b);
    draw(2000, test_p, test_b);
    const auto s = PairwiseSelector::fit(cal_p, cal_b);
    CHECK(s.options().loss == PairLoss::wrong_direction);
    std::size_t acc = 0;
    double loss = 0;
    for (std::size_t i = 0; i < test_p.size(); ++i) {
      const auto d = s.decide(test_p[i]);
      CHECK(d.faster);
      if (d.defer) continue;
      ++acc;
      loss += pair_loss(PairLoss::wrong_direction, test_p[i], test_b[i]);
    }
    answered += static_cast<double>(acc) / 2000 / 20;
    if (acc && loss / static_cast<double>(acc) > 0.1) ++violations;
  }
  CHECK(answered > 0.25);
  CHECK(answered < 0.4);
  CHECK(violations <= 4);  // delta = 0.1 of 20, with slack for chance
}
