// The CUDA benchmarker's failure paths against the fake driver (tests/runtime/fake_driver.hpp):
// no GPU needed. Real kernels on a real GPU are tests/device/.
#include "gpuforecast/runtime/cuda_benchmarker.hpp"

#include <catch2/catch.hpp>
#include <dlfcn.h>
#include <sys/resource.h>

#include <map>
#include <memory>

#include "fake_driver.hpp"
#include "gpuforecast/core/error.hpp"
#include "runtime/cuda_devices.hpp"

using namespace gpuforecast;
namespace fake = gpuforecast::test::fake;

namespace {
const char* kSource = R"(
extern "C" __global__ void ok_kernel(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0.0f * in[i];
}
extern "C" __global__ void crash_kernel(float* out, const float* in, int n) { out[0] = in[n]; }
extern "C" __global__ void abort_kernel(float* out, const float* in, int n) { out[0] = in[n]; }
extern "C" __global__ void hang_kernel(float* out, const float* in, int n) { while (n) out[0] += in[0]; }
extern "C" __global__ void wrong_kernel(float* out, const float* in, int n) { out[0] = 1; }
extern "C" __global__ void toolarge_kernel(float* out, const float* in, int n) { out[0] = 1; }
)";

std::shared_ptr<const KernelSpec> suite_spec() {
  auto s = std::make_shared<KernelSpec>();
  s->benchmark_name = "fake_suite";
  s->kernel_name = "ok_kernel";
  s->name_expression = "{fault_variant}";
  s->source = kSource;
  s->local_size = {"block_size_x", "1", "1"};
  s->grid_div[0] = {"block_size_x"};
  s->problem_size = {1024};
  s->arguments = {
      {"out", "float", "Vector", "WriteOnly", "", "Constant", "ProblemSize[0]", 0.0, true},
      {"in", "float", "Vector", "ReadOnly", "", "Random", "ProblemSize[0]", 1.0, false},
      {"n", "int32", "Scalar", "ReadOnly", "", "Constant", "", 1024.0, false},
  };
  return s;
}

Candidate candidate(const std::string& variant, int p, const std::shared_ptr<const KernelSpec>& spec) {
  static const auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"fault_variant", "block_size_x", "salt"});
  static const auto device = [] {
    auto d = std::make_shared<Device>();
    d->name = "H200";
    d->compute_capability_major = 9;
    return d;
  }();
  Candidate c;
  c.kernel = "fake_suite";
  c.spec = spec;
  c.device = device;
  c.config = Config(names, {Value(variant), Value(128), Value(p)});
  return c;
}

CudaBenchmarkerOptions fast_options(bool isolate) {
  CudaBenchmarkerOptions o;
  o.isolate = isolate;
  // Only the hang kernel should reach it: a sanitizer build on a loaded 2-core machine has stalled
  // a healthy worker for more than 3 s, and once (a CI rehearsal, candidate 40 after a crash
  // replaced its worker) for more than 10 s. Waiting for the hang costs the test this long, idle.
  o.timeout_s = 30;
  o.compile_threads = 2;
  // Sample counts must not depend on how loaded the machine is (the time cap also counts warm-up runs and
  // worker start-up): a generous cap leaves the stop to the count-based criteria.
  o.stopping_params = {{"max_seconds", 60.0}};
  return o;
}

void no_core_dumps() {
  rlimit r{0, 0};
  setrlimit(RLIMIT_CORE, &r);
}
}  // namespace

TEST_CASE("without libcuda the runtime says so clearly", "[runtime][driver]") {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void* present = lib ? lib : dlopen("libcuda.so.1", RTLD_NOW);
  if (present) {
    WARN("libcuda.so.1 is present on this machine: the no-driver path is not exercised");
    return;
  }
  std::string why;
  CHECK(driver::driver(&why) == nullptr);
  CHECK_THAT(why, Catch::StartsWith("no CUDA driver found"));
  CHECK_THROWS_WITH(enumerate_cuda_devices(), Catch::StartsWith("no CUDA driver found"));
  CHECK_THROWS_WITH(CudaBenchmarker(fast_options(true)), Catch::Contains("no CUDA driver found"));
  CHECK_THROWS_WITH(CudaBenchmarker(fast_options(false)), Catch::Contains("no CUDA driver found"));
}

