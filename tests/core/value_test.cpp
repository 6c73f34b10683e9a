#include <catch2/catch.hpp>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;

TEST_CASE("Value prints like Python's str()") {
  CHECK(Value(16).to_string() == "16");
  CHECK(Value(-3).to_string() == "-3");
  CHECK(Value(0.5).to_string() == "0.5");
  CHECK(Value(1.0).to_string() == "1.0");
  CHECK(Value("abc").to_string() == "abc");
}

TEST_CASE("Values compare numerically across int and float") {
  CHECK(Value(1) == Value(1.0));
  CHECK(Value(1) < Value(1.5));
  CHECK_FALSE(Value(1) == Value("1"));
  CHECK_THROWS_AS(Value("x").as_double(), invalid_argument_error);
  CHECK_THROWS_AS(Value(1.5).as_int(), invalid_argument_error);
}

TEST_CASE("Config key follows Kernel Tuner's cache convention") {
  auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"bx", "by", "f"});
  Config c(names, {Value(16), Value(2), Value(0.5)});
  CHECK(c.key() == "16,2,0.5");
  CHECK(c.to_string() == "bx=16, by=2, f=0.5");
  CHECK(c.at("by") == Value(2));
  CHECK_THROWS_WITH(c.at("bz"), Catch::Contains("bz"));
  CHECK_THROWS_AS(Config(names, {Value(1)}), invalid_argument_error);
}
