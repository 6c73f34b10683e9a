// Writes the calibration and test residuals of one real space, with our split-conformal and CQR
// intervals, for benchmarks/conformal_crosscheck/crosscheck.py to recompute with MAPIE.
// knn surrogate trained on 10% of convolution_milo@A100 (seeded); 20% calibration, rest test.
//
//   conformal_dump OUT.csv [alpha]
#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "common/parse_number.hpp"
#include "calibration/nonconformity.hpp"
#include "calibration/split_conformal.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/registry.hpp"

int main(int argc, char** argv) try {
  using namespace gpuforecast;
  if (argc < 2) {
    fmt::print(stderr, "usage: conformal_dump OUT.csv [alpha]\n");
    return 2;
  }
  const double alpha = argc > 2 ? detail::parse_number<double>("alpha (argument 2)", argv[2]) : 0.1;
  std::filesystem::path data = std::getenv("GPUFORECAST_DATA") && *std::getenv("GPUFORECAST_DATA")
                                   ? std::filesystem::path(std::getenv("GPUFORECAST_DATA"))
                                   : std::filesystem::path(GPUFORECAST_SOURCE_DIR) / ".." / "shared" / "datasets";
  const SpaceData space = load_space((data / "benchmark_hub/cachefiles/convolution_milo/A100.json.gz").string());
  std::vector<Observation> ok;
  for (const auto& o : space.observations)
    if (o.measurement.ok() && o.measurement.median_ms > 0) ok.push_back(o);
  std::mt19937_64 rng(42);
  std::shuffle(ok.begin(), ok.end(), rng);
  const std::size_t n_train = ok.size() / 10, n_cal = ok.size() / 5;
  auto model = make_surrogate("knn", 42);
  model.fit(std::span<const Observation>(ok.data(), n_train));
  std::vector<Candidate> c;
  std::vector<double> t;
  for (std::size_t i = n_train; i < ok.size(); ++i) {
    c.push_back(ok[i].candidate);
    t.push_back(ok[i].measurement.median_ms);
  }
  const auto f = model.predict(c);
  const std::vector<Forecast> cal_f(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(n_cal));
  const std::vector<double> cal_t(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(n_cal));
  SplitConformal split(alpha, ConformalScore::normalised_residual), cqr(alpha, ConformalScore::cqr);
  split.fit(cal_f, cal_t);
  cqr.fit(cal_f, cal_t);

  std::FILE* out = std::fopen(argv[1], "w");
  if (!out) {
    fmt::print(stderr, "cannot write {}\n", argv[1]);
    return 1;
  }
  fmt::print(out, "set,alpha,observed_ms,median_ms,lower_ms,upper_ms,spread,split_low_ms,split_high_ms,cqr_low_ms,cqr_high_ms\n");
  double w_split = 0, w_cqr = 0, cov_split = 0, cov_cqr = 0;
  std::size_t n_test = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const bool is_cal = i < n_cal;
    const Interval a = split.interval(f[i]), b = cqr.interval(f[i]);
    fmt::print(out, "{},{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g}\n",
               is_cal ? "cal" : "test", alpha, t[i], f[i].median_ms, f[i].lower_ms, f[i].upper_ms, effective_spread(f[i]),
               a.low_ms, a.high_ms, b.low_ms, b.high_ms);
    if (!is_cal) {
      ++n_test;
      w_split += a.width_ms();
      w_cqr += b.width_ms();
      cov_split += a.contains(t[i]);
      cov_cqr += b.contains(t[i]);
    }
  }
  std::fclose(out);
  fmt::print("| method | calibration | test | quantile | mean width ms | coverage |\n|---|---|---|---|---|---|\n");
  fmt::print("| split (normalised residual) | {} | {} | {:.6f} | {:.6f} | {:.4f} |\n", n_cal, n_test, split.quantile(),
             w_split / static_cast<double>(n_test), cov_split / static_cast<double>(n_test));
  fmt::print("| CQR | {} | {} | {:.6f} | {:.6f} | {:.4f} |\n", n_cal, n_test, cqr.quantile(),
             w_cqr / static_cast<double>(n_test), cov_cqr / static_cast<double>(n_test));
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "conformal_dump: error: {}\n", e.what());
  return 1;
}