TEST_CASE("device records from driver attributes", "[runtime][driver]") {
  const auto devices = enumerate_cuda_devices(fake::api());
  REQUIRE(devices.size() == 2);
  const Device& d = devices[0];
  CHECK(d.name == "H200");
  CHECK(d.vendor == "NVIDIA");
  CHECK(d.architecture == "hopper");
  CHECK(d.sm_arch() == "sm_90");
  CHECK(d.sm_count == 132);
  CHECK(d.core_clock_mhz == 1980);
  CHECK(d.memory_bandwidth_gbs == Approx(3352.32));
  CHECK(d.l2_cache_mib == 4);
  CHECK(d.registers_per_sm == 65536);
  CHECK(d.shared_memory_per_sm_kib == 228);
  CHECK(d.memory_gib == 141);
  CHECK(d.peak_fp32_tflops == Approx(2.0 * 132 * 128 * 1.98e9 / 1e12));
  CHECK(std::find(d.aliases.begin(), d.aliases.end(), "NVIDIA H200") != d.aliases.end());
  CHECK(driver::describe_result(fake::api(), driver::error_illegal_address) ==
        "CUDA_ERROR_ILLEGAL_ADDRESS (fake driver error)");
  CHECK(driver::is_sticky(driver::error_illegal_address));
  CHECK_FALSE(driver::is_sticky(driver::error_launch_out_of_resources));
}

TEST_CASE("in-process: every fault is a status and the benchmarker carries on", "[runtime][benchmarker]") {
  fake::Installed installed;
  auto spec = suite_spec();
  CudaBenchmarker bench(fast_options(false));
  REQUIRE(bench.devices().size() == 2);
  auto one = fast_options(false);
  one.device_ordinals = {1};
  CudaBenchmarker single(one);
  REQUIRE(single.devices().size() == 1);
  std::vector<Candidate> cs = {candidate("ok_kernel", 0, spec),      candidate("wrong_kernel", 1, spec),
                               candidate("toolarge_kernel", 2, spec), candidate("crash_kernel", 3, spec),
                               candidate("ok_kernel", 4, spec),       candidate("missing_kernel", 5, spec)};
  Candidate nospec = cs[0];
  nospec.spec = nullptr;
  cs.push_back(nospec);
  const int resets = fake::state().context_resets;
  const auto m = single.measure(cs);
  REQUIRE(m.size() == cs.size());
  CHECK(m[0].status == Status::ok);
  CHECK(m[0].samples_ms.size() >= 9);
  CHECK(m[0].median_ms == Approx(0.25));
  CHECK_THAT(m[0].log, Catch::Contains("verified"));
  CHECK(m[0].compile_ms > 0);
  CHECK(m[0].cost_s > 0);
  CHECK(m[1].status == Status::invalid);
  CHECK_THAT(m[1].log, Catch::Contains("out["));
  CHECK(m[2].status == Status::launch_failed);
  CHECK_THAT(m[2].log, Catch::Contains("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"));
  CHECK(m[3].status == Status::runtime_failed);
  CHECK_THAT(m[3].log, Catch::Contains("ILLEGAL_ADDRESS") && Catch::Contains("context rebuilt"));
  CHECK(fake::state().context_resets == resets + 1);
  CHECK(m[4].status == Status::ok);  // after the rebuild
  CHECK(m[5].status == Status::compile_failed);
  CHECK_THAT(m[5].log, Catch::Contains("missing_kernel"));
  CHECK(m[6].status == Status::invalid);
  CHECK_THAT(m[6].log, Catch::Contains("no KernelSpec"));
  // The failure statuses carry Kernel Tuner-style reasons.
  CHECK(m[3].reason == "runtime_failed");
}

