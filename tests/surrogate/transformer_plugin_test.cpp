// libgpuforecast.so loads libgpuforecast_transformer.so (and with it libtorch) only when a
// transformer is asked for. This program links libgpuforecast.so alone. Under ctest every test
// case runs in its own process; run by hand, they run in this order, which they rely on.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/core/archive.hpp"
#include "surrogate/ensemble.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "support/data.hpp"

using namespace gpuforecast;

namespace {

// Lines of /proc/self/maps that contain `what`.
std::size_t mapped(const std::string& what) {
  std::ifstream maps("/proc/self/maps");
  REQUIRE(maps);
  std::size_t n = 0;
  for (std::string line; std::getline(maps, line);) n += line.find(what) != std::string::npos;
  return n;
}

std::vector<Observation> conv(std::size_t n) {
  const std::vector<std::string> paths{test::cache_file("convolution_milo", "A4000").string()};
  auto obs = Dataset::load(paths).observations();
  obs.resize(std::min(n, obs.size()));
  return obs;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gpuforecast_transformer_plugin_test_" + name)).string();
}

void check_round_trip(const std::string& name, std::uint64_t seed, const std::vector<Observation>& obs) {
  INFO(name);
  auto s = make_surrogate(name, seed);
  s.fit(obs);
  const auto path = temp_path(name + ".gfm");
  save_surrogate(path, s, TrainingSummary::of(obs));
  const auto loaded = load_surrogate(path);
  std::filesystem::remove(path);
  CHECK(loaded.kind() == (name == "default" ? default_surrogate_name() : name));
  std::vector<Candidate> cands;
  for (std::size_t i = 0; i < obs.size(); i += 50) cands.push_back(obs[i].candidate);
  const auto a = s.predict(cands), b = loaded.predict(cands);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(b[i].median_ms == Approx(a[i].median_ms).epsilon(1e-5));
    CHECK(b[i].p_fail == Approx(a[i].p_fail).margin(1e-5));
  }
}

}  // namespace

TEST_CASE("transformer library: forest, XGBoost and the default models never map libtorch") {
  const auto obs = conv(1500);
  check_round_trip("forest", 1, obs);
#if GPUFORECAST_HAVE_XGBOOST
  check_round_trip("xgboost", 1, obs);
  check_round_trip("default", 1, obs);
#endif
  check_round_trip("ridge", 1, obs);
  CHECK_FALSE(has_surrogate_kind("transformer"));
  CHECK(mapped("libgpuforecast") > 0);  // the check reads the right file
  CHECK(mapped("libtorch") == 0);
  CHECK(mapped("libgpuforecast_transformer") == 0);
}

TEST_CASE("transformer library: when it cannot be loaded, the error names it and why") {
  REQUIRE_FALSE(has_surrogate_kind("transformer"));
  ::setenv("GPUFORECAST_TRANSFORMER_LIBRARY", "/nonexistent/libgpuforecast_transformer.so", 1);
  ModelFile file;
  ArchiveWriter plain;
  plain.str("transformer");
  plain.bytes("weights");
  file.set("surrogate", plain.data());
  const auto needs = Catch::Contains(
      "needs libgpuforecast_transformer.so (gpuforecast::transformer); it could not be loaded: "
      "GPUFORECAST_TRANSFORMER_LIBRARY: /nonexistent/libgpuforecast_transformer.so");
  CHECK_THROWS_WITH(surrogate_from(file, "model.gfm"),
                    Catch::StartsWith("model.gfm") && Catch::Contains("the model holds a \"transformer\" surrogate, which") && needs);
  CHECK_THROWS_AS(surrogate_from(file, "model.gfm"), model_file_error);

  // Inside an ensemble as well.
  ArchiveWriter members;
  detail::write_ensemble_header(members, 1);
  detail::write_member(members, "transformer", "weights");
  ArchiveWriter ensemble;
  ensemble.str("ensemble");
  ensemble.bytes(members.data());
  file.set("surrogate", ensemble.data());
  CHECK_THROWS_WITH(surrogate_from(file, "blend.gfm"), Catch::StartsWith("blend.gfm") && needs);

  CHECK_THROWS_WITH(make_surrogate("transformer", 1), needs);
  CHECK_THROWS_WITH(make_surrogate("ensemble(ridge=1,transformer=1)", 1), needs);
  ::unsetenv("GPUFORECAST_TRANSFORMER_LIBRARY");
  CHECK(mapped("libtorch") == 0);
}

TEST_CASE("transformer library: loaded on demand from beside libgpuforecast.so") {
  ::unsetenv("GPUFORECAST_TRANSFORMER_LIBRARY");
  const auto names = surrogate_names();
  const bool listed = std::find(names.begin(), names.end(), "transformer") != names.end();
#if GPUFORECAST_HAVE_TORCH
  REQUIRE(listed);
  CHECK(mapped("libgpuforecast_transformer") > 0);
  CHECK(mapped("libtorch") > 0);
  // Made by name, through a model file and back (trained forecasts before and after a model file:
  // transformer_surrogate_test, which trains a small one quickly).
  const auto path = temp_path("transformer.gfm");
  save_surrogate(path, make_surrogate("transformer", 3));
  const auto loaded = load_surrogate(path);
  std::filesystem::remove(path);
  CHECK(loaded.kind() == "transformer");
  // The "ensemble" of a libtorch build holds one.
  const auto blend = make_surrogate("ensemble", 1);
  REQUIRE(blend.get<AnyEnsemble>() != nullptr);
  const auto& members = blend.get<AnyEnsemble>()->members();
  CHECK(std::any_of(members.begin(), members.end(), [](const AnySurrogate& m) { return m.kind() == "transformer"; }));
#else
  CHECK_FALSE(listed);
  CHECK_THROWS_WITH(make_surrogate("transformer", 1), Catch::Contains("libgpuforecast_transformer.so"));
#endif
}
