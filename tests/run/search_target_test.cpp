// What a search is given, built once from recorded data or from a T1 file.
#include "gpuforecast/run/search_target.hpp"

#include <catch2/catch.hpp>

#include "gpuforecast/core/error.hpp"
#include "support/data.hpp"

using namespace gpuforecast;

TEST_CASE("a search target from recorded measurements: their space, kernel, device and spec", "[run][data]") {
  const SpaceData data = load_space(test::cache_file("pnpoly", "RTX_3090").string());
  const SearchTarget target = search_target(data);
  CHECK(target.space.names() == data.space.names());
  CHECK(target.space.constraints() == data.space.constraints());
  CHECK(target.prototype.kernel == data.kernel);
  CHECK(target.prototype.problem_size == data.problem_size);
  REQUIRE(target.prototype.device);
  CHECK(target.prototype.device->name == data.device->name);
  CHECK(target.prototype.spec == data.observations.front().candidate.spec);
}

TEST_CASE("a search target from a T1 file: its constrained space and kernel, the device left to the back end",
          "[run][data]") {
  const T1File t1 = read_t1(test::t1_file("pnpoly").string());
  const SearchTarget target = search_target(t1);
  CHECK(target.space.names() == t1.space.names());
  CHECK(target.space.constraints() == t1.space.constraints());
  CHECK(target.prototype.kernel == t1.kernel.benchmark_name);
  CHECK_FALSE(target.prototype.device);
  REQUIRE(target.prototype.spec);
  CHECK_FALSE(target.prototype.spec->source.empty());

  T1File without_source = t1;
  without_source.kernel.source.clear();
  CHECK_THROWS_WITH(search_target(without_source),
                    Catch::Contains(t1.path) && Catch::Contains("KernelFile") && Catch::Contains("not found"));
}
