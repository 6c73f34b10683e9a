#include "calibration/candidate_pairs.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

std::string_view to_string(PairKind k) noexcept {
  switch (k) {
    case PairKind::random: return "random";
    case PairKind::neighbour: return "neighbour";
    case PairKind::child: return "child";
  }
  return "?";
}

PairKind parse_pair_kind(std::string_view s) {
  if (s == "random") return PairKind::random;
  if (s == "neighbour" || s == "neighbor") return PairKind::neighbour;
  if (s == "child") return PairKind::child;
  throw invalid_argument_error(fmt::format("unknown pair kind \"{}\" (expected random, neighbour or child)", s));
}

namespace {

std::uint64_t pair_key(std::size_t i, std::size_t j) { return (static_cast<std::uint64_t>(i) << 32) | j; }

// Draws `count` distinct pairs with `draw` (uniform over `total` pairs), or takes all of them
// from `all` when there are not more than `count`.
template <class Draw, class All>
std::vector<CandidatePair> distinct_pairs(std::size_t total, std::size_t count, std::mt19937_64& rng, Draw draw,
                                          All all) {
  std::vector<CandidatePair> out;
  if (total <= count) {
    out = all();
    std::shuffle(out.begin(), out.end(), rng);
    return out;
  }
  std::unordered_set<std::uint64_t> seen;
  out.reserve(count);
  while (out.size() < count) {  // count < total, and a rejection happens with probability < count/total
    const CandidatePair p = draw();
    if (seen.insert(pair_key(p.reference, p.candidate)).second) out.push_back(p);
  }
  return out;
}

}  // namespace

std::vector<CandidatePair> random_pairs(std::size_t n, std::size_t count, std::uint64_t seed, bool disjoint) {
  if (n >= (std::size_t{1} << 32)) throw invalid_argument_error(fmt::format("too many points for pairs: {}", n));
  std::mt19937_64 rng(seed);
  if (disjoint) {
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<CandidatePair> out;
    for (std::size_t i = 0; i + 1 < n && out.size() < count; i += 2) out.push_back({order[i], order[i + 1]});
    return out;
  }
  const std::size_t total = n < 2 ? 0 : n * (n - 1);
  return distinct_pairs(
      total, count, rng,
      [&] {
        std::uniform_int_distribution<std::size_t> pick(0, n - 1);
        const std::size_t i = pick(rng);
        std::size_t j = std::uniform_int_distribution<std::size_t>(0, n - 2)(rng);
        if (j >= i) ++j;
        return CandidatePair{i, j};
      },
      [&] {
        std::vector<CandidatePair> all;
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j < n; ++j)
            if (i != j) all.push_back({i, j});
        return all;
      });
}

