#include "gpuforecast/space/tuning_space.hpp"

#include <catch2/catch.hpp>

#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;

TEST_CASE("TuningSpace basics", "[tuning_space]") {
  const TuningSpace space({{"block_size_x", {16, 32, 64}}, {"tile", {1, 2}}, {"layout", {"row", "col"}}},
                          {"block_size_x * tile <= 64", "layout == 'row' or tile == 1"});
  CHECK(space.cartesian_size() == 12);
  CHECK(space.index_of("tile") == 1);
  CHECK_THROWS_AS(space.index_of("nope"), invalid_argument_error);
  CHECK(space.names()->size() == 3);

  const auto ok = space.make_config({32, 2, "row"});
  CHECK(ok.shared_names() == space.names());
  CHECK(space.contains(ok));
  CHECK(space.is_valid(ok));
  CHECK_FALSE(space.is_valid(space.make_config({64, 2, "row"})));  // 128 > 64
  CHECK_FALSE(space.is_valid(space.make_config({16, 2, "col"})));
  CHECK(space.is_valid(space.make_config({16, 1, "col"})));
  const auto outside = space.make_config({48, 1, "row"});
  CHECK_FALSE(space.contains(outside));
  CHECK_FALSE(space.is_valid(outside));
  CHECK(space.contains(space.make_config({32.0, 1, "row"})));  // 32.0 == 32, as in Python
  CHECK_THROWS_AS(space.make_config({16, 1}), invalid_argument_error);

  // A config with the same values but other parameter names is not of this space.
  const Config foreign(std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"a", "b", "c"}),
                       {Value(16), Value(1), Value("row")});
  CHECK_FALSE(space.contains(foreign));
}

TEST_CASE("TuningSpace rejects bad constraints and parameters", "[tuning_space]") {
  try {
    const TuningSpace s({{"x", {1, 2}}}, {"x < y"});
    FAIL("no error");
  } catch (const expression_error& e) {
    CHECK(e.get_column() == 5);
    CHECK(e.get_expression() == "x < y");
  }
  CHECK_THROWS_AS(TuningSpace({{"x", {1}}}, {"x <"}), expression_error);
  CHECK_THROWS_AS(TuningSpace({{"x", {1}}, {"x", {2}}}, {}), invalid_argument_error);
}

TEST_CASE("cartesian_size edge cases", "[tuning_space]") {
  CHECK(TuningSpace{}.cartesian_size() == 0);
  CHECK(TuningSpace({{"x", {}}}, {}).cartesian_size() == 0);
  std::vector<Parameter> huge;
  for (int i = 0; i < 70; ++i) huge.push_back({"p" + std::to_string(i), {0, 1}});
  CHECK(TuningSpace(huge, {}).cartesian_size() == UINT64_MAX);  // saturates
}

TEST_CASE("check_configuration against a space: lists and constraints") {
  const TuningSpace space({{"x", {1, 2, 4}}, {"y", {1, 2}}}, {"x * y <= 4"});
  CHECK_NOTHROW(check_configuration(space, Config::parse("y=2,x=2"), 0));
  CHECK_THROWS_WITH(check_configuration(space, Config::parse("x=3,y=1"), 0),
                    Catch::Matchers::Contains("x=3 is not among the values of x [1, 2, 4]"));
  CHECK_THROWS_WITH(check_configuration(space, Config::parse("x=4,y=2"), 0),
                    Catch::Matchers::Contains("breaks the constraint \"x * y <= 4\""));
  CHECK(why_outside(space, space.make_config({2, 2})).empty());
}
