#include "runtime/launch_geometry.hpp"

#include <catch2/catch.hpp>

#include <memory>

#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;

namespace {
Config make(std::vector<std::string> names, std::vector<Value> values) {
  return Config(std::make_shared<const std::vector<std::string>>(std::move(names)), std::move(values));
}
}  // namespace

TEST_CASE("Kernel Tuner grid semantics: ceil(problem / prod(GridDiv))", "[runtime][geometry]") {
  KernelSpec s;
  s.local_size = {"block_size_x", "block_size_y", "1"};
  s.grid_div = {std::vector<std::string>{"block_size_x", "tile_size_x"}, std::vector<std::string>{"block_size_y"}, {}};
  s.problem_size = {4096, 1000};
  s.shared_memory = "block_size_x * tile_size_x * 4";
  const Config c = make({"block_size_x", "block_size_y", "tile_size_x"}, {32, 8, 3});
  const auto g = compute_launch_geometry(s, c);
  CHECK(g.block == std::array<std::uint64_t, 3>{32, 8, 1});
  CHECK(g.grid == std::array<std::uint64_t, 3>{43, 125, 1});  // ceil(4096/96), 1000/8
  CHECK(g.shared_memory_bytes == 384);
  CHECK(g.threads_per_block() == 256);
  CHECK(g.to_string() == "grid (43,125,1) block (32,8,1) smem 384");
  // Problem size override (a candidate's own).
  const std::vector<std::int64_t> ps{96, 8};
  CHECK(compute_launch_geometry(s, c, ps).grid == std::array<std::uint64_t, 3>{1, 1, 1});
}

TEST_CASE("GlobalSize without GridDiv, CUDA and OpenCL conventions", "[runtime][geometry]") {
  KernelSpec s;
  s.local_size = {"bs", "1", "1"};
  s.global_size = {"ProblemSize[0] // bs", "2", "1"};
  s.problem_size = {1024};
  const Config c = make({"bs"}, {128});
  CHECK(compute_launch_geometry(s, c).grid == std::array<std::uint64_t, 3>{8, 2, 1});
  s.global_size_type = "OpenCL";
  s.global_size = {"ProblemSize[0]", "1", "1"};
  CHECK(compute_launch_geometry(s, c).grid == std::array<std::uint64_t, 3>{8, 1, 1});
}

TEST_CASE("bad geometry names the config", "[runtime][geometry]") {
  KernelSpec s;
  s.local_size = {"bs - 128", "1", "1"};
  const Config c = make({"bs"}, {128});
  CHECK_THROWS_WITH(compute_launch_geometry(s, c), Catch::Contains("bs=128") && Catch::Contains("LocalSize.X"));
  s.local_size = {"nope", "1", "1"};
  CHECK_THROWS_AS(compute_launch_geometry(s, c), expression_error);
  CHECK(evaluate_spec_expression("max(bs) * ProblemSize[1]", c, std::vector<std::int64_t>{3, 5}) == 640);
}
