// T1 input files against the cache files: every valid cached configuration satisfies the T1
// conditions, and enumerating the T1 space gives exactly the configurations in the A100 cache.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/data/community_formats.hpp"
#include "gpuforecast/space/enumerate.hpp"
#include "data/temp_dir.hpp"
#include "support/data.hpp"

using namespace gpuforecast;

namespace {

const char* const kDevices[] = {"A100", "A4000", "A6000", "MI250X", "W6600", "W7800"};

std::set<std::string> key_set(const std::vector<Config>& configs) {
  std::set<std::string> out;
  for (const auto& c : configs) out.insert(c.key());
  return out;
}

std::string first_few(const std::set<std::string>& s) {
  std::string out;
  std::size_t n = 0;
  for (const auto& k : s) {
    if (n++ == 5) return out + " ...";
    out += (out.empty() ? "" : " ") + ("[" + k + "]");
  }
  return out;
}

}  // namespace

TEST_CASE("convolution_milo T1: space, conditions, launch geometry, arguments") {
  const T1File t = read_t1(test::t1_file("convolution_milo").string());
  CHECK(t.space.parameters().size() == 10);
  CHECK(t.space.parameters()[0].name == "block_size_x");
  CHECK(t.space.parameters()[0].values.size() == 16);
  CHECK(t.space.constraints().size() == 4);
  CHECK(t.space.constraints()[1] == "block_size_x*block_size_y<=1024");
  CHECK(t.space.cartesian_size() == 10240);
  const KernelSpec& k = t.kernel;
  CHECK(k.benchmark_name == "convolution_milo");
  CHECK(k.kernel_name == "convolution_kernel");
  CHECK(k.kernel_file == "convolution_milo.cu");
  // benchmark_hub ships the source beside the spec, and read_t1 loads it
  CHECK(k.source.find("convolution_kernel") != std::string::npos);
  CHECK(k.compiler_options == std::vector<std::string>{"-std=c++11"});
  CHECK(k.local_size == std::array<std::string, 3>{"block_size_x", "block_size_y", "1"});
  CHECK(k.global_size[0] == "(262144 // block_size_x) // tile_size_x");
  CHECK(k.grid_div[0] == std::vector<std::string>{"block_size_x", "tile_size_x"});
  CHECK(k.grid_div[2].empty());
  CHECK(k.problem_size == std::vector<std::int64_t>{4096, 4096});
  CHECK(k.shared_memory == "0");
  REQUIRE(k.arguments.size() == 3);
  CHECK(k.arguments[0].name == "output_image");
  CHECK(k.arguments[0].output);
  CHECK(k.arguments[0].size == "ProblemSize[0]*ProblemSize[1]");
  CHECK(k.arguments[1].fill_type == "Random");
  CHECK(k.arguments[1].fill_value == 1.0);
  CHECK(k.arguments[2].mem_type == "Constant");
  CHECK(!k.arguments[2].output);
}

TEST_CASE("every valid cached configuration satisfies its T1 conditions (all devices)", "[sweep]") {
  for (const char* kernel : {"convolution_milo", "dedispersion_milo"}) {
    const T1File t = read_t1(test::t1_file(kernel).string());
    for (const char* device : kDevices) {
      const CacheFile c = read_kernel_tuner_cache(test::cache_file(kernel, device).string());
      INFO(kernel << " on " << device);
      REQUIRE(*c.space.names() == *t.space.names());
      std::size_t checked = 0;
      for (const auto& e : c.entries) {
        if (!e.measurement.ok()) continue;
        const Config cfg = t.space.make_config(e.config.values());
        INFO(cfg.to_string());
        REQUIRE(t.space.is_valid(cfg));
        ++checked;
      }
      CHECK(checked > 0);
    }
  }
}

TEST_CASE("enumerating each T1 space gives exactly the configurations of its A100 cache file") {
  // Checked with Python (itertools.product + eval of the conditions) before writing this test:
  // the sets are equal for both kernels (4,362 and 11,130 configurations), and for the older
  // `convolution` space against its RTX_3090 file (6,768).
  struct Case {
    const char* kernel;
    const char* device;
    std::size_t count;
  };
  for (const Case c : {Case{"convolution_milo", "A100", 4362}, Case{"dedispersion_milo", "A100", 11130},
                       Case{"convolution", "RTX_3090", 6768}}) {
    INFO(c.kernel);
    const T1File t = read_t1(test::t1_file(c.kernel).string());
    const CacheFile cache = read_kernel_tuner_cache(test::cache_file(c.kernel, c.device).string());
    const auto enumerated = key_set(enumerate_valid(t.space));
    std::set<std::string> cached;
    for (const auto& e : cache.entries) cached.insert(e.config.key());
    std::set<std::string> only_enumerated, only_cached;
    std::set_difference(enumerated.begin(), enumerated.end(), cached.begin(), cached.end(),
                        std::inserter(only_enumerated, only_enumerated.end()));
    std::set_difference(cached.begin(), cached.end(), enumerated.begin(), enumerated.end(),
                        std::inserter(only_cached, only_cached.end()));
    INFO(only_enumerated.size() << " valid by T1 but not cached: " << first_few(only_enumerated));
    INFO(only_cached.size() << " cached but not valid by T1: " << first_few(only_cached));
    CHECK(only_enumerated.empty());
    CHECK(only_cached.empty());
    CHECK(enumerated.size() == c.count);
  }
}

