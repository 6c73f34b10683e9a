// Static features of many configurations compiled with NVRTC (no GPU): what the compiler can
// know, failures recorded with the compiler's message, interrupted runs that compile nothing
// twice, and the stored tables reproduced.
#include "runtime/static_feature_extraction.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>

#include "gpuforecast/data/community_formats.hpp"
#include "support/data.hpp"
#include "../data/temp_dir.hpp"

using namespace gpuforecast;

namespace {

KernelSpec shared_array_kernel() {
  KernelSpec k;
  k.benchmark_name = "shared_array";
  k.kernel_name = "shared_array";
  k.source = R"(
#if BROKEN
#error "this configuration is broken on purpose"
#endif
extern "C" __global__ void shared_array(float* out) {
  __shared__ float buffer[ELEMENTS];
  buffer[threadIdx.x % ELEMENTS] = threadIdx.x;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = buffer[(threadIdx.x + 1) % ELEMENTS];
}
)";
  k.local_size = {"block_size_x", "1", "1"};
  k.global_size = {"8", "1", "1"};
  return k;
}

std::vector<Config> shared_array_configs() {
  const auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"block_size_x", "ELEMENTS", "BROKEN"});
  return {Config(names, {128, 64, 0}), Config(names, {128, 1024, 0}), Config(names, {256, 64, 1}),
          Config(names, {256, 20000, 0}), Config(names, {64, 256, 0}), Config(names, {32, 512, 0})};
}

StaticFeatureTable empty_table(const std::vector<Config>& configs) {
  StaticFeatureTable t;
  t.kernel = "shared_array";
  t.architecture = "sm_80";
  t.parameters = *configs.front().shared_names();
  return t;
}

}  // namespace

TEST_CASE("static features: what the compiler can know, and failures with its message", "[runtime][features]") {
  NvrtcCompiler compiler;
  const auto configs = shared_array_configs();
  StaticFeatureTable table = empty_table(configs);
  FeatureExtractionOptions options;
  options.jobs = 2;
  const auto report = extract_static_features(compiler, shared_array_kernel(), configs, "sm_80", table, options);
  CHECK(report.requested == configs.size());
  CHECK(report.compiled == configs.size());
  CHECK(report.failed == 2);
  CHECK(table.feature_names == extracted_feature_names());
  REQUIRE(table.size() == configs.size());

  const auto small = table.features_of(*table.find(configs[0]));
  const auto large = table.features_of(*table.find(configs[1]));
  CHECK(small.at("static_shared_memory_bytes") == 64 * 4);
  CHECK(large.at("static_shared_memory_bytes") == 1024 * 4);  // the larger array reports more
  CHECK(small.at("threads_per_block") == 128);
  CHECK(small.at("grid_blocks") == 8);
  CHECK(small.at("barriers") == 1);
  CHECK(small.at("registers") > 0);

  const auto* broken = table.find(configs[2]);
  REQUIRE(broken);
  CHECK_FALSE(broken->compiled);
  CHECK_THAT(broken->error, Catch::Contains("this configuration is broken on purpose"));
  CHECK(table.features_of(*broken).at("threads_per_block") == 256);  // the launch geometry stays known
  CHECK(table.features_of(*broken).count("registers") == 0);
  const auto* too_large = table.find(configs[3]);
  REQUIRE(too_large);
  CHECK_FALSE(too_large->compiled);
  CHECK_THAT(too_large->error, Catch::Contains("too much shared data"));
}

TEST_CASE("static features: an interrupted run continues and compiles nothing twice", "[runtime][features]") {
  test::TempDir dir;
  const std::string journal = (dir.path() / "table.csv.partial").string();
  const auto configs = shared_array_configs();
  {
    NvrtcCompiler compiler;
    StaticFeatureTable table = empty_table(configs);
    FeatureExtractionOptions options;
    options.journal_path = journal;
    options.on_progress = [](std::size_t done, std::size_t) {
      if (done == 2) throw std::runtime_error("interrupted");
    };
    CHECK_THROWS_WITH(extract_static_features(compiler, shared_array_kernel(), configs, "sm_80", table, options),
                      Catch::Contains("interrupted"));
  }
  {  // the process died while writing the third row
    std::ofstream out(journal, std::ios::app | std::ios::binary);
    out << "64,256,0,1,64,8";
  }
  StaticFeatureTable table = read_static_feature_table(journal, true);
  REQUIRE(table.size() == 2);

  NvrtcCompiler compiler;  // a new process: nothing in memory
  FeatureExtractionOptions options;
  options.journal_path = journal;
  const auto report = extract_static_features(compiler, shared_array_kernel(), configs, "sm_80", table, options);
  CHECK(report.already_known == 2);
  CHECK(report.compiled == configs.size() - 2);
  CHECK(report.nvrtc_compiles == configs.size() - 2);
  CHECK(compiler.nvrtc_invocations() == configs.size() - 2);

  // The journal now holds every configuration once, and the torn line is gone.
  const StaticFeatureTable again = read_static_feature_table(journal);
  CHECK(again.size() == configs.size());
  const auto rerun = extract_static_features(compiler, shared_array_kernel(), configs, "sm_80", table, options);
  CHECK(rerun.nvrtc_compiles == 0);
  CHECK(rerun.compiled == 0);
}

TEST_CASE("static features: stored rows are reproduced from a clean build", "[runtime][features]") {
  // data/features/ was made by scripts/features; compiling some configurations of each table
  // again, as the script does, gives the same rows (the same NVRTC: each table names its version).
  struct Stored {
    const char* table;
    const char* t1;
    const char* source;  // relative to the hub's kernels/, when not the T1's KernelFile
  };
  const std::vector<Stored> stored_tables = {
      {"pnpoly_sm_86.csv.gz", "pnpoly", nullptr},
      {"pnpoly_sm_75.csv.gz", "pnpoly", nullptr},
      {"dedispersion_milo_sm_80.csv.gz", "dedispersion_milo", "dedisp_milo/dedispersion.cu"},
  };
  const auto kernels = test::data_dir() / "benchmark_hub" / "kernels";
  for (const auto& s : stored_tables) {
    INFO("data/features/" << s.table);
    const StaticFeatureTable stored = read_static_feature_table((test::source_dir() / "data" / "features" / s.table).string());
    REQUIRE(stored.compiler == "NVRTC " + NvrtcCompiler::nvrtc_version());
    T1File t1 = read_t1(test::t1_file(s.t1).string());
    CompilerOptions options;
    if (s.source) {
      std::ifstream in(kernels / s.source);
      t1.kernel.source.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      REQUIRE_FALSE(t1.kernel.source.empty());
      options.extra_options.push_back("-I" + (kernels / s.source).parent_path().string());
    }
    std::vector<Config> sample;
    for (std::size_t i = 0; i < stored.size(); i += std::max<std::size_t>(1, stored.size() / 4))
      sample.push_back(stored.config_of(stored.rows()[i]));
    StaticFeatureTable fresh = stored.empty_copy();
    NvrtcCompiler compiler(options);
    (void)extract_static_features(compiler, t1.kernel, sample, stored.architecture, fresh);
    for (const auto& c : sample) {
      INFO(stored.kernel << " [" << c.to_string() << "]");
      const auto* a = stored.find(c);
      const auto* b = fresh.find(c);
      REQUIRE(a);
      REQUIRE(b);
      CHECK(a->compiled == b->compiled);
      CHECK(stored.features_of(*a) == fresh.features_of(*b));
    }
  }
}
