// On a real GPU: devices enumerate, example kernels give verified results, CUPTI and events
// agree, and a batch with crashing, hanging and oversized kernels still yields one measurement
// per candidate. Run by scripts/gpu-check.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <regex>

#include "gpuforecast/data/community_formats.hpp"
#include "gpuforecast/runtime/cuda_benchmarker.hpp"
#include "runtime/cuda_devices.hpp"
#include "gpuforecast/space/enumerate.hpp"
#include "support/data.hpp"

using namespace gpuforecast;

namespace {
CudaBenchmarkerOptions options() {
  CudaBenchmarkerOptions o;
  o.timeout_s = 5;
  o.stopping_params = {{"max_seconds", 0.5}, {"max_samples", 100}};
  o.device_ordinals = {0};
  return o;
}

std::vector<Candidate> candidates_of(const T1File& t1, const std::vector<Config>& configs, const Device& device) {
  auto spec = std::make_shared<const KernelSpec>(t1.kernel);
  auto dev = std::make_shared<const Device>(device);
  std::vector<Candidate> out;
  for (const auto& c : configs) {
    Candidate cand;
    cand.kernel = t1.kernel.benchmark_name;
    cand.config = c;
    cand.spec = spec;
    cand.device = dev;
    out.push_back(cand);
  }
  return out;
}
}  // namespace

TEST_CASE("the driver describes the GPUs", "[device]") {
  const auto devices = enumerate_cuda_devices();
  REQUIRE_FALSE(devices.empty());
  for (const auto& d : devices) {
    INFO(d.name);
    CHECK_FALSE(d.name.empty());
    CHECK(d.compute_capability_major >= 7);
    CHECK(d.sm_count > 0);
    CHECK(d.l2_cache_mib > 0);
    CHECK(d.memory_gib > 1);
  }
}

TEST_CASE("example kernels: sampled configurations agree with the reference configuration", "[device]") {
  CudaBenchmarker bench(options());
  for (const char* name : {"sgemm", "conv2d", "reduction", "transpose", "softmax"}) {
    const T1File t1 = read_t1((test::source_dir() / "examples" / "kernels" / (std::string(name) + ".json")).string());
    auto configs = sample_valid(t1.space, 6, 11);
    const auto ms = bench.measure(candidates_of(t1, configs, bench.devices().front()));
    for (std::size_t i = 0; i < ms.size(); ++i) {
      INFO(name << " [" << configs[i].to_string() << "]\n" << ms[i].log);
      CHECK(ms[i].status == Status::ok);
      CHECK_THAT(ms[i].log, Catch::Contains("output verified"));
      CHECK(ms[i].median_ms > 0);
      CHECK(ms[i].ci_low_ms <= ms[i].median_ms);
    }
  }
}

TEST_CASE("CUPTI and event timings agree within 5% for kernels of 50 us or more", "[device]") {
  auto spec = std::make_shared<KernelSpec>();
  spec->benchmark_name = spec->kernel_name = "spin";
  spec->source = R"(
extern "C" __global__ void spin(float* out, long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
  if (threadIdx.x == 0) out[blockIdx.x] = 1.0f;
})";
  spec->local_size = {"128", "1", "1"};
  spec->global_size = {"132", "1", "1"};
  spec->arguments = {{"out", "float", "Vector", "WriteOnly", "", "Constant", "132", 0.0, true},
                     {"cycles", "int64", "Scalar", "ReadOnly", "", "Constant", "", 0.0, false}};
  CudaBenchmarker bench(options());
  const std::regex median_disagreement(R"(median disagreement ([0-9.]+)%)");
  for (double cycles : {1.5e5, 1.0e6}) {  // ~75 us and ~500 us at ~2 GHz
    spec->arguments[1].fill_value = cycles;
    Candidate c;
    c.kernel = "spin";
    c.spec = spec;
    c.config = Config(std::make_shared<const std::vector<std::string>>(), {});
    const auto m = bench.measure(std::vector<Candidate>{c});
    INFO(m[0].log);
    REQUIRE(m[0].status == Status::ok);
    CHECK(m[0].median_ms >= 0.05);
    std::smatch match;
    REQUIRE(std::regex_search(m[0].log, match, median_disagreement));  // CUPTI worked
    CHECK(std::stod(match[1].str()) <= 5.0);
  }
}

