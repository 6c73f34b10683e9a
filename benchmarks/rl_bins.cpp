// The reinforcement-learning stage of the transformer's speedup-bin head (GPU Forecasters:
// rewards correctness, correctness + (1 - half-Brier), correctness + (1 - ordinal CRPS)),
// against the supervised model, on held-out pairs of the same space.
//   rl_bins [--space dedispersion_milo/A100] [--fraction 0.05] [--seeds 2] [--steps 150]
//           [--pairs 4000] [--kl 0.05] [--lr 3e-4] [--group 8] [--noise 1.0]
// Metrics: exact and within-one bin accuracy (argmax), Brier (sum over the 8 bins, 0..2),
// CRPS over the ordinal bins (mean over the 7 thresholds, 0..1), ECE (10 confidence bins of
// the argmax probability). Lower is better for Brier, CRPS, ECE.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/parse_number.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "surrogate/transformer.hpp"
#include "surrogate/openmp_environment.hpp"

using namespace gpuforecast;

namespace {

struct Metrics {
  double exact = 0, within_one = 0, brier = 0, crps = 0, ece = 0;
};

Metrics evaluate(const std::vector<std::array<double, 8>>& p, const std::vector<int>& bins) {
  Metrics m;
  const double n = static_cast<double>(p.size());
  std::array<double, 10> conf{}, acc{}, count{};
  for (std::size_t i = 0; i < p.size(); ++i) {
    const int y = bins[i] - 1;
    const int a = static_cast<int>(std::max_element(p[i].begin(), p[i].end()) - p[i].begin());
    m.exact += a == y;
    m.within_one += std::abs(a - y) <= 1;
    double cum = 0, crps = 0;
    for (int k = 0; k < 8; ++k) {
      const double yk = k == y ? 1.0 : 0.0;
      m.brier += (p[i][static_cast<std::size_t>(k)] - yk) * (p[i][static_cast<std::size_t>(k)] - yk);
      cum += p[i][static_cast<std::size_t>(k)];
      if (k < 7) {
        const double fy = y <= k ? 1.0 : 0.0;
        crps += (cum - fy) * (cum - fy);
      }
    }
    m.crps += crps / 7.0;
    const double c = p[i][static_cast<std::size_t>(a)];
    const auto b = static_cast<std::size_t>(std::min(9.0, std::floor(c * 10.0)));
    conf[b] += c;
    acc[b] += a == y;
    count[b] += 1;
  }
  for (std::size_t b = 0; b < 10; ++b)
    if (count[b] > 0) m.ece += std::abs(acc[b] - conf[b]) / n;
  m.exact /= n;
  m.within_one /= n;
  m.brier /= n;
  m.crps /= n;
  return m;
}

}  // namespace

int main(int argc, char** argv) try {
  // libtorch's OpenMP threads spin while waiting: 20x slower fits on a busy machine.
  gpuforecast::detail::ensure_passive_openmp_wait();
  std::string space = "dedispersion_milo/A100";
  double fraction = 0.05;
  int seeds = 2, n_pairs = 4000;
  TransformerRlOptions rl;
  TransformerOptions opt;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--space") space = v;
    else if (k == "--fraction") detail::parse_number_into(fraction, k, v);
    else if (k == "--seeds") detail::parse_number_into(seeds, k, v);
    else if (k == "--steps") detail::parse_number_into(rl.steps, k, v);
    else if (k == "--pairs") detail::parse_number_into(n_pairs, k, v);
    else if (k == "--kl") detail::parse_number_into(rl.kl_weight, k, v);
    else if (k == "--lr") detail::parse_number_into(rl.lr, k, v);
    else if (k == "--group") detail::parse_number_into(rl.group_size, k, v);
    else if (k == "--noise") detail::parse_number_into(rl.noise, k, v);
    else if (k == "--threads") detail::parse_number_into(opt.threads, k, v);
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  const char* env = std::getenv("GPUFORECAST_DATA");
  const std::string data = env && *env ? env : std::string(GPUFORECAST_SOURCE_DIR) + "/../shared/datasets";
  const std::vector<std::string> paths{data + "/benchmark_hub/cachefiles/" + space + ".json.gz"};
  const auto ds = Dataset::load(paths);
  const char* names[] = {"supervised", "RL correctness", "RL corr+(1-halfBrier)", "RL corr+(1-CRPS)"};
  std::array<Metrics, 4> sum{};
  std::array<double, 4> seconds{};
  for (int seed = 0; seed < seeds; ++seed) {
    const auto split = ds.split_random(fraction, static_cast<std::uint64_t>(seed), false);
    std::vector<const Observation*> test;
    for (const auto& o : split.test)
      if (o.measurement.ok()) test.push_back(&o);
    std::mt19937_64 rng(1000 + static_cast<std::uint64_t>(seed));
    std::uniform_int_distribution<std::size_t> u(0, test.size() - 1);
    std::vector<Candidate> refs, cands;
    std::vector<int> bins;
    for (int i = 0; i < n_pairs; ++i) {
      const auto a = u(rng), b = u(rng);
      if (a == b) continue;
      refs.push_back(test[a]->candidate);
      cands.push_back(test[b]->candidate);
      bins.push_back(speedup_bin(test[a]->measurement.median_ms, test[b]->measurement.median_ms));
    }
    TransformerOptions o = opt;
    o.seed = static_cast<std::uint64_t>(seed);
    TransformerSurrogate base(o);
    const auto t0 = std::chrono::steady_clock::now();
    base.fit(split.train);
    seconds[0] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto add = [&](std::size_t row, const TransformerSurrogate& m) {
      const auto e = evaluate(m.predict_bins(refs, cands), bins);
      sum[row].exact += e.exact;
      sum[row].within_one += e.within_one;
      sum[row].brier += e.brier;
      sum[row].crps += e.crps;
      sum[row].ece += e.ece;
    };
    add(0, base);
    const TransformerRlOptions::Reward rewards[] = {TransformerRlOptions::Reward::correctness,
                                                    TransformerRlOptions::Reward::correctness_brier,
                                                    TransformerRlOptions::Reward::correctness_crps};
    for (std::size_t r = 0; r < 3; ++r) {
      TransformerSurrogate m = base;
      TransformerRlOptions ro = rl;
      ro.reward = rewards[r];
      ro.seed = static_cast<std::uint64_t>(seed);
      seconds[r + 1] += m.reinforce(split.train, ro).seconds;
      add(r + 1, m);
    }
  }
  std::printf("%s, train %.0f%%, %d seeds, %d held-out pairs per seed, RL: %d steps x %d pairs x G=%d, "
              "noise %.2f, KL %.3f, lr %.1e\n",
              space.c_str(), fraction * 100, seeds, n_pairs, rl.steps, rl.pairs_per_step, rl.group_size, rl.noise,
              rl.kl_weight, rl.lr);
  std::printf("%-24s %8s %10s %8s %8s %8s %8s\n", "model", "exact", "within-1", "Brier", "CRPS", "ECE", "time_s");
  for (std::size_t r = 0; r < 4; ++r) {
    const double n = seeds;
    std::printf("%-24s %8.4f %10.4f %8.4f %8.4f %8.4f %8.2f\n", names[r], sum[r].exact / n, sum[r].within_one / n,
                sum[r].brier / n, sum[r].crps / n, sum[r].ece / n, seconds[r] / n);
  }
  std::printf("time_s: supervised = training; RL rows = the RL stage alone (on top of the supervised model)\n");
} catch (const std::exception& e) {
  std::fprintf(stderr, "rl_bins: error: %s\n", e.what());
  return 1;
}