TEST_CASE("isolated workers: 100 candidates with crashes and a hang give 100 measurements",
          "[runtime][benchmarker][isolation]") {
  no_core_dumps();
  fake::Installed installed;
  auto spec = suite_spec();
  const std::map<int, std::string> faults = {
      {5, "missing_kernel"}, {10, "crash_kernel"}, {15, "wrong_kernel"},  {20, "abort_kernel"},
      {25, "toolarge_kernel"}, {30, "crash_kernel"}, {45, "crash_kernel"}, {50, "hang_kernel"},
      {55, "wrong_kernel"},  {60, "abort_kernel"}, {65, "missing_kernel"}, {70, "crash_kernel"},
      {75, "toolarge_kernel"}, {85, "abort_kernel"}, {90, "wrong_kernel"}, {95, "crash_kernel"}};
  std::vector<Candidate> cs;
  for (int i = 0; i < 100; ++i) {
    auto it = faults.find(i);
    cs.push_back(candidate(it == faults.end() ? "ok_kernel" : it->second, i, spec));
  }
  CudaBenchmarker bench(fast_options(true));  // two fake devices: two workers
  const auto m = bench.measure(cs);
  REQUIRE(m.size() == 100);
  std::map<Status, int> counts;
  for (int i = 0; i < 100; ++i) {
    INFO("candidate " << i << " " << cs[static_cast<std::size_t>(i)].config.to_string() << "\n" << m[static_cast<std::size_t>(i)].log);
    ++counts[m[static_cast<std::size_t>(i)].status];
    const std::string& v = cs[static_cast<std::size_t>(i)].config.at("fault_variant").as_string();
    const Status expected = v == "ok_kernel"         ? Status::ok
                            : v == "missing_kernel"  ? Status::compile_failed
                            : v == "wrong_kernel"    ? Status::invalid
                            : v == "toolarge_kernel" ? Status::launch_failed
                            : v == "hang_kernel"     ? Status::timeout
                                                     : Status::runtime_failed;
    CHECK(m[static_cast<std::size_t>(i)].status == expected);
    if (expected == Status::ok) {
      CHECK(m[static_cast<std::size_t>(i)].samples_ms.size() >= 9);
      // Also right after a worker was replaced: the new one runs the reference first.
      CHECK_THAT(m[static_cast<std::size_t>(i)].log, Catch::Contains("output verified"));
    }
  }
  CHECK(counts[Status::ok] == 84);
  CHECK(counts[Status::timeout] == 1);
  CHECK_THAT(m[50].log, Catch::Contains("killed"));
  CHECK_THAT(m[20].log, Catch::Contains("signal"));
  // A sticky error ends the worker (a real driver gives that process no new context).
  CHECK_THAT(m[10].log, Catch::Contains("ILLEGAL_ADDRESS") && Catch::Contains("a new one takes the next job"));
  // And the benchmarker is still usable afterwards.
  const auto again = bench.measure(std::vector<Candidate>{candidate("ok_kernel", 1000, spec)});
  CHECK(again[0].status == Status::ok);
}

TEST_CASE("bad options are refused up front", "[runtime][benchmarker]") {
  fake::Installed installed;
  auto o = fast_options(false);
  o.stopping = "nonsense";
  CHECK_THROWS_AS(CudaBenchmarker(o), invalid_argument_error);
  o = fast_options(false);
  o.device_ordinals = {7};
  CHECK_THROWS_WITH(CudaBenchmarker(o), Catch::Contains("ordinal 7"));
}

TEST_CASE("the sentinel: the reference configuration timed after every measurement, failed ones too",
          "[runtime][benchmarker][sentinel]") {
  fake::Installed installed;
  auto spec = suite_spec();
  auto o = fast_options(false);
  o.device_ordinals = {0};
  o.sentinel_repeats = 5;
  o.sentinel_warmup_repeats = 20;
  o.references["fake_suite"] = candidate("ok_kernel", 0, spec).config;
  CudaBenchmarker bench(o);
  const std::vector<Candidate> cs = {candidate("ok_kernel", 1, spec), candidate("crash_kernel", 2, spec),
                                     candidate("ok_kernel", 3, spec), candidate("missing_kernel", 4, spec)};
  const auto m = bench.measure(cs);
  REQUIRE(m.size() == cs.size());
  CHECK(m[0].status == Status::ok);
  CHECK(m[1].status == Status::runtime_failed);
  CHECK(m[3].status == Status::compile_failed);
  // The device's first sentinel is the warm-up's length, every later one the repeats asked for.
  CHECK(m[0].sentinel_ms.size() == 20);
  for (std::size_t i = 1; i < m.size(); ++i) {
    INFO("candidate " << i << " " << cs[i].config.to_string() << "\n" << m[i].log);
    CHECK(m[i].sentinel_ms.size() == 5);
    for (double s : m[i].sentinel_ms) CHECK(s == Approx(0.25));
  }
  // Off by default: no sentinel, no cost.
  auto plain = fast_options(false);
  plain.device_ordinals = {0};
  CudaBenchmarker quiet(plain);
  CHECK(quiet.measure(std::vector<Candidate>{candidate("ok_kernel", 5, spec)})[0].sentinel_ms.empty());
}
