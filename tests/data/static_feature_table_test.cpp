// The stored static feature tables: format, reading back, joining to measurements, occupancy.
#include "data/static_feature_table.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "support/data.hpp"
#include "temp_dir.hpp"

using namespace gpuforecast;

namespace {

Config config_of(std::vector<std::string> names, std::vector<Value> values) {
  return Config(std::make_shared<const std::vector<std::string>>(std::move(names)), std::move(values));
}

StaticFeatureTable small_table() {
  StaticFeatureTable t;
  t.kernel = "pnpoly";
  t.architecture = "sm_86";
  t.compiler = "NVRTC 13.0";
  t.parameters = {"block_size_x", "tile_size"};
  t.feature_names = {"threads_per_block", "registers", "static_shared_memory_bytes"};
  t.population = 10;
  t.sample_size = 3;
  t.sample_seed = 7;
  t.sources = {"RTX_3090.json.gz"};
  t.add(config_of({"block_size_x", "tile_size"}, {32, 1}), true,
        {{"threads_per_block", 32}, {"registers", 21}, {"static_shared_memory_bytes", 0}});
  t.add(config_of({"block_size_x", "tile_size"}, {64, 2}), true, {{"threads_per_block", 64}, {"registers", 40.5}});
  t.add(config_of({"block_size_x", "tile_size"}, {96, 20}), false, {{"threads_per_block", 96}},
        "ptxas error   : Entry function 'k' uses too much shared data (0xc790 bytes, 0xc000 max), \"quoted\"\nsecond line");
  return t;
}

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

}  // namespace

TEST_CASE("static feature table: written and read back, plain and gzip", "[data][features]") {
  test::TempDir dir;
  const StaticFeatureTable t = small_table();
  for (const char* name : {"t.csv", "t.csv.gz"}) {
    const auto path = (dir.path() / name).string();
    write_static_feature_table(t, path);
    const StaticFeatureTable r = read_static_feature_table(path);
    INFO(path);
    CHECK(r.kernel == "pnpoly");
    CHECK(r.architecture == "sm_86");
    CHECK(r.compiler == "NVRTC 13.0");
    CHECK(r.sample_size == 3);
    CHECK(r.population == 10);
    CHECK(r.sample_seed == 7);
    CHECK(r.sources == t.sources);
    CHECK(r.parameters == t.parameters);
    CHECK(r.feature_names == t.feature_names);
    REQUIRE(r.size() == 3);
    CHECK(r.compiled_count() == 2);
    const auto* a = r.find(config_of({"tile_size", "block_size_x"}, {2, 64}));  // any parameter order
    REQUIRE(a);
    CHECK(r.features_of(*a).at("registers") == 40.5);
    CHECK(r.features_of(*a).count("static_shared_memory_bytes") == 0);  // absent stays absent
    const auto* failed = r.find(config_of({"block_size_x", "tile_size"}, {96, 20}));
    REQUIRE(failed);
    CHECK_FALSE(failed->compiled);
    // The message survives commas and quotes; a newline becomes " | " (one row per line).
    CHECK(failed->error ==
          "ptxas error   : Entry function 'k' uses too much shared data (0xc790 bytes, 0xc000 max), \"quoted\" | second line");
    CHECK(r.find(config_of({"block_size_x", "tile_size"}, {128, 1})) == nullptr);
  }
}

TEST_CASE("static feature table: a torn last line is refused, or ignored in a journal", "[data][features]") {
  test::TempDir dir;
  const auto path = (dir.path() / "journal.csv").string();
  const StaticFeatureTable t = small_table();
  std::string text = static_feature_table_head(t);
  for (const auto& row : t.rows()) text += static_feature_table_line(t, row);
  write_file(path, text + "128,4,1,12");  // interrupted while writing
  try {
    (void)read_static_feature_table(path);
    FAIL("a torn table was read");
  } catch (const input_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("journal.csv") && Catch::Contains("line 11"));
  }
  const StaticFeatureTable r = read_static_feature_table(path, true);
  CHECK(r.size() == 3);
}