std::vector<CandidatePair> neighbour_pairs(std::span<const Config> configs, std::size_t count, std::uint64_t seed,
                                           bool disjoint) {
  if (configs.size() >= (std::size_t{1} << 32))
    throw invalid_argument_error(fmt::format("too many points for pairs: {}", configs.size()));
  const std::size_t params = configs.empty() ? 0 : configs.front().size();
  for (std::size_t i = 0; i < configs.size(); ++i)
    if (configs[i].size() != params)
      throw invalid_argument_error(fmt::format("neighbour pairs: point {} has {} parameters, point 0 has {}", i,
                                               configs[i].size(), params));
  // Points that agree on every parameter but p form a group; any two of its members with
  // different values of p are neighbours through p, and through no other parameter.
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t p = 0; p < params; ++p) {
    std::unordered_map<std::string, std::size_t> group_of;
    const std::size_t first = groups.size();
    for (std::size_t i = 0; i < configs.size(); ++i) {
      std::string key;
      for (std::size_t q = 0; q < params; ++q)
        if (q != p) key += configs[i][q].to_string() + '\x1f';
      auto [it, fresh] = group_of.try_emplace(key, groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(i);
    }
    // Duplicated configs (same value of p) are not neighbours: keep one point per value.
    for (std::size_t g = first; g < groups.size(); ++g) {
      auto& members = groups[g];
      std::vector<std::size_t> kept;
      for (std::size_t i : members)
        if (std::none_of(kept.begin(), kept.end(), [&](std::size_t k) { return configs[k][p] == configs[i][p]; }))
          kept.push_back(i);
      members = std::move(kept);
    }
  }
  std::erase_if(groups, [](const auto& g) { return g.size() < 2; });
  std::vector<std::size_t> cumulative;  // ordered pairs in groups[0..g]
  std::size_t total = 0;
  for (const auto& g : groups) cumulative.push_back(total += g.size() * (g.size() - 1));
  std::mt19937_64 rng(seed);
  if (disjoint) {
    std::vector<CandidatePair> all;
    for (const auto& g : groups)
      for (std::size_t a = 0; a < g.size(); ++a)
        for (std::size_t b = a + 1; b < g.size(); ++b) all.push_back({g[a], g[b]});
    std::shuffle(all.begin(), all.end(), rng);
    std::vector<char> used(configs.size(), 0);
    std::vector<CandidatePair> out;
    for (auto p : all) {
      if (out.size() >= count) break;
      if (used[p.reference] || used[p.candidate]) continue;
      used[p.reference] = used[p.candidate] = 1;
      if (std::bernoulli_distribution(0.5)(rng)) std::swap(p.reference, p.candidate);
      out.push_back(p);
    }
    return out;
  }
  return distinct_pairs(
      total, count, rng,
      [&] {
        const std::size_t r = std::uniform_int_distribution<std::size_t>(0, total - 1)(rng);
        const auto& g = groups[static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), r) -
                                                        cumulative.begin())];
        const std::size_t a = std::uniform_int_distribution<std::size_t>(0, g.size() - 1)(rng);
        std::size_t b = std::uniform_int_distribution<std::size_t>(0, g.size() - 2)(rng);
        if (b >= a) ++b;
        return CandidatePair{g[a], g[b]};
      },
      [&] {
        std::vector<CandidatePair> all;
        for (const auto& g : groups)
          for (std::size_t a : g)
            for (std::size_t b : g)
              if (a != b) all.push_back({a, b});
        return all;
      });
}

std::vector<CandidatePair> all_child_pairs(std::span<const Config> configs, std::span<const char> measured,
                                           std::uint64_t seed) {
  if (measured.size() != configs.size())
    throw invalid_argument_error(fmt::format("child pairs: {} configs but {} measured flags", configs.size(), measured.size()));
  std::vector<CandidatePair> all;
  for (const auto& p : neighbour_pairs(configs, std::numeric_limits<std::size_t>::max(), seed))
    if (measured[p.reference] && !measured[p.candidate]) all.push_back(p);
  return all;
}

std::vector<CandidatePair> one_pair_per_child(std::span<const CandidatePair> all, std::size_t count) {
  std::size_t points = 0;
  for (const auto& p : all) points = std::max(points, p.candidate + 1);
  std::vector<char> used(points, 0);
  std::vector<CandidatePair> out;
  for (const auto& p : all) {  // all_child_pairs shuffled them
    if (out.size() >= count) break;
    if (used[p.candidate]) continue;
    used[p.candidate] = 1;
    out.push_back(p);
  }
  return out;
}

std::vector<CandidatePair> child_pairs(std::span<const Config> configs, std::span<const char> measured,
                                       std::size_t count, std::uint64_t seed) {
  return one_pair_per_child(all_child_pairs(configs, measured, seed), count);
}

std::vector<CandidatePair> sample_pairs(PairKind kind, std::span<const Config> configs, std::size_t count,
                                        std::uint64_t seed, bool disjoint) {
  if (kind == PairKind::child)
    throw invalid_argument_error("child pairs need to know which points are measured (child_pairs)");
  return kind == PairKind::random ? random_pairs(configs.size(), count, seed, disjoint)
                                  : neighbour_pairs(configs, count, seed, disjoint);
}

}  // namespace gpuforecast
