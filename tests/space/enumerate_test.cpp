#include "gpuforecast/space/enumerate.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "gpuforecast/core/error.hpp"
#include "support/data.hpp"

using namespace gpuforecast;

namespace {

// Reads a T1 file's space directly (the T1 reader is tested in tests/data).
TuningSpace t1_space(const std::string& kernel) {
  std::ifstream in(test::t1_file(kernel));
  const auto doc = nlohmann::json::parse(in);
  const auto& s = doc.at("ConfigurationSpace");
  std::vector<Parameter> params;
  for (const auto& p : s.at("TuningParameters")) {
    Parameter par;
    par.name = p.at("Name").get<std::string>();
    // "Values" is a Python list literal of integers, e.g. "[1, 2, 4]".
    for (const auto& v : nlohmann::json::parse(p.at("Values").get<std::string>()))
      par.values.emplace_back(v.get<std::int64_t>());
    params.push_back(std::move(par));
  }
  std::vector<std::string> conds;
  for (const auto& c : s.at("Conditions")) conds.push_back(c.at("Expression").get<std::string>());
  return TuningSpace(std::move(params), std::move(conds));
}

TuningSpace small_space() {
  // x in 1..4, y in 1..3; x*y <= 6 and x != y
  return TuningSpace({{"x", {1, 2, 3, 4}}, {"y", {1, 2, 3}}}, {"x*y <= 6", "x != y"});
}

// The valid configs of small_space, worked out by hand:
// (1,2) (1,3) (2,1) (2,3) (3,1) (3,2) (4,1)
const std::vector<std::pair<int, int>> kSmallValid = {{1, 2}, {1, 3}, {2, 1}, {2, 3}, {3, 1}, {3, 2}, {4, 1}};

}  // namespace

TEST_CASE("enumerate_valid on a hand-checked space, in lexicographic order", "[enumerate]") {
  const auto space = small_space();
  const auto all = enumerate_valid(space);
  REQUIRE(all.size() == kSmallValid.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    CHECK(all[i][0].as_int() == kSmallValid[i].first);
    CHECK(all[i][1].as_int() == kSmallValid[i].second);
    CHECK(space.is_valid(all[i]));
  }
}

TEST_CASE("enumerate_valid sizes of the real T1 spaces match CPython", "[enumerate][data]") {
  // Counted with CPython: itertools.product over the value lists, eval() of every condition.
  // convolution_milo: 10,240 cartesian, 4,362 valid (= entries in its A100 cache file)
  // dedispersion_milo: 22,272 cartesian, 11,130 valid; convolution: 16,896 cartesian, 6,768 valid.
  struct Expected {
    const char* kernel;
    std::uint64_t cartesian;
    std::size_t valid;
  };
  for (const auto& ex : {Expected{"convolution_milo", 10240, 4362}, Expected{"dedispersion_milo", 22272, 11130},
                         Expected{"convolution", 16896, 6768}}) {
    INFO(ex.kernel);
    const auto space = t1_space(ex.kernel);
    CHECK(space.cartesian_size() == ex.cartesian);
    const auto all = enumerate_valid(space);
    CHECK(all.size() == ex.valid);
    std::set<std::string> keys;
    for (const auto& c : all) keys.insert(c.key());
    CHECK(keys.size() == all.size());
    // Pruned enumeration agrees with checking every cartesian config one by one.
    std::size_t brute = 0;
    std::vector<std::size_t> idx(space.parameters().size(), 0);
    for (std::uint64_t k = 0; k < space.cartesian_size(); ++k) {
      std::uint64_t r = k;
      std::vector<Value> values(idx.size());
      for (std::size_t p = idx.size(); p-- > 0;) {
        const auto& vals = space.parameters()[p].values;
        values[p] = vals[r % vals.size()];
        r /= vals.size();
      }
      if (space.is_valid(space.make_config(values))) ++brute;
    }
    CHECK(brute == ex.valid);
  }
}

TEST_CASE("the first convolution_milo config is the first key of the cache order", "[enumerate][data]") {
  const auto all = enumerate_valid(t1_space("convolution_milo"));
  REQUIRE(!all.empty());
  CHECK(all.front().key() == "16,1,1,1,0,0,0,1,15,15");
}

TEST_CASE("sample_valid draws distinct valid configs per seed", "[enumerate]") {
  const auto space = small_space();
  const auto a = sample_valid(space, 5, 42);
  const auto b = sample_valid(space, 5, 42);
  REQUIRE(a.size() == 5);
  CHECK(a == b);
  std::set<std::string> keys;
  for (const auto& c : a) {
    CHECK(space.is_valid(c));
    keys.insert(c.key());
  }
  CHECK(keys.size() == 5);
  CHECK(sample_valid(space, 100, 1).size() == kSmallValid.size());
  CHECK(sample_valid(space, 0, 1).empty());
  // Different seeds give different draws (7 choose 5 orderings make a collision unlikely).
  bool differs = false;
  for (std::uint64_t s = 1; s < 10 && !differs; ++s) differs = sample_valid(space, 5, s) != a;
  CHECK(differs);
}

