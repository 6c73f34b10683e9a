// forecast() refuses configurations that cannot be the kernel's, naming the row and the
// parameter, and flags values training never saw: every case of the shared table
// tests/support/malformed_configurations.json, on a model trained on real data.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/data/community_formats.hpp"
#include "gpuforecast/forecast.hpp"
#include "support/data.hpp"
#include "support/knn_model.hpp"

using namespace gpuforecast;

namespace {

const nlohmann::json& table() {
  static const nlohmann::json t = [] {
    std::ifstream in(test::source_dir() / "tests" / "support" / "malformed_configurations.json");
    REQUIRE(in);
    return nlohmann::json::parse(in);
  }();
  return t;
}

const Model& model() { return test::convolution_knn_model(); }

Candidate candidate(const std::string& config) {
  Candidate c;
  c.kernel = table()["kernel"].get<std::string>();
  c.device = find_device("A100");
  c.problem_size = {4096, 4096};
  c.config = Config::parse(config);
  return c;
}

}  // namespace

TEST_CASE("the model knows convolution_milo's ten parameters and the values trained on") {
  const auto& schemas = model().info().parameters;
  REQUIRE(schemas.size() == 1);
  CHECK(schemas[0].kernel == "convolution_milo");
  const T1File t1 = read_t1(test::t1_file("convolution_milo").string());
  REQUIRE(schemas[0].parameters.size() == t1.space.parameters().size());
  for (std::size_t i = 0; i < t1.space.parameters().size(); ++i) {
    INFO(t1.space.parameters()[i].name);
    CHECK(schemas[0].parameters[i].name == t1.space.parameters()[i].name);
    for (const auto& v : schemas[0].parameters[i].values) {
      const auto& allowed = t1.space.parameters()[i].values;
      CHECK(std::find(allowed.begin(), allowed.end(), v) != allowed.end());
    }
  }
}

TEST_CASE("a valid configuration is forecast with nothing extrapolated; an unseen block size is flagged") {
  const Decision ok = forecast(model(), candidate(table()["valid"].get<std::string>()));
  CHECK(ok.forecast.median_ms > 0);
  CHECK(ok.extrapolation.empty());
  const Decision far = forecast(model(), candidate(table()["extrapolated"].get<std::string>()));
  CHECK(far.forecast.median_ms > 0);
  CHECK_THAT(far.extrapolation, Catch::Matchers::Contains("block_size_x=512 (seen 16..256)"));
  CHECK_THAT(far.extrapolation, Catch::Matchers::StartsWith("never seen in training"));
}

TEST_CASE("every malformed configuration of the table is refused, naming the row and the parameter") {
  const T1File t1 = read_t1(test::t1_file("convolution_milo").string());
  const auto& cases = table()["cases"];
  REQUIRE(cases.size() >= 15);
  for (const auto& k : cases) {
    const std::string name = k["case"].get<std::string>();
    INFO("case \"" << name << "\": " << k["config"].get<std::string>());
    const bool with_space = k.value("space", false);
    // Row 2 of a batch whose other rows are valid: the error names the row.
    std::vector<Candidate> batch{candidate(table()["valid"]), candidate(table()["valid"]),
                                 candidate(k["config"].get<std::string>())};
    if (with_space) CHECK_NOTHROW(forecast(model(), batch));  // plausible for the model alone
    try {
      (void)(with_space ? forecast(model(), batch, t1.space) : forecast(model(), batch));
      FAIL("no error");
    } catch (const invalid_configuration_error& e) {
      INFO(e.what());
      CHECK(e.get_row() == 2);
      CHECK(e.get_parameter() == k["parameter"].get<std::string>());
      CHECK(std::string(e.what()).starts_with("configuration 2 ["));
      CHECK(std::regex_search(e.what(), std::regex(k["message"].get<std::string>())));
      CHECK(!e.get_expected().empty());
    }
  }
}

TEST_CASE("the pair forecast (a reference runtime) checks its candidate too") {
  CHECK_THROWS_AS(forecast(model(), candidate("block_size_x=16"), 1.0), invalid_configuration_error);
  const Decision d = forecast(model(), candidate(table()["extrapolated"].get<std::string>()), 1.0);
  CHECK(!d.extrapolation.empty());
}

TEST_CASE("a kernel the model never saw is forecast and flagged, its parameters unchecked") {
  Candidate c = candidate("block_size_x=16");
  c.kernel = "gemm";
  const Decision d = forecast(model(), c);
  CHECK_THAT(d.extrapolation, Catch::Matchers::Contains("kernel \"gemm\" never seen in training (trained on convolution_milo)"));
}

TEST_CASE("a model file written before parameter schemas loads and checks nothing") {
  // A training section of format 1 (kernels, devices, sources, counts): what older files hold.
  test::TempDir dir;
  const auto path = (dir.path() / "old.gfm").string();
  ModelFile file = read_model_file(model().info().path);
  ArchiveWriter w;
  w.u32(1);
  for (const auto* list : {&model().info().kernels, &model().info().devices, &model().info().kernels}) {
    w.u64(list->size());
    for (const auto& s : *list) w.str(s);
  }
  w.u64(1);
  w.u64(1);
  w.u64(0);
  file.set("training", w.data());
  write_model_file(path, file);
  const Model old = load(path);
  CHECK(old.info().parameters.empty());
  CHECK_NOTHROW(forecast(old, candidate("block_size_x=16")));
}