TEST_CASE("100 candidates with crashes, a hang and oversized launches give 100 measurements", "[device]") {
  auto spec = std::make_shared<KernelSpec>();
  spec->benchmark_name = "faults";
  spec->kernel_name = "fault";
  spec->name_expression = "{fault_variant}";
  spec->source = R"(
extern "C" __global__ void ok_kernel(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * i;
}
extern "C" __global__ void crash_kernel(float* out, int n) {
  float* bad = reinterpret_cast<float*>(0x10);  // unmapped: illegal address, sticky
  bad[threadIdx.x] = out[0];
}
extern "C" __global__ void hang_kernel(float* out, int n) {
  volatile int spin = 1;
  while (spin) { out[0] += 1.0f; }
}
extern "C" __global__ void wrong_kernel(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 3.0f * i;
}
)";
  spec->local_size = {"block_size_x", "1", "1"};
  spec->grid_div[0] = {"block_size_x"};
  spec->problem_size = {1 << 20};
  spec->arguments = {{"out", "float", "Vector", "WriteOnly", "", "Constant", "ProblemSize[0]", 0.0, true},
                     {"n", "int32", "Scalar", "ReadOnly", "", "Constant", "", double(1 << 20), false}};
  auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"fault_variant", "block_size_x", "salt"});
  std::vector<Candidate> cs;
  for (int i = 0; i < 100; ++i) {
    std::string v = "ok_kernel";
    int block = 256;
    if (i % 17 == 5) v = "crash_kernel";
    if (i % 23 == 7) v = "wrong_kernel";
    if (i % 31 == 11) block = 2048;  // more threads than a block may have
    if (i == 50) v = "hang_kernel";
    Candidate c;
    c.kernel = "faults";
    c.spec = spec;
    c.config = Config(names, {Value(v), Value(block), Value(i)});
    cs.push_back(c);
  }
  auto o = options();
  o.timeout_s = 3;
  CudaBenchmarker bench(o);
  const auto ms = bench.measure(cs);
  REQUIRE(ms.size() == 100);
  std::map<Status, int> counts;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const std::string v = cs[i].config.at("fault_variant").as_string();
    const bool too_big = cs[i].config.at("block_size_x").as_int() > 1024;
    INFO(i << " " << cs[i].config.to_string() << "\n" << ms[i].log);
    ++counts[ms[i].status];
    if (too_big) CHECK(ms[i].status == Status::launch_failed);
    else if (v == "crash_kernel") CHECK(ms[i].status == Status::runtime_failed);
    else if (v == "hang_kernel") CHECK(ms[i].status == Status::timeout);
    else if (v == "wrong_kernel") CHECK(ms[i].status == Status::invalid);
    else {
      CHECK(ms[i].status == Status::ok);
      CHECK_THAT(ms[i].log, Catch::Contains("output verified"));  // also right after a replaced worker
    }
  }
  CHECK(counts[Status::timeout] == 1);
}

// Last on purpose: it initialises CUDA in this process, after which workers must still come
// from a clean process (the spawner) to be usable.
TEST_CASE("in-process measurement, then isolated workers in the same process", "[device]") {
  auto in_process = options();
  in_process.isolate = false;
  const T1File t1 = read_t1((test::source_dir() / "examples" / "kernels" / "transpose.json").string());
  const auto configs = sample_valid(t1.space, 2, 3);
  for (bool isolate : {false, true}) {
    auto o = options();
    o.isolate = isolate;
    CudaBenchmarker bench(o);
    const auto ms = bench.measure(candidates_of(t1, configs, bench.devices().front()));
    for (const auto& m : ms) {
      INFO((isolate ? "isolated: " : "in-process: ") << m.log);
      CHECK(m.status == Status::ok);
    }
  }
}
