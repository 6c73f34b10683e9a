// NVRTC compiles without a GPU: these run on CI. Kernels with known static features, compile
// errors with their log, the cache, name expressions, architecture choice, the pool.
#include "runtime/nvrtc_compiler.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>

#include "gpuforecast/core/error.hpp"
#include "runtime/compile_pool.hpp"

using namespace gpuforecast;

namespace {
Config make(std::vector<std::string> names, std::vector<Value> values) {
  return Config(std::make_shared<const std::vector<std::string>>(std::move(names)), std::move(values));
}
KernelSpec spec_of(std::string name, std::string source) {
  KernelSpec s;
  s.benchmark_name = name;
  s.kernel_name = std::move(name);
  s.source = std::move(source);
  return s;
}
const Config kNone = make({}, {});

std::shared_ptr<NvrtcCompiler> shared_compiler() {
  static auto c = std::make_shared<NvrtcCompiler>();
  return c;
}
}  // namespace

TEST_CASE("fixed __shared__ array: static shared memory, barrier, shared loads/stores", "[runtime][nvrtc][features]") {
  const auto s = spec_of("shared_kernel", R"(
extern "C" __global__ void shared_kernel(float* a) {
  __shared__ float tile[256];
  tile[threadIdx.x] = a[threadIdx.x];
  __syncthreads();
  a[threadIdx.x] = tile[255 - threadIdx.x];
})");
  for (const char* arch : {"sm_80", "sm_90"}) {
    auto k = shared_compiler()->compile(s, kNone, arch);
    INFO(k->log);
    REQUIRE(k->ok);
    CHECK(k->is_cubin);
    CHECK(k->target == arch);
    CHECK(k->features.at("static_shared_memory_bytes") == 1024);
    CHECK(k->features.at("barriers") == 1);
    CHECK(k->features.at("spill_stores_bytes") == 0);
    CHECK(k->features.at("local_memory_bytes") == 0);
    CHECK(k->features.at("ptx_barrier") == 1);
    CHECK(k->features.at("ptx_ld_shared") == 1);
    CHECK(k->features.at("ptx_st_shared") == 1);
    CHECK(k->features.at("ptx_ld_global") == 1);
    CHECK(k->features.at("ptx_st_global") == 1);
    CHECK(k->features.at("registers") > 0);
  }
}

TEST_CASE("one FMA per thread: the instruction mix counts it", "[runtime][nvrtc][features]") {
  const auto s = spec_of("fma_kernel", R"(
extern "C" __global__ void fma_kernel(float* __restrict__ a, const float* __restrict__ b,
                                      const float* __restrict__ c, double* __restrict__ d) {
  int i = threadIdx.x;
  a[i] = fmaf(b[i], c[i], a[i]);
  d[i] = fma((double)b[i], 2.0, d[i]);
})");
  auto k = shared_compiler()->compile(s, kNone, "sm_90");
  INFO(k->log);
  REQUIRE(k->ok);
  CHECK(k->features.at("ptx_fma_f32") == 1);
  CHECK(k->features.at("ptx_fma_f64") == 1);
  CHECK(k->features.at("ptx_ld_global") == 4);
  CHECK(k->features.at("ptx_st_global") == 2);
  CHECK(k->features.at("ptx_branch") == 0);
  CHECK(k->features.at("ptx_barrier") == 0);
  CHECK(k->features.at("static_shared_memory_bytes") == 0);
}

TEST_CASE("dynamically indexed local array: local memory, local loads/stores", "[runtime][nvrtc][features]") {
  const auto s = spec_of("local_kernel", R"(
extern "C" __global__ void local_kernel(float* a, const int* idx) {
  float buf[256];  // more than any register file: with a dynamic index it must be local memory
#pragma unroll 1
  for (int i = 0; i < 256; ++i) buf[i] = a[threadIdx.x * 256 + i];
  buf[idx[threadIdx.x] & 255] += 1.0f;
  float s = 0;
#pragma unroll 1
  for (int i = 0; i < 256; ++i) s += buf[i] * i;
  a[threadIdx.x] = s + __expf(a[1]);
  atomicAdd(a + 2, 1.0f);
})");
  auto k = shared_compiler()->compile(s, kNone, "sm_80");
  INFO(k->log);
  REQUIRE(k->ok);
  CHECK(k->features.at("local_memory_bytes") == 1024);
  CHECK(k->features.at("ptx_ld_local") >= 1);
  CHECK(k->features.at("ptx_st_local") >= 1);
  CHECK(k->features.at("ptx_sfu") >= 1);
  CHECK(k->features.at("ptx_atomic") == 1);
}

