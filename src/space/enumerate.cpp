#include "gpuforecast/space/enumerate.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <unordered_set>

#include "gpuforecast/core/error.hpp"
#include "space/compiled_constraints.hpp"

namespace gpuforecast {

namespace {

using Indices = std::vector<std::uint32_t>;

// Depth-first walk over value indices, first parameter slowest; a constraint is tested as soon
// as the last parameter it reads is bound, so a failing prefix skips its whole sub-tree.
// `visit(indices)` returns false to stop the walk.
template <class Visit>
void walk_valid(const TuningSpace& space, Visit&& visit) {
  const auto& params = space.parameters();
  const std::size_t n = params.size();
  if (n == 0 || space.cartesian_size() == 0) return;
  const auto& cc = compiled_constraints(space);
  if (!cc.constants_hold()) return;
  Indices idx(n, 0);
  std::vector<double> numbers(n, 0.0);
  std::vector<Value> values(n);
  const bool numeric = cc.numeric;
  auto bind = [&](std::size_t p) {
    if (numeric) numbers[p] = cc.numeric_values[p][idx[p]];
    else values[p] = params[p].values[idx[p]];
  };
  auto ok = [&](std::size_t p) {
    return cc.level_holds(p, numeric ? numbers.data() : nullptr, numeric ? nullptr : &values);
  };
  std::size_t depth = 0;
  bind(0);
  while (true) {
    if (ok(depth)) {
      if (depth + 1 == n) {
        if (!visit(static_cast<const Indices&>(idx))) return;
      } else {
        ++depth;
        idx[depth] = 0;
        bind(depth);
        continue;
      }
    }
    // Advance to the next sibling, climbing up when a level is exhausted.
    while (true) {
      if (++idx[depth] < params[depth].values.size()) {
        bind(depth);
        break;
      }
      if (depth == 0) return;
      --depth;
    }
  }
}

Config to_config(const TuningSpace& space, const Indices& idx) {
  std::vector<Value> values;
  values.reserve(idx.size());
  for (std::size_t p = 0; p < idx.size(); ++p) values.push_back(space.parameters()[p].values[idx[p]]);
  return space.make_config(std::move(values));
}

// SplitMix64: a tiny generator whose output is the same on every platform, unlike the
// distributions of <random>, so "same seed, same result" holds across standard libraries.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound), bound > 0 (Lemire's multiply-shift with rejection).
  std::uint64_t below(std::uint64_t bound) {
    __uint128_t m = static_cast<__uint128_t>(next()) * bound;
    auto low = static_cast<std::uint64_t>(m);
    if (low < bound) {
      const std::uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        m = static_cast<__uint128_t>(next()) * bound;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

 private:
  std::uint64_t m_state;
};

std::vector<std::uint32_t> indices_of(const TuningSpace& space, const Config& config) {
  if (!space.contains(config))
    throw invalid_argument_error(fmt::format("config [{}] is not in the tuning space", config.to_string()));
  std::vector<std::uint32_t> idx(config.size());
  for (std::size_t p = 0; p < config.size(); ++p) {
    const auto& vals = space.parameters()[p].values;
    idx[p] = static_cast<std::uint32_t>(std::find(vals.begin(), vals.end(), config[p]) - vals.begin());
  }
  return idx;
}

bool valid_indices(const TuningSpace& space, const Indices& idx) {
  if (space.members()) return space.is_valid(to_config(space, idx));
  const auto& cc = compiled_constraints(space);
  if (!cc.constants_hold()) return false;
  const auto& params = space.parameters();
  if (cc.numeric) {
    std::vector<double> numbers(idx.size());
    for (std::size_t p = 0; p < idx.size(); ++p) numbers[p] = cc.numeric_values[p][idx[p]];
    for (std::size_t p = 0; p < idx.size(); ++p)
      if (!cc.level_holds(p, numbers.data(), nullptr)) return false;
    return true;
  }
  std::vector<Value> values(idx.size());
  for (std::size_t p = 0; p < idx.size(); ++p) values[p] = params[p].values[idx[p]];
  for (std::size_t p = 0; p < idx.size(); ++p)
    if (!cc.level_holds(p, nullptr, &values)) return false;
  return true;
}

std::string index_key(const Indices& idx) {
  std::string key(reinterpret_cast<const char*>(idx.data()), idx.size() * sizeof(std::uint32_t));
  return key;
}

}  // namespace

std::vector<Config> enumerate_valid(const TuningSpace& space) {
  if (const auto* members = space.members()) return *members;
  std::vector<Config> out;
  walk_valid(space, [&](const Indices& idx) {
    out.push_back(to_config(space, idx));
    return true;
  });
  return out;
}

std::vector<Config> sample_valid(const TuningSpace& space, std::size_t count, std::uint64_t seed) {
  std::vector<Config> out;
  if (count == 0) return out;
  const std::uint64_t total = space.cartesian_size();
  if (total == 0) return out;
  Rng rng(seed);
  const auto& params = space.parameters();

  // A restricted space lists its members: draw from the list (the product may be far larger).
  if (const auto* members = space.members()) {
    std::vector<std::size_t> order(members->size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    const std::size_t take = std::min(count, order.size());
    for (std::size_t i = 0; i < take; ++i) {
      std::swap(order[i], order[i + static_cast<std::size_t>(rng.below(order.size() - i))]);
      out.push_back((*members)[order[i]]);
    }
    return out;
  }

  // Small spaces, or requests close to the whole space: enumerate and shuffle.
  constexpr std::uint64_t kEnumerateBelow = 1u << 16;
  auto from_enumeration = [&]() {
    std::vector<Indices> all;
    walk_valid(space, [&](const Indices& idx) {
      all.push_back(idx);
      return true;
    });
    const std::size_t take = std::min(count, all.size());
    for (std::size_t i = 0; i < take; ++i) {
      const std::size_t j = i + static_cast<std::size_t>(rng.below(all.size() - i));
      std::swap(all[i], all[j]);
      out.push_back(to_config(space, all[i]));
    }
    return out;
  };
  if (total <= kEnumerateBelow || count >= total / 4) return from_enumeration();

  // Large spaces: rejection sampling; uniform over the valid configs. If the valid fraction is
  // so small that rejection stalls, fall back to enumeration (which is then small enough).
  std::unordered_set<std::string> seen;
  Indices idx(params.size());
  const std::uint64_t max_attempts = 1000 * static_cast<std::uint64_t>(count) + 100000;
  for (std::uint64_t attempt = 0; attempt < max_attempts && out.size() < count; ++attempt) {
    for (std::size_t p = 0; p < params.size(); ++p)
      idx[p] = static_cast<std::uint32_t>(rng.below(params[p].values.size()));
    if (!valid_indices(space, idx)) continue;
    if (!seen.insert(index_key(idx)).second) continue;
    out.push_back(to_config(space, idx));
  }
  if (out.size() < count) {
    out.clear();
    rng = Rng(seed ^ 0x5DEECE66DULL);
    return from_enumeration();
  }
  return out;
}

std::vector<Config> adjacent_neighbours(const TuningSpace& space, const Config& config) {
  Indices base = indices_of(space, config);
  std::vector<Config> out;
  for (std::size_t p = 0; p < base.size(); ++p) {
    const std::uint32_t here = base[p];
    for (int step : {-1, 1}) {
      const std::int64_t j = static_cast<std::int64_t>(here) + step;
      if (j < 0 || j >= static_cast<std::int64_t>(space.parameters()[p].values.size())) continue;
      Indices idx = base;
      idx[p] = static_cast<std::uint32_t>(j);
      if (valid_indices(space, idx)) out.push_back(to_config(space, idx));
    }
  }
  return out;
}

std::vector<Config> hamming_neighbours(const TuningSpace& space, const Config& config) {
  Indices base = indices_of(space, config);
  std::vector<Config> out;
  for (std::size_t p = 0; p < base.size(); ++p) {
    for (std::uint32_t j = 0; j < space.parameters()[p].values.size(); ++j) {
      if (j == base[p]) continue;
      Indices idx = base;
      idx[p] = j;
      if (valid_indices(space, idx)) out.push_back(to_config(space, idx));
    }
  }
  return out;
}

}  // namespace gpuforecast
