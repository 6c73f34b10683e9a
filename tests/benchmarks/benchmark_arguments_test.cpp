// benchmarks/common/benchmark_arguments.hpp: options applied in order, values parsed whole, and
// every mistake named by its option.
#include <catch2/catch.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "common/benchmark_arguments.hpp"
#include "gpuforecast/core/error.hpp"

using gpuforecast::invalid_argument_error;
using gpuforecast::bench::BenchmarkArguments;
using Catch::Matchers::Equals;

namespace {

struct Args {
  std::filesystem::path data = "default";
  std::size_t seeds = 5;
  double fraction = 0.1;
  std::vector<double> fractions{0.02, 0.05};
  std::vector<std::string> surrogates{"xgboost"};
  bool transfer = true;
  std::string json;
};

BenchmarkArguments table(Args& a) {
  BenchmarkArguments t("usage: bench [--seeds N]\n");
  t.text("--data", a.data)
      .number("--seeds", a.seeds)
      .number("--fraction", a.fraction)
      .number_list("--fractions", a.fractions)
      .list("--surrogates", a.surrogates)
      .flag("--quick", [&a] { a.seeds = 2; a.fractions = {0.1}; })
      .flag("--no-transfer", [&a] { a.transfer = false; })
      .text("--json", a.json);
  return t;
}

bool parse(Args& a, std::vector<const char*> words) {
  words.insert(words.begin(), "bench");
  return table(a).parse(static_cast<int>(words.size()), words.data());
}

}  // namespace

TEST_CASE("benchmark options fill their fields; unset ones keep their defaults") {
  Args a;
  REQUIRE(parse(a, {"--data", "/d", "--seeds", "3", "--fractions", "0.2,0.4", "--surrogates",
                    "ridge,ensemble(xgboost=0.7,knn=0.3)", "--no-transfer"}));
  CHECK(a.data == "/d");
  CHECK(a.seeds == 3);
  CHECK(a.fraction == 0.1);
  CHECK(a.fractions == std::vector<double>{0.2, 0.4});
  CHECK_THAT(a.surrogates, Equals(std::vector<std::string>{"ridge", "ensemble(xgboost=0.7,knn=0.3)"}));
  CHECK_FALSE(a.transfer);
  CHECK(a.json.empty());
}

TEST_CASE("benchmark options apply in the order given") {
  Args a;
  REQUIRE(parse(a, {"--seeds", "9", "--quick"}));
  CHECK(a.seeds == 2);
  Args b;
  REQUIRE(parse(b, {"--quick", "--seeds", "9"}));
  CHECK(b.seeds == 9);
  CHECK(b.fractions == std::vector<double>{0.1});
}

TEST_CASE("help stops parsing; mistakes name the option") {
  Args a;
  CHECK_FALSE(parse(a, {"--seeds", "4", "--help", "--bogus"}));
  CHECK(a.seeds == 4);
  CHECK_FALSE(parse(a, {"-h"}));
  CHECK_THROWS_MATCHES(parse(a, {"--bogus"}), invalid_argument_error, Catch::Message("unknown option --bogus"));
  CHECK_THROWS_MATCHES(parse(a, {"--seeds"}), invalid_argument_error, Catch::Message("--seeds needs a value"));
  CHECK_THROWS_MATCHES(parse(a, {"--seeds", "-1"}), invalid_argument_error,
                       Catch::Message("--seeds -1: not a valid number"));
  CHECK_THROWS_MATCHES(parse(a, {"--fractions", "0.1,abc"}), invalid_argument_error,
                       Catch::Message("--fractions abc: not a valid number"));
  CHECK_THROWS_MATCHES(parse(a, {"--fraction", "1e999"}), invalid_argument_error,
                       Catch::Message("--fraction 1e999: out of range"));
  // A switch takes no value: the next word is an option of its own.
  CHECK_THROWS_MATCHES(parse(a, {"--no-transfer", "yes"}), invalid_argument_error,
                       Catch::Message("unknown option yes"));
}
