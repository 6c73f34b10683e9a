#include "variation.hpp"

#include <fmt/core.h>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/space/enumerate.hpp"

namespace gpuforecast::detail::search {

Indexer::Indexer(const TuningSpace& space) : m_space(&space) {}

std::vector<std::size_t> Indexer::indices(const Config& config) const {
  const auto& params = m_space->parameters();
  std::vector<std::size_t> out(params.size(), 0);
  for (std::size_t p = 0; p < params.size(); ++p) {
    const auto& values = params[p].values;
    const Value& v = config[p];
    std::size_t i = 0;
    while (i < values.size() && !(values[i] == v)) ++i;
    if (i == values.size())
      throw invalid_argument_error(fmt::format("config [{}] is outside the space (parameter {})", config.to_string(), params[p].name));
    out[p] = i;
  }
  return out;
}

Config Indexer::make(const std::vector<std::size_t>& indices) const {
  const auto& params = m_space->parameters();
  std::vector<Value> values;
  values.reserve(params.size());
  for (std::size_t p = 0; p < params.size(); ++p) values.push_back(params[p].values[indices[p]]);
  return Config(m_space->names(), std::move(values));
}

std::size_t hamming(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
  std::size_t d = 0;
  for (std::size_t p = 0; p < a.size(); ++p) d += a[p] != b[p] ? 1 : 0;
  return d;
}

namespace {
std::size_t step(std::size_t index, std::size_t levels, Rng& rng) {
  if (levels < 2) return index;
  if (index == 0) return 1;
  if (index + 1 == levels) return index - 1;
  return std::bernoulli_distribution(0.5)(rng) ? index + 1 : index - 1;
}
}  // namespace

std::vector<std::size_t> mutate(const Indexer& ix, std::vector<std::size_t> genes, double rate, bool at_least_one,
                                Rng& rng) {
  std::bernoulli_distribution flip(rate);
  bool moved = false;
  for (std::size_t p = 0; p < genes.size(); ++p) {
    if (ix.levels(p) > 1 && flip(rng)) {
      genes[p] = step(genes[p], ix.levels(p), rng);
      moved = true;
    }
  }
  if (at_least_one && !moved) {
    std::vector<std::size_t> movable;
    for (std::size_t p = 0; p < genes.size(); ++p)
      if (ix.levels(p) > 1) movable.push_back(p);
    if (!movable.empty()) {
      auto p = movable[std::uniform_int_distribution<std::size_t>(0, movable.size() - 1)(rng)];
      genes[p] = step(genes[p], ix.levels(p), rng);
    }
  }
  return genes;
}

std::vector<std::size_t> uniform_crossover(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b, Rng& rng) {
  std::bernoulli_distribution coin(0.5);
  std::vector<std::size_t> child(a.size());
  for (std::size_t p = 0; p < a.size(); ++p) child[p] = coin(rng) ? a[p] : b[p];
  return child;
}

Repaired repair(const Indexer& ix, std::vector<std::size_t> genes, std::size_t attempts, Rng& rng) {
  Config c = ix.make(genes);
  if (ix.space().is_valid(c)) return {std::move(c), true};
  auto current = genes;
  for (std::size_t a = 0; a < attempts; ++a) {
    // Walk from the original child, a step further every few attempts, so the repair stays near.
    if (a % 4 == 0) current = genes;
    current = mutate(ix, std::move(current), 0.0, true, rng);
    Config r = ix.make(current);
    if (ix.space().is_valid(r)) return {std::move(r), true};
  }
  return {};
}

Config random_valid(const TuningSpace& space, Rng& rng) {
  auto drawn = sample_valid(space, 1, rng());
  if (drawn.empty()) throw invalid_argument_error("the tuning space has no valid configuration");
  return std::move(drawn.front());
}

}  // namespace gpuforecast::detail::search