TEST_CASE("sample_valid on a large space uses rejection and stays valid", "[enumerate]") {
  std::vector<Parameter> params;
  for (int p = 0; p < 6; ++p) {
    Parameter par{"p" + std::to_string(p), {}};
    for (int v = 0; v < 10; ++v) par.values.emplace_back(v);
    params.push_back(par);
  }
  const TuningSpace space(params, {"p0 + p1 + p2 < 20", "p3 != p4"});
  const auto s = sample_valid(space, 200, 7);
  REQUIRE(s.size() == 200);
  std::set<std::string> keys;
  for (const auto& c : s) {
    CHECK(space.is_valid(c));
    keys.insert(c.key());
  }
  CHECK(keys.size() == 200);
  CHECK(sample_valid(space, 200, 7) == s);
  // A space where almost nothing is valid: rejection gives up and enumeration finds the one.
  const TuningSpace needle(params, {"p0 == 3 and p1 == 1 and p2 == 4 and p3 == 1 and p4 == 5 and p5 == 9"});
  const auto n = sample_valid(needle, 3, 1);
  REQUIRE(n.size() == 1);
  CHECK(n[0].key() == "3,1,4,1,5,9");
}

TEST_CASE("adjacent and hamming neighbours", "[enumerate]") {
  const auto space = small_space();
  const auto c = space.make_config({2, 1});
  // adjacent: x=1 -> (1,1) invalid (x==y), x=3 -> (3,1) valid; y=2 -> (2,2) invalid
  const auto adj = adjacent_neighbours(space, c);
  REQUIRE(adj.size() == 1);
  CHECK(adj[0].key() == "3,1");
  // hamming: x in {1,3,4} -> (1,1) no, (3,1) yes, (4,1) yes; y in {2,3} -> (2,2) no, (2,3) yes
  const auto ham = hamming_neighbours(space, c);
  std::set<std::string> keys;
  for (const auto& h : ham) keys.insert(h.key());
  CHECK(keys == std::set<std::string>{"3,1", "4,1", "2,3"});
  CHECK_THROWS_AS(adjacent_neighbours(space, space.make_config({5, 1})), invalid_argument_error);
}

TEST_CASE("constant and string constraints", "[enumerate]") {
  const TuningSpace never({{"x", {1, 2}}}, {"1 > 2"});
  CHECK(enumerate_valid(never).empty());
  const TuningSpace strings({{"layout", {"row", "col"}}, {"n", {1, 2}}}, {"layout == 'row' or n == 2"});
  const auto all = enumerate_valid(strings);
  REQUIRE(all.size() == 3);
  CHECK(all[0].key() == "row,1");
  CHECK(all[2].key() == "col,2");
  CHECK(enumerate_valid(TuningSpace{}).empty());
}

TEST_CASE("a space restricted to listed configurations walks those only", "[enumerate]") {
  const auto space = small_space();
  // Listed out of order, one repeated, one violating x != y.
  const std::vector<Config> listed = {space.make_config({4, 1}), space.make_config({2, 1}), space.make_config({1, 1}),
                                      space.make_config({2, 1}), space.make_config({1, 3})};
  const TuningSpace r = space.restricted_to(listed);
  REQUIRE(r.members() != nullptr);
  CHECK(space.members() == nullptr);
  const auto all = enumerate_valid(r);
  REQUIRE(all.size() == 3);  // enumeration order, (1,1) violates the constraint
  CHECK(all[0].key() == "1,3");
  CHECK(all[1].key() == "2,1");
  CHECK(all[2].key() == "4,1");
  CHECK(r.is_valid(space.make_config({2, 1})));
  CHECK_FALSE(r.is_valid(space.make_config({3, 1})));  // valid in the product, not listed
  CHECK_FALSE(r.is_valid(space.make_config({1, 1})));
  CHECK(r.cartesian_size() == space.cartesian_size());

  const auto a = sample_valid(r, 10, 7);
  CHECK(a.size() == 3);
  CHECK(sample_valid(r, 2, 7).size() == 2);
  for (const auto& c : sample_valid(r, 2, 7)) CHECK(r.is_valid(c));
  CHECK(sample_valid(r, 2, 7)[0].key() == sample_valid(r, 2, 7)[0].key());
  // Neighbours stay inside the list: of (2,1)'s valid neighbours in the product, (3,1), (4,1)
  // and (2,3), only (4,1) is listed, and it is not adjacent.
  CHECK(adjacent_neighbours(r, space.make_config({2, 1})).empty());
  const auto ham = hamming_neighbours(r, space.make_config({2, 1}));
  REQUIRE(ham.size() == 1);
  CHECK(ham[0].key() == "4,1");

  // Restricting again keeps only what both lists hold.
  const auto again = r.restricted_to(std::vector<Config>{space.make_config({4, 1}), space.make_config({3, 1})});
  REQUIRE(enumerate_valid(again).size() == 1);
  CHECK(enumerate_valid(again)[0].key() == "4,1");

  try {
    (void)space.restricted_to(std::vector<Config>{space.make_config({9, 1})});
    FAIL("no error");
  } catch (const invalid_argument_error& e) {
    CHECK(std::string(e.what()).find("x=9") != std::string::npos);
  }
}
