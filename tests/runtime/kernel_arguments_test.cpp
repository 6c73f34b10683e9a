#include "runtime/kernel_arguments.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <memory>

#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;

namespace {
Config make(std::vector<std::string> names, std::vector<Value> values) {
  return Config(std::make_shared<const std::vector<std::string>>(std::move(names)), std::move(values));
}
float f32_at(const HostArgument& a, std::size_t i) {
  float f;
  std::memcpy(&f, a.data.data() + 4 * i, 4);
  return f;
}
KernelSpec spec() {
  KernelSpec s;
  s.benchmark_name = "args";
  s.problem_size = {16, 4};
  s.arguments = {
      {"out", "float", "Vector", "WriteOnly", "", "Constant", "ProblemSize[0]*ProblemSize[1]", 0.0, true},
      {"in", "float", "Vector", "ReadOnly", "", "Random", "ProblemSize[0] + max(w) - 1", 2.0, false},
      {"filter", "float", "Vector", "ReadOnly", "Constant", "Random", "w*w", 1.0, false},
      {"n", "int32", "Scalar", "ReadOnly", "", "Constant", "", 64.0, false},
      {"h", "half", "Vector", "ReadOnly", "", "Constant", "2", 1.5, false},
  };
  return s;
}
}  // namespace

TEST_CASE("arguments are sized and filled as the spec says", "[runtime][arguments]") {
  const Config c = make({"w"}, {3});
  const auto args = make_host_arguments(spec(), c, {}, 7);
  REQUIRE(args.size() == 5);
  CHECK(args[0].count == 64);
  CHECK(args[0].output);
  CHECK(f32_at(args[0], 63) == 0.0f);
  CHECK(args[1].count == 18);
  for (std::size_t i = 0; i < 18; ++i) {
    CHECK(f32_at(args[1], i) >= 0.0f);
    CHECK(f32_at(args[1], i) < 2.0f);
  }
  CHECK(args[2].constant);
  CHECK(args[2].count == 9);
  CHECK(args[3].scalar);
  std::int32_t n;
  std::memcpy(&n, args[3].data.data(), 4);
  CHECK(n == 64);
  std::uint16_t h;
  std::memcpy(&h, args[4].data.data(), 2);
  CHECK(h == 0x3e00);  // 1.5 in IEEE half
}

TEST_CASE("random fills are reproducible by seed", "[runtime][arguments]") {
  const Config c = make({"w"}, {3});
  const auto a = make_host_arguments(spec(), c, {}, 7);
  const auto b = make_host_arguments(spec(), c, {}, 7);
  const auto d = make_host_arguments(spec(), c, {}, 8);
  CHECK(a[1].data == b[1].data);
  CHECK(a[1].data != d[1].data);
  CHECK(a[1].data != a[2].data);  // streams differ per argument
}

TEST_CASE("verification with tolerance", "[runtime][arguments]") {
  const Config c = make({"w"}, {3});
  auto ref = make_host_arguments(spec(), c, {}, 7)[1];
  auto actual = ref.data;
  CHECK(verify_output(ref, actual).ok);
  float v = f32_at(ref, 5) + 1e-7f;
  std::memcpy(actual.data() + 20, &v, 4);
  CHECK(verify_output(ref, actual, 1e-5, 0).ok);
  v = f32_at(ref, 5) + 0.5f;
  std::memcpy(actual.data() + 20, &v, 4);
  const auto r = verify_output(ref, actual);
  CHECK_FALSE(r.ok);
  CHECK(r.mismatches == 1);
  CHECK_THAT(r.message, Catch::Contains("in[5]"));
  actual.pop_back();
  CHECK_FALSE(verify_output(ref, actual).ok);
}

TEST_CASE("unsupported types and fills name the argument", "[runtime][arguments]") {
  auto s = spec();
  s.arguments[1].type = "quaternion";
  CHECK_THROWS_WITH(make_host_arguments(s, make({"w"}, {3}), {}, 0), Catch::Contains("\"in\""));
  s = spec();
  s.arguments[1].fill_type = "BinaryRaw";
  CHECK_THROWS_WITH(make_host_arguments(s, make({"w"}, {3}), {}, 0), Catch::Contains("BinaryRaw"));
}