TEST_CASE("static feature table: malformed files name the file and line", "[data][features]") {
  test::TempDir dir;
  const auto path = (dir.path() / "bad.csv").string();
  const std::string head = "# gpuforecast static features\n# kernel: k\n# architecture: sm_80\n# compiler: NVRTC 13.0\n";
  struct Case {
    std::string text, expected;
  };
  const std::vector<Case> cases = {
      {"block,compiled,registers,compile_error\n", "not a static feature table"},
      {head + "block,registers,compile_error\n", "no \"compiled\" column"},
      {head + "block,compiled,registers\n", "not \"compile_error\""},
      {head + "block,compiled,registers,compile_error\n32,2,1,\n", "compiled must be 0 or 1"},
      {head + "block,compiled,registers,compile_error\n32,1,nan,\n", "not a finite number"},
      {head + "block,compiled,registers,compile_error\n32,1,4\n", "3 cells where the header has 4"},
      {head + "block,compiled,registers,compile_error\n32,0,,\n", "has no compile_error"},
      {head + "block,compiled,registers,compile_error\n32,0,,\"open\n", "unterminated quoted cell"},
      {head, "no header row"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (i == 0) write_file(path, "# something else\n" + cases[i].text);
    else write_file(path, cases[i].text);
    INFO("case " << i << ": " << cases[i].text);
    try {
      (void)read_static_feature_table(path);
      FAIL("read a malformed table");
    } catch (const input_error& e) {
      CHECK_THAT(e.what(), Catch::Contains("bad.csv") && Catch::Contains(cases[i].expected));
    }
  }
}

TEST_CASE("occupancy by CUDA's rules", "[data][features]") {
  const auto a100 = find_device("A100");
  const auto a4000 = find_device("RTX A4000");
  REQUIRE(a100);
  REQUIRE(a4000);
  // 256 threads, 32 registers: 8 warps a block, 64 warps an SM allow 8 blocks (full occupancy).
  auto o = compute_occupancy(*a100, 256, 32, 0, 1080);
  CHECK(o.blocks_per_sm == 8);
  CHECK(o.occupancy == Approx(1.0));
  CHECK(o.waves == Approx(1080.0 / (8 * a100->sm_count)));
  // 128 registers a thread: 4096 a warp, 16 warps an SM by registers = 2 blocks of 8 warps.
  CHECK(compute_occupancy(*a100, 256, 128, 0, 1).blocks_per_sm == 2);
  // sm_86 holds 48 warps: 6 blocks of 256 threads, occupancy 1.
  o = compute_occupancy(*a4000, 256, 32, 0, 1);
  CHECK(o.blocks_per_sm == 6);
  CHECK(o.occupancy == Approx(1.0));
  // 48 KiB of shared memory (+1 KiB reserved) a block: two fit in 100 KiB.
  CHECK(compute_occupancy(*a4000, 128, 32, 48 * 1024, 1).blocks_per_sm == 2);
  // A block larger than the device allows does not launch.
  CHECK(compute_occupancy(*a100, 2048, 32, 0, 1).blocks_per_sm == 0);
}

TEST_CASE("static features joined to measurements: a real space, missing rows kept", "[data][features]") {
  std::vector<SpaceData> spaces{load_space(test::cache_file("pnpoly", "RTX_3090").string()),
                                load_space(test::cache_file("convolution_milo", "MI250X").string())};
  const std::size_t observations = spaces[0].observations.size();
  StaticFeatureTable t;
  t.kernel = "pnpoly";
  t.architecture = "sm_86";
  t.parameters = {"between_method", "block_size_x", "tile_size", "use_method"};
  t.feature_names = {"threads_per_block", "grid_blocks", "registers", "static_shared_memory_bytes"};
  const Config first = spaces[0].observations[0].candidate.config;
  const Config second = spaces[0].observations[1].candidate.config;
  t.add(first, true, {{"threads_per_block", 256}, {"grid_blocks", 2000}, {"registers", 32}, {"static_shared_memory_bytes", 0}});
  t.add(second, false, {{"threads_per_block", 64}}, "error: too much shared data");

  const auto coverage = attach_static_features(spaces, std::vector<StaticFeatureTable>{t});
  REQUIRE(coverage.size() == 2);
  CHECK(coverage[0].architecture == "sm_86");
  CHECK(coverage[0].with_features == 2);
  CHECK(coverage[0].observations == observations);
  CHECK(spaces[0].observations.size() == observations);  // nothing dropped
  const Features& f = spaces[0].observations[0].candidate.features;
  CHECK(f.at("static_features_known") == 1);
  CHECK(f.at("compile_failed") == 0);
  CHECK(f.at("registers") == 32);
  CHECK(f.at("blocks_per_sm") == 6);  // sm_86: 48 warps, 8 a block
  CHECK(f.at("occupancy") == Approx(1.0));
  CHECK(f.at("waves") == Approx(2000.0 / (6 * spaces[0].device->sm_count)));
  CHECK(spaces[0].observations[1].candidate.features.at("compile_failed") == 1);
  CHECK(spaces[0].observations[2].candidate.features.at("static_features_known") == 0);
  // An AMD GPU has no table, and says why.
  CHECK(coverage[1].with_features == 0);
  CHECK(coverage[1].architecture.empty());
  CHECK_THAT(coverage[1].note, Catch::Contains("not an NVIDIA GPU"));
  CHECK(spaces[1].observations[0].candidate.features.at("static_features_known") == 0);
  CHECK_THAT(describe(coverage), Catch::Contains("static features: 2 of"));
}

// The stored tables (data/features, made by scripts/features) are part of the project: each
// shared NVIDIA space must find at least a thousand of its configurations (or all it has).
TEST_CASE("the stored tables cover every shared NVIDIA space", "[data][features][sweep]") {
  const auto tables = read_static_feature_tables((test::source_dir() / "data" / "features").string());
  const std::vector<std::pair<std::string, std::vector<std::string>>> spaces_by_kernel{
      {"convolution_milo", {"A100", "A4000", "A6000"}},
      {"dedispersion_milo", {"A100", "A4000", "A6000"}},
      {"convolution", {"RTX_2080_Ti", "RTX_3060_laptop", "RTX_3090", "RTX_Titan"}},
      {"gemm", {"RTX_2080_Ti", "RTX_3060_laptop", "RTX_3090", "RTX_Titan"}},
      {"pnpoly", {"RTX_2080_Ti", "RTX_3060_laptop", "RTX_3090", "RTX_Titan"}}};
  for (const auto& [kernel, devices] : spaces_by_kernel) {
    for (const auto& device : devices) {
      INFO(kernel << " on " << device);
      std::vector<SpaceData> spaces{load_space(test::cache_file(kernel, device).string())};
      const auto coverage = attach_static_features(spaces, tables);
      REQUIRE(coverage.size() == 1);
      INFO(coverage[0].note);
      CHECK(coverage[0].with_features >= std::min<std::size_t>(1000, coverage[0].observations));
    }
  }
}
