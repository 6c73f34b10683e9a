#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "gpuforecast/core/error.hpp"
#include "surrogate/feature_encoder.hpp"
#include "synthetic.hpp"

using namespace gpuforecast;

namespace {
std::size_t column(const FeatureEncoder& e, const std::string& name) {
  const auto& n = e.feature_names();
  auto it = std::find(n.begin(), n.end(), name);
  REQUIRE(it != n.end());
  return static_cast<std::size_t>(it - n.begin());
}
}  // namespace

TEST_CASE("feature encoder: log2, raw, one-hot, device and problem features") {
  const auto dev = test::synthetic_device("GPU-A", 1.0);
  const auto obs = test::synthetic_space(dev, 1.0);
  FeatureEncoder e;
  e.fit(obs);
  // 11 device + 2 problem + bx(log, raw; 7 values one-hot) + tile(log, raw, 4) + unroll(log, raw, 3) + mode(2)
  CHECK(e.dimension() == 11 + 2 + (2 + 7) + (2 + 4) + (2 + 3) + 2);
  const auto& c = obs[10].candidate;  // bx=16, tile=2, unroll=2, mode=fast
  const auto x = e.encode(c);
  CHECK(x[column(e, "param.bx.log2")] == Approx(std::log2(17.0)));
  CHECK(x[column(e, "param.bx")] == 16.0);
  CHECK(x[column(e, "param.bx=16")] == 1.0);
  CHECK(x[column(e, "param.bx=32")] == 0.0);
  CHECK(x[column(e, "param.mode=fast")] == 1.0);
  CHECK(x[column(e, "param.mode=slow")] == 0.0);
  CHECK(x[column(e, "problem.log2_size_0")] == Approx(std::log2(4097.0)));
  CHECK(x[column(e, "device.is_nvidia")] == 1.0);
  CHECK(e.roles()[column(e, "param.mode=fast")] == FeatureRole::parameter_category);
  CHECK(e.roles()[column(e, "param.tile=2")] == FeatureRole::parameter_one_hot);
}

TEST_CASE("feature encoder: unseen parameters and values encode as zero; save/load is exact") {
  const auto dev = test::synthetic_device("GPU-A", 1.0);
  const auto obs = test::synthetic_space(dev, 1.0);
  FeatureEncoder e;
  e.fit(obs);
  Candidate c = obs[0].candidate;
  auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"bx", "new_param", "mode"});
  c.config = Config(names, {Value(48), Value(7), Value(std::string("medium"))});
  const auto x = e.encode(c);
  CHECK(x[column(e, "param.bx")] == 48.0);  // numeric columns still apply
  for (int v : {16, 32, 64}) CHECK(x[column(e, "param.bx=" + std::to_string(v))] == 0.0);
  CHECK(x[column(e, "param.tile")] == 0.0);  // absent parameter
  CHECK(x[column(e, "param.mode=fast")] == 0.0);
  CHECK(x[column(e, "param.mode=slow")] == 0.0);

  ArchiveWriter w;
  e.save(w);
  ArchiveReader r(w.data(), "memory");
  const auto back = FeatureEncoder::load(r);
  CHECK(r.at_end());
  CHECK(back.feature_names() == e.feature_names());
  const auto cands = test::candidates_of(obs, false);
  CHECK(back.encode(cands) == e.encode(cands));
}

TEST_CASE("feature encoder: errors") {
  FeatureEncoder e;
  CHECK_THROWS_AS(e.fit(std::span<const Observation>{}), invalid_argument_error);
  CHECK_THROWS_AS(e.encode(Candidate{}), invalid_argument_error);
  ArchiveWriter w;
  w.u32(99);
  ArchiveReader r(w.data(), "bad.gfm");
  CHECK_THROWS_AS(FeatureEncoder::load(r), model_file_error);
}