TEST_CASE("forced spill via maxrregcount: spill stores and loads", "[runtime][nvrtc][features]") {
  auto s = spec_of("spill_kernel", R"(
extern "C" __global__ void spill_kernel(float* out, const float* in, int n) {
  float acc[48];
#pragma unroll
  for (int j = 0; j < 48; ++j) acc[j] = in[threadIdx.x + j * 32];
  for (int it = 0; it < n; ++it) {
#pragma unroll
    for (int j = 0; j < 48; ++j) acc[j] = acc[j] * acc[(j + 7) % 48] + in[it + j];
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < 48; ++j) s += acc[j] * (j + 1);
  out[threadIdx.x] = s;
})");
  s.compiler_options = {"--maxrregcount=16"};
  auto k = shared_compiler()->compile(s, kNone, "sm_90");
  INFO(k->log);
  REQUIRE(k->ok);
  CHECK(k->features.at("registers") <= 24);  // ptxas raises 16 to its lower bound (24 on sm_90)
  CHECK(k->features.at("spill_stores_bytes") > 0);
  CHECK(k->features.at("spill_loads_bytes") > 0);
  s.compiler_options.clear();
  auto free = shared_compiler()->compile(s, kNone, "sm_90");
  REQUIRE(free->ok);
  CHECK(free->features.at("spill_stores_bytes") == 0);
  CHECK(free->features.at("registers") > 24);
}

TEST_CASE("tensor-core mma is counted", "[runtime][nvrtc][features]") {
  const auto s = spec_of("mma_kernel", R"(
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void mma_kernel(const half* a, const half* b, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
})");
  auto k = shared_compiler()->compile(s, kNone, "sm_80");
  INFO(k->log);
  REQUIRE(k->ok);
  CHECK(k->features.at("ptx_mma") >= 1);
}

TEST_CASE("compile errors give ok == false with the NVRTC log", "[runtime][nvrtc]") {
  const auto s = spec_of("broken", "extern \"C\" __global__ void broken(float* a) { a[0] = undefined_thing; }");
  auto k = shared_compiler()->compile(s, kNone, "sm_90");
  CHECK_FALSE(k->ok);
  CHECK_THAT(k->log, Catch::Contains("undefined_thing") && Catch::Contains("NVRTC_ERROR_COMPILATION"));
  auto missing = spec_of("absent", "extern \"C\" __global__ void present(float* a) {}");
  auto m = shared_compiler()->compile(missing, kNone, "sm_90");
  CHECK_FALSE(m->ok);
  CHECK_THAT(m->log, Catch::Contains("absent"));
  KernelSpec nosrc = spec_of("nosource", "");
  CHECK_THAT(shared_compiler()->compile(nosrc, kNone, "sm_90")->log, Catch::Contains("no CUDA source"));
}

TEST_CASE("parameters are #defines; the cache keys on them and skips NVRTC on a hit", "[runtime][nvrtc][cache]") {
  NvrtcCompiler compiler;
  const auto s = spec_of("define_kernel", R"(
extern "C" __global__ void define_kernel(float* a) {
#if !defined(kernel_tuner)
#error kernel_tuner not defined
#endif
  float v = 0;
#pragma unroll
  for (int i = 0; i < unroll; ++i) v = v * a[i] + 1.0f;
  a[threadIdx.x] = v * block_size_x;
})");
  const Config c4 = make({"block_size_x", "unroll"}, {128, 4});
  const Config c8 = make({"block_size_x", "unroll"}, {128, 8});
  auto k4 = compiler.compile(s, c4, "sm_90");
  INFO(k4->log);
  REQUIRE(k4->ok);
  CHECK(compiler.nvrtc_invocations() == 1);
  auto again = compiler.compile(s, c4, "sm_90");
  CHECK(again == k4);  // the same object: no NVRTC call
  CHECK(compiler.nvrtc_invocations() == 1);
  CHECK(compiler.cache().memory_hits() == 1);
  auto k8 = compiler.compile(s, c8, "sm_90");
  CHECK(compiler.nvrtc_invocations() == 2);
  CHECK(k8->key != k4->key);
  CHECK(k8->features.at("ptx_fma_f32") > k4->features.at("ptx_fma_f32"));
  (void)compiler.compile(s, c4, "sm_80");  // architecture is part of the key
  CHECK(compiler.nvrtc_invocations() == 3);
}

