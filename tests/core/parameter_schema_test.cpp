// Config::parse, KernelSchema::of and the checks on small hand-made inputs (the table of
// malformed configurations on real data is tests/api/input_check_test.cpp).
#include <catch2/catch.hpp>

#include <cmath>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/parameter_schema.hpp"

using namespace gpuforecast;

namespace {
Observation observation(const std::string& kernel, const std::string& config) {
  Observation o;
  o.candidate.kernel = kernel;
  o.candidate.config = Config::parse(config);
  return o;
}
}  // namespace

TEST_CASE("Config::parse reads what to_string writes, with integers, numbers and strings") {
  const Config c = Config::parse(" a=16, b=0.5,c=fast , d=\"7\", e=nan, f=-3");
  REQUIRE(c.size() == 6);
  CHECK(c.names() == std::vector<std::string>{"a", "b", "c", "d", "e", "f"});
  CHECK(c[0].is_int());
  CHECK(c[1].is_float());
  CHECK(c[2].as_string() == "fast");
  CHECK(c[3].as_string() == "7");
  CHECK(std::isnan(c[4].as_double()));
  CHECK(c[5].as_int() == -3);
  CHECK(Config::parse(Config::parse("x=1,y=2.5,z=abc").to_string()) == Config::parse("x=1,y=2.5,z=abc"));
  CHECK(Config::parse("").size() == 0);
  CHECK_THROWS_WITH(Config::parse("a=1,b"), Catch::Matchers::Contains("\"b\" is not NAME=VALUE"));
  CHECK_THROWS_WITH(Config::parse("a=1,=2"), Catch::Matchers::Contains("\"=2\" is not NAME=VALUE"));
}

TEST_CASE("KernelSchema::of: per kernel, the names and the sorted values seen") {
  std::vector<Observation> obs{observation("k", "x=4,y=a"), observation("k", "x=1,y=b"), observation("k", "x=4,y=a"),
                               observation("other", "z=1.5")};
  const auto schemas = KernelSchema::of(obs);
  REQUIRE(schemas.size() == 2);
  CHECK(schemas[0].kernel == "k");
  REQUIRE(schemas[0].parameters.size() == 2);
  CHECK(schemas[0].parameters[0].values == std::vector<Value>{1, 4});
  CHECK(schemas[0].parameters[1].values == std::vector<Value>{"a", "b"});
  CHECK(schemas[1].parameters[0].values == std::vector<Value>{1.5});
  // The same names in another order is another layout: no schema rather than a wrong one.
  obs.push_back(observation("k", "y=a,x=4"));
  CHECK(KernelSchema::of(obs).size() == 1);
}

TEST_CASE("check_configuration: order does not matter, and unseen values are reported") {
  const auto schema = KernelSchema::of(std::vector<Observation>{observation("k", "x=4,y=a"), observation("k", "x=8,y=b")});
  CHECK(check_configuration(schema[0], Config::parse("y=a,x=4"), 0).empty());
  CHECK(check_configuration(schema[0], Config::parse("x=6,y=c"), 0) ==
        "never seen in training: x=6 (seen 4, 8), y=c (seen a, b)");
  CHECK_THROWS_AS(check_configuration(schema[0], Config::parse("x=4,y=1"), 3), invalid_configuration_error);
  try {
    (void)check_configuration(schema[0], Config::parse("x=4"), 3);
    FAIL("no error");
  } catch (const invalid_configuration_error& e) {
    CHECK(e.get_row() == 3);
    CHECK(e.get_parameter() == "y");
    CHECK(e.get_expected() == "x, y");
    CHECK(std::string(e.what()) == "configuration 3 [x=4]: parameter y is missing; kernel k has the parameters x, y");
  }
}
