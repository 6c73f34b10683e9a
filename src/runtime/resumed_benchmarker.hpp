#pragma once
// A back end around any benchmarker that continues a killed (or finished) run from the cache it
// left behind, as Kernel Tuner does: the configurations found in the cache are served from it
// without measuring again, and still count as measurements of the run (search/resume.hpp reads
// and checks that cache).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// The measurements of a cache file, by configuration.
class StoredMeasurements {
 public:
  explicit StoredMeasurements(const CacheFile& file);
  [[nodiscard]] const Measurement* find(const Config& config) const;
  [[nodiscard]] std::size_t size() const noexcept { return m_by_key.size(); }

 private:
  std::unordered_map<std::string, Measurement> m_by_key;
};

// A Benchmarker that serves what `earlier` holds and measures the rest with `inner`. When the
// inner benchmarker draws from a random stream and can move past candidates without measuring
// them (ReplayBenchmarker::advance_past), it is moved past the served ones, so that what it
// measures afterwards is what it would have measured in an uninterrupted run. When the inner
// benchmarker is an AsyncBenchmarker (a farm), so is this: served candidates land at once.
template <Benchmarker B>
class ResumedBenchmarker {
 public:
  ResumedBenchmarker(B inner, const CacheFile& earlier)
      : m_inner(std::move(inner)), m_stored(std::make_shared<const StoredMeasurements>(earlier)) {}

  [[nodiscard]] std::vector<Measurement> measure(std::span<const Candidate> candidates) {
    std::vector<Measurement> out(candidates.size());
    std::size_t i = 0;
    while (i < candidates.size()) {
      // A run of served candidates, or of candidates to measure, in the order given.
      const bool served = m_stored->find(candidates[i].config) != nullptr;
      std::size_t j = i + 1;
      while (j < candidates.size() && (m_stored->find(candidates[j].config) != nullptr) == served) ++j;
      const auto part = candidates.subspan(i, j - i);
      if (served) {
        if constexpr (requires(B& b) { b.advance_past(part); }) m_inner.advance_past(part);
        for (std::size_t k = i; k < j; ++k) out[k] = *m_stored->find(candidates[k].config);
        *m_served += part.size();
      } else {
        auto measured = m_inner.measure(part);
        if (measured.size() != part.size()) throw error("resumed benchmarker: the inner benchmarker answered a different count");
        for (std::size_t k = i; k < j; ++k) out[k] = std::move(measured[k - i]);
      }
      i = j;
    }
    return out;
  }

  [[nodiscard]] std::size_t workers() const
    requires AsyncBenchmarker<B>
  {
    return m_inner.workers();
  }
  [[nodiscard]] std::uint64_t submit(const Candidate& candidate)
    requires AsyncBenchmarker<B>
  {
    const std::uint64_t ticket = m_next_ticket++;
    if (const Measurement* stored = m_stored->find(candidate.config)) {
      m_served_landed.push_back(Landed{ticket, *stored});
      ++*m_served;
    } else {
      m_inner_ticket.emplace(m_inner.submit(candidate), ticket);
    }
    return ticket;
  }
  [[nodiscard]] std::vector<Landed> wait_any()
    requires AsyncBenchmarker<B>
  {
    if (!m_served_landed.empty()) return std::exchange(m_served_landed, {});
    auto landed = m_inner.wait_any();
    for (auto& l : landed) {
      const auto it = m_inner_ticket.find(l.ticket);
      if (it == m_inner_ticket.end()) throw error("resumed benchmarker: the inner benchmarker returned an unknown ticket");
      l.ticket = it->second;
      m_inner_ticket.erase(it);
    }
    return landed;
  }

  // Answered from the cache so far. Copies share the count: pass one into a SearchContext and
  // read the count from the original.
  [[nodiscard]] std::size_t served() const noexcept { return *m_served; }
  [[nodiscard]] B& inner() noexcept { return m_inner; }

 private:
  B m_inner;
  std::shared_ptr<const StoredMeasurements> m_stored;
  std::shared_ptr<std::size_t> m_served = std::make_shared<std::size_t>(0);
  std::uint64_t m_next_ticket = 0;
  std::vector<Landed> m_served_landed;
  std::unordered_map<std::uint64_t, std::uint64_t> m_inner_ticket;  // inner ticket -> ours
};

}  // namespace gpuforecast
