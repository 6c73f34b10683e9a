// Random and neighbour pairs: distinct, seeded, and neighbours differ in exactly one parameter.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "calibration/candidate_pairs.hpp"
#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;

namespace {
std::vector<Config> grid(int a, int b, int c) {
  auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"x", "y", "z"});
  std::vector<Config> out;
  for (int i = 0; i < a; ++i)
    for (int j = 0; j < b; ++j)
      for (int k = 0; k < c; ++k) out.emplace_back(names, std::vector<Value>{i, j, k});
  return out;
}
std::size_t differing(const Config& a, const Config& b) {
  std::size_t d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d += a[i] == b[i] ? 0 : 1;
  return d;
}
}  // namespace

TEST_CASE("random pairs are distinct ordered pairs of distinct points, the same for the same seed") {
  const auto p = random_pairs(50, 300, 7);
  REQUIRE(p.size() == 300);
  std::set<std::pair<std::size_t, std::size_t>> seen;
  for (const auto& q : p) {
    CHECK(q.reference != q.candidate);
    CHECK(q.reference < 50);
    CHECK(q.candidate < 50);
    seen.insert({q.reference, q.candidate});
  }
  CHECK(seen.size() == 300);
  CHECK(random_pairs(50, 300, 7) == p);
  CHECK(random_pairs(50, 300, 8) != p);
  CHECK(random_pairs(4, 100, 1).size() == 12);  // all of them
  CHECK(random_pairs(1, 10, 1).empty());
}

TEST_CASE("neighbour pairs differ in exactly one parameter, and all of them are found") {
  const auto configs = grid(4, 3, 2);
  // Ordered neighbour pairs of a 4x3x2 grid: sum over parameters of (points) * (values - 1).
  const std::size_t total = 24 * 3 + 24 * 2 + 24 * 1;
  const auto all = neighbour_pairs(configs, 10000, 3);
  CHECK(all.size() == total);
  for (const auto& q : all) CHECK(differing(configs[q.reference], configs[q.candidate]) == 1);
  const auto some = neighbour_pairs(configs, 40, 3);
  CHECK(some.size() == 40);
  CHECK(std::set<std::pair<std::size_t, std::size_t>>(
            [&] {
              std::set<std::pair<std::size_t, std::size_t>> s;
              for (const auto& q : some) s.insert({q.reference, q.candidate});
              return s;
            }())
            .size() == 40);
  for (const auto& q : some) CHECK(differing(configs[q.reference], configs[q.candidate]) == 1);
  CHECK(neighbour_pairs(configs, 40, 3) == some);
}

TEST_CASE("neighbour pairs skip duplicated configs and points without neighbours") {
  auto configs = grid(2, 1, 1);
  configs.push_back(configs[0]);  // a duplicate is not a neighbour of its twin
  const auto p = neighbour_pairs(configs, 100, 0);
  for (const auto& q : p) CHECK(differing(configs[q.reference], configs[q.candidate]) == 1);
  CHECK(p.size() == 2);
  CHECK(neighbour_pairs(std::vector<Config>{}, 10, 0).empty());
}

TEST_CASE("pair kinds parse by name and bad names are named") {
  CHECK(parse_pair_kind("random") == PairKind::random);
  CHECK(parse_pair_kind("neighbour") == PairKind::neighbour);
  CHECK(parse_pair_kind("neighbor") == PairKind::neighbour);
  CHECK_THROWS_WITH(parse_pair_kind("nearby"), Catch::Matchers::Contains("\"nearby\""));
}

TEST_CASE("disjoint pairs share no point") {
  const auto configs = grid(6, 4, 3);
  for (auto kind : {PairKind::random, PairKind::neighbour}) {
    INFO(to_string(kind));
    const auto p = sample_pairs(kind, configs, 1000, 9, true);
    CHECK(p.size() <= configs.size() / 2);
    CHECK(p.size() >= configs.size() / 4);  // a maximal matching is at least half a maximum one
    std::set<std::size_t> used;
    for (const auto& q : p) {
      CHECK(used.insert(q.reference).second);
      CHECK(used.insert(q.candidate).second);
      if (kind == PairKind::neighbour) CHECK(differing(configs[q.reference], configs[q.candidate]) == 1);
    }
    CHECK(sample_pairs(kind, configs, 1000, 9, true) == p);
    CHECK(sample_pairs(kind, configs, 5, 9, true).size() == 5);
  }
}

TEST_CASE("child pairs: a measured reference, an unmeasured neighbour, each child once") {
  const auto configs = grid(5, 4, 2);
  std::vector<char> measured(configs.size(), 0);
  for (std::size_t i = 0; i < configs.size(); i += 4) measured[i] = 1;
  const auto p = child_pairs(configs, measured, 1000, 4);
  CHECK_FALSE(p.empty());
  std::set<std::size_t> children;
  for (const auto& q : p) {
    CHECK(measured[q.reference]);
    CHECK_FALSE(measured[q.candidate]);
    CHECK(differing(configs[q.reference], configs[q.candidate]) == 1);
    CHECK(children.insert(q.candidate).second);
  }
  CHECK(child_pairs(configs, measured, 1000, 4) == p);
  CHECK(child_pairs(configs, measured, 3, 4).size() == 3);
  CHECK_THROWS_WITH(child_pairs(configs, std::vector<char>(3, 0), 10, 0), Catch::Matchers::Contains("measured flags"));
  CHECK_THROWS_WITH(sample_pairs(PairKind::child, configs, 10, 0), Catch::Matchers::Contains("measured"));
  CHECK(parse_pair_kind("child") == PairKind::child);
}
