#include "gpuforecast/search/trace.hpp"

#include <catch2/catch.hpp>

using namespace gpuforecast;

namespace {
TraceEntry entry(Status s, double ms) {
  TraceEntry e;
  e.measurement.status = s;
  e.measurement.median_ms = ms;
  return e;
}
}  // namespace

TEST_CASE("fraction of optimum follows the best measured so far", "[search]") {
  Trace t;
  t.add(entry(Status::compile_failed, 0));
  t.add(entry(Status::ok, 4.0));
  t.add(entry(Status::ok, 5.0));
  t.add(entry(Status::ok, 2.0));
  auto curve = fraction_of_optimum_curve(t, 1.0, 6);
  REQUIRE(curve.size() == 6);
  CHECK(curve[0] == 0);
  CHECK(curve[1] == Approx(0.25));
  CHECK(curve[2] == Approx(0.25));
  CHECK(curve[3] == Approx(0.5));
  CHECK(curve[5] == Approx(0.5));  // held after the trace ends
  // Valued at reference times when given.
  auto ref = fraction_of_optimum_curve(t, 1.0, 4, [](const Config&) { return 1.25; });
  CHECK(ref[0] == 0);
  CHECK(ref[3] == Approx(0.8));
}

TEST_CASE("summaries give mean, 10th percentile and standard error over seeds", "[search]") {
  std::vector<std::vector<double>> curves;
  for (int i = 1; i <= 10; ++i) curves.push_back(std::vector<double>(5, i / 10.0));
  std::vector<std::size_t> budgets{1, 5, 9};
  auto s = summarise_curves(curves, budgets);
  REQUIRE(s.size() == 3);
  CHECK(s[0].mean == Approx(0.55));
  CHECK(s[0].p10 == Approx(0.19));
  CHECK(s[2].mean == Approx(0.55));
  CHECK(s[1].seeds == 10);
  // 0.1 .. 1.0: sample standard deviation 0.30277, over sqrt(10).
  CHECK(s[0].standard_error == Approx(0.0957427).epsilon(1e-5));
  const std::vector<std::vector<double>> one{{0.5}};
  CHECK(summarise_curves(one, budgets)[0].standard_error == 0);
  CHECK(percentile({}, 0.1) == 0);
  CHECK(percentile({3.0}, 0.1) == 3.0);
}