TEST_CASE("T1 write-then-read round-trips") {
  test::TempDir dir;
  for (const char* kernel : {"convolution_milo", "dedispersion_milo", "convolution"}) {
    const T1File t = read_t1(test::t1_file(kernel).string());
    const std::string out = (dir.path() / (std::string(kernel) + ".json")).string();
    write_t1(t, out);
    const T1File u = read_t1(out);
    INFO(kernel);
    REQUIRE(u.space.parameters().size() == t.space.parameters().size());
    for (std::size_t i = 0; i < t.space.parameters().size(); ++i) {
      CHECK(u.space.parameters()[i].name == t.space.parameters()[i].name);
      CHECK(u.space.parameters()[i].values == t.space.parameters()[i].values);
    }
    CHECK(u.space.constraints() == t.space.constraints());
    const KernelSpec& a = t.kernel;
    const KernelSpec& b = u.kernel;
    CHECK(a.benchmark_name == b.benchmark_name);
    CHECK(a.kernel_name == b.kernel_name);
    CHECK(a.kernel_file == b.kernel_file);
    CHECK(a.compiler_options == b.compiler_options);
    CHECK(a.local_size == b.local_size);
    CHECK(a.global_size == b.global_size);
    CHECK(a.grid_div == b.grid_div);
    CHECK(a.problem_size == b.problem_size);
    CHECK(a.shared_memory == b.shared_memory);
    REQUIRE(a.arguments.size() == b.arguments.size());
    for (std::size_t i = 0; i < a.arguments.size(); ++i) {
      CHECK(a.arguments[i].name == b.arguments[i].name);
      CHECK(a.arguments[i].size == b.arguments[i].size);
      CHECK(a.arguments[i].fill_type == b.arguments[i].fill_type);
      CHECK(a.arguments[i].fill_value == b.arguments[i].fill_value);
      CHECK(a.arguments[i].mem_type == b.arguments[i].mem_type);
      CHECK(a.arguments[i].output == b.arguments[i].output);
    }
  }
}

TEST_CASE("T1 loads the kernel source when it sits beside the spec") {
  test::TempDir dir;
  const T1File t = read_t1(test::t1_file("convolution_milo").string());
  write_t1(t, (dir.path() / "convolution_milo.json").string());
  {
    std::ofstream src(dir.path() / "convolution_milo.cu");
    src << "__global__ void convolution_kernel() {}\n";
  }
  const T1File u = read_t1((dir.path() / "convolution_milo.json").string());
  CHECK(u.kernel.source == "__global__ void convolution_kernel() {}\n");
}

// The hub's pnpoly spec builds its lists in Python, as Kernel Tuner's scripts do:
// "[32 * i for i in range(1, 32)]" and "[1] + [2 * i for i in range(1, 11)]".
TEST_CASE("T1 value lists may be sums of list literals and comprehensions over range()") {
  const T1File t = read_t1(test::t1_file("pnpoly").string());
  const auto& params = t.space.parameters();
  const auto values_of = [&](const std::string& name) {
    for (const auto& p : params)
      if (p.name == name) return p.values;
    FAIL("pnpoly has no parameter " << name);
    return std::vector<Value>{};
  };
  std::vector<Value> block, tile{Value(1)};
  for (int i = 1; i < 32; ++i) block.emplace_back(32 * i);
  for (int i = 1; i < 11; ++i) tile.emplace_back(2 * i);
  CHECK(values_of("block_size_x") == block);
  CHECK(values_of("tile_size") == tile);
  // Every valid configuration the hub measured lies in that space.
  const auto cache = read_kernel_tuner_cache(test::cache_file("pnpoly", "RTX_3090").string());
  std::size_t checked = 0;
  for (const auto& e : cache.entries) {
    if (!e.measurement.ok()) continue;
    INFO("pnpoly RTX_3090 configuration " << e.config.key());
    CHECK(t.space.contains(e.config));
    ++checked;
  }
  CHECK(checked > 1000);
}

TEST_CASE("a malformed comprehension in a T1 value list names the file, the parameter and the column") {
  test::TempDir dir;
  const T1File t = read_t1(test::t1_file("pnpoly").string());
  write_t1(t, (dir.path() / "pnpoly.json").string());
  std::ifstream in(dir.path() / "pnpoly.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto with = [&](const std::string& values) {
    std::string s = text;
    const auto at = s.find("\"Values\"");
    auto end = s.find(']', at) + 1;
    if (s[end] == '"') ++end;  // written as a string holding the list
    s.replace(at, end - at, "\"Values\": \"" + values + "\"");
    const auto path = dir.path() / "bad.json";
    std::ofstream(path) << s;
    return path.string();
  };
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(read_t1(with("[32 * i for i in range(1, 32, 0)]")), Contains("bad.json") && Contains("step must not be zero"));
  CHECK_THROWS_WITH(read_t1(with("[32 * j for i in range(4)]")), Contains("TuningParameters[0].Values") && Contains("expression"));
  CHECK_THROWS_WITH(read_t1(with("[1] + ")), Contains("expected a list"));
  CHECK_THROWS_WITH(read_t1(with("[i for i in range(1.5)]")), Contains("not an integer"));
}
