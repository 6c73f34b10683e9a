// AnySelectivePredictor holds any SelectivePredictor with its optional hooks; search-model kinds
// are found by the name they were registered with.
#include <catch2/catch.hpp>

#include "gpuforecast/core/any_selective_predictor.hpp"
#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;

namespace {

// Defers everything until it has seen `needed` observations; then accepts everything.
struct Learner {
  std::size_t seen = 0, needed = 2;
  std::vector<Decision> decide(std::span<const Candidate> c) {
    std::vector<Decision> d(c.size());
    for (auto& x : d) x.defer = seen < needed;
    return d;
  }
  void update(std::span<const Observation> o) { seen += o.size(); }
  bool ready() const { return seen > 0; }
};

struct Plain {  // decide() only: update does nothing, and it is always ready
  std::vector<Decision> decide(std::span<const Candidate> c) { return std::vector<Decision>(c.size()); }
};

}  // namespace

TEST_CASE("AnySelectivePredictor forwards decide, and update and ready where the type has them") {
  AnySelectivePredictor learner = Learner{};
  const std::vector<Candidate> two(2);
  CHECK_FALSE(learner.ready());
  CHECK(learner.decide(two).at(0).defer);
  learner.update(std::vector<Observation>(2));
  CHECK(learner.ready());
  CHECK_FALSE(learner.decide(two).at(1).defer);

  AnySelectivePredictor plain = Plain{};
  plain.update(std::vector<Observation>(1));
  CHECK(plain.ready());
  CHECK(plain.decide(two).size() == 2);
  CHECK(AnySelectivePredictor{}.empty());
}

TEST_CASE("a search-model kind is found by the name it was registered with") {
  register_search_model_kind("test_learner", [](std::uint64_t seed) -> AnySelectivePredictor {
    return Learner{0, static_cast<std::size_t>(seed)};
  });
  const SearchModelFactory* make = find_search_model_kind("test_learner");
  REQUIRE(make != nullptr);
  AnySelectivePredictor p = (*make)(5);
  p.update(std::vector<Observation>(4));
  CHECK(p.decide(std::vector<Candidate>(1)).at(0).defer);  // 4 of the 5 its seed asked for
  CHECK(find_search_model_kind("test_unknown") == nullptr);
  CHECK_THROWS_WITH(register_search_model_kind("test_learner", [](std::uint64_t) { return AnySelectivePredictor(Plain{}); }),
                    Catch::Matchers::Contains("\"test_learner\"") && Catch::Matchers::Contains("registered already"));
  CHECK_THROWS_AS(register_search_model_kind("", [](std::uint64_t) { return AnySelectivePredictor(Plain{}); }),
                  invalid_argument_error);
  CHECK_THROWS_WITH(register_search_model_kind("test_empty", nullptr), Catch::Matchers::Contains("no factory"));
}
