#pragma once
// Variation operators shared by the genetic algorithm and the surrogate-filtered search.
#include <cstdint>
#include <random>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/space/tuning_space.hpp"

namespace gpuforecast::detail::search {

using Rng = std::mt19937_64;

// Index of `config`'s value in each parameter's list (the space's parameter order).
class Indexer {
 public:
  explicit Indexer(const TuningSpace& space);
  [[nodiscard]] std::vector<std::size_t> indices(const Config& config) const;
  [[nodiscard]] Config make(const std::vector<std::size_t>& indices) const;
  [[nodiscard]] std::size_t levels(std::size_t parameter) const { return m_space->parameters()[parameter].values.size(); }
  [[nodiscard]] std::size_t size() const { return m_space->parameters().size(); }
  [[nodiscard]] const TuningSpace& space() const { return *m_space; }

 private:
  const TuningSpace* m_space;
};

// How many parameters two index vectors (Indexer::indices) differ in.
[[nodiscard]] std::size_t hamming(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b);

// Each parameter moves, with probability `rate`, to an adjacent value of its list. When
// `at_least_one`, a parameter is moved even if the dice said none.
[[nodiscard]] std::vector<std::size_t> mutate(const Indexer& ix, std::vector<std::size_t> genes, double rate,
                                              bool at_least_one, Rng& rng);
// Each parameter from either parent with probability 1/2.
[[nodiscard]] std::vector<std::size_t> uniform_crossover(const std::vector<std::size_t>& a,
                                                         const std::vector<std::size_t>& b, Rng& rng);
// A valid config near `genes`: itself if valid, else up to `attempts` mutations of it, else an
// empty optional-like result (valid == false).
struct Repaired {
  Config config;
  bool valid = false;
};
[[nodiscard]] Repaired repair(const Indexer& ix, std::vector<std::size_t> genes, std::size_t attempts, Rng& rng);

// One uniformly drawn valid config (seeded from rng).
[[nodiscard]] Config random_valid(const TuningSpace& space, Rng& rng);

}  // namespace gpuforecast::detail::search