TEST_CASE("on-disk cache survives the compiler and is shared", "[runtime][nvrtc][cache]") {
  const auto dir = std::filesystem::temp_directory_path() / "gpuforecast_nvrtc_cache_test";
  std::filesystem::remove_all(dir);
  const auto s = spec_of("disk_kernel", "extern \"C\" __global__ void disk_kernel(float* a) { a[0] = 1; }");
  CompilerOptions o;
  o.cache_directory = dir.string();
  std::string image;
  {
    NvrtcCompiler first(o);
    auto k = first.compile(s, kNone, "sm_90");
    REQUIRE(k->ok);
    image = k->image;
    CHECK(first.nvrtc_invocations() == 1);
  }
  NvrtcCompiler second(o);
  auto k = second.compile(s, kNone, "sm_90");
  CHECK(second.nvrtc_invocations() == 0);
  CHECK(second.cache().disk_hits() == 1);
  CHECK(k->ok);
  CHECK(k->image == image);
  CHECK(k->features.count("registers") == 1);
  // A corrupted file is a miss, not a crash.
  for (const auto& f : std::filesystem::directory_iterator(dir)) std::filesystem::resize_file(f.path(), 10);
  NvrtcCompiler third(o);
  CHECK(third.compile(s, kNone, "sm_90")->ok);
  CHECK(third.nvrtc_invocations() == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("template kernels through name expressions", "[runtime][nvrtc]") {
  KernelSpec s = spec_of("scale", R"(
template <int N, typename T> __global__ void scale(T* a) { a[threadIdx.x] *= N; }
)");
  s.name_expression = "scale<{factor}, float>";
  auto k = shared_compiler()->compile(s, make({"factor"}, {3}), "sm_90");
  INFO(k->log);
  REQUIRE(k->ok);
  CHECK(k->lowered_name == "_Z5scaleILi3EfEvPT0_");
  s.name_expression = "scale<{nope}, float>";
  CHECK_THROWS_WITH(shared_compiler()->compile(s, make({"factor"}, {3}), "sm_90"), Catch::Contains("nope"));
}

TEST_CASE("architecture from the device: cubin when known, PTX when newer", "[runtime][nvrtc]") {
  const auto archs = NvrtcCompiler::supported_architectures();
  REQUIRE_FALSE(archs.empty());
  Device d;
  d.name = "test";
  d.compute_capability_major = 9;
  CHECK(NvrtcCompiler::target_for(d) == "sm_90");
  d.compute_capability_major = 42;
  const std::string newest = "compute_" + std::to_string(archs.back());
  CHECK(NvrtcCompiler::target_for(d) == newest);
  d.compute_capability_major = 3;
  CHECK_THROWS_AS(NvrtcCompiler::target_for(d), invalid_argument_error);
  d.compute_capability_major = 0;
  CHECK_THROWS_AS(NvrtcCompiler::target_for(d), invalid_argument_error);
  const auto s = spec_of("ptx_kernel", "extern \"C\" __global__ void ptx_kernel(float* a) { a[0] = 2; }");
  auto k = shared_compiler()->compile(s, kNone, newest);
  REQUIRE(k->ok);
  CHECK_FALSE(k->is_cubin);
  CHECK(k->image.find(".entry ptx_kernel") != std::string::npos);
  CHECK(k->features.count("registers") == 0);  // no ptxas ran
  CHECK(k->features.at("ptx_st_global") == 1);
}

TEST_CASE("the pool compiles ahead and gives the same results", "[runtime][nvrtc][pool]") {
  NvrtcCompiler compiler;
  auto s = std::make_shared<KernelSpec>(spec_of("pool_kernel", R"(
extern "C" __global__ void pool_kernel(float* a) { a[threadIdx.x] = a[threadIdx.x] * factor + 1; }
)"));
  CompilePool pool(compiler, 2);
  CHECK(pool.threads() == 2);
  std::vector<std::shared_future<std::shared_ptr<const CompiledKernel>>> futures;
  for (int f = 1; f <= 6; ++f) futures.push_back(pool.submit(s, make({"factor"}, {f}), "sm_90"));
  for (auto& f : futures) CHECK(f.get()->ok);
  CHECK(compiler.nvrtc_invocations() == 6);
  CHECK(compiler.compile(*s, make({"factor"}, {3}), "sm_90") == futures[2].get());
}

TEST_CASE("attach_features copies the static features into the candidate", "[runtime][nvrtc]") {
  Candidate c;
  c.kernel = "shared_kernel";
  c.spec = std::make_shared<KernelSpec>(spec_of("shared_kernel", R"(
extern "C" __global__ void shared_kernel(float* a) { __shared__ float t[32]; t[threadIdx.x] = a[0]; __syncthreads(); a[1] = t[3]; }
)"));
  auto d = std::make_shared<Device>();
  d->name = "H100";
  d->compute_capability_major = 9;
  c.device = d;
  c.config = kNone;
  REQUIRE(shared_compiler()->attach_features(c));
  CHECK(c.features.at("static_shared_memory_bytes") == 128);
  Candidate none;
  CHECK_THROWS_AS(shared_compiler()->compile(none), invalid_argument_error);
}
