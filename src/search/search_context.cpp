#include "gpuforecast/search/search_context.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

SearchContext::SearchContext(TuningSpace space, Candidate prototype, std::unique_ptr<BenchmarkerConcept> benchmarker,
                             Budget budget, SearchContextOptions options)
    : m_space(std::move(space)),
      m_prototype(std::move(prototype)),
      m_benchmarker(std::move(benchmarker)),
      m_budget(budget),
      m_options(std::move(options)),
      m_start(std::chrono::steady_clock::now()) {
  m_draw = m_options.progress && isatty(fileno(stderr)) != 0;
}

SearchContext::~SearchContext() {
  if (m_draw && m_drawn_at > 0) std::fputc('\n', stderr);
}

Candidate SearchContext::candidate(const Config& config) const {
  Candidate c = m_prototype;
  c.config = config;
  return c;
}

bool SearchContext::exhausted() const noexcept { return m_budget.exhausted(m_trace.size(), m_trace.total_cost_s()); }

std::size_t SearchContext::remaining() const noexcept {
  if (exhausted()) return 0;
  if (m_budget.max_measurements == 0) return std::numeric_limits<std::size_t>::max();
  return m_budget.max_measurements - m_trace.size();
}

bool SearchContext::seen(const Config& config) const { return m_seen.count(config.key()) != 0; }

const Measurement* SearchContext::lookup(const Config& config) const {
  auto it = m_seen.find(config.key());
  return it == m_seen.end() ? nullptr : &it->second;
}

Measurement SearchContext::evaluate(const Config& config) { return evaluate(std::span<const Config>(&config, 1)).front(); }

std::vector<Measurement> SearchContext::evaluate(std::span<const Config> configs) {
  std::vector<Measurement> out(configs.size());
  std::vector<std::size_t> fresh;  // positions of configs to measure, first occurrence only
  std::unordered_map<std::string, std::size_t> first_position;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    auto key = c.key();
    if (auto it = m_seen.find(key); it != m_seen.end()) {
      out[i] = it->second;
      continue;
    }
    if (!m_space.is_valid(c)) {
      Measurement m;
      m.status = Status::invalid;
      m.reason = m_space.contains(c) ? "violates a constraint of the space" : "outside the space";
      m_seen.emplace(std::move(key), m);
      out[i] = std::move(m);
      continue;
    }
    if (first_position.emplace(std::move(key), i).second) fresh.push_back(i);
  }
  // With a seconds budget the cost is known only afterwards: measure one at a time so that at
  // most one measurement crosses the limit.
  const std::size_t chunk = m_budget.max_seconds > 0 ? 1 : fresh.size();
  std::size_t done = 0;
  while (done < fresh.size() && !exhausted()) {
    std::size_t n = std::min({chunk, fresh.size() - done, remaining()});
    measure_batch(configs, std::span<const std::size_t>(fresh).subspan(done, n), out);
    done += n;
  }
  for (; done < fresh.size(); ++done) {
    out[fresh[done]].status = Status::invalid;
    out[fresh[done]].reason = "not measured: budget exhausted";
  }
  // Duplicates inside the batch share their first occurrence's answer.
  for (std::size_t i = 0; i < configs.size(); ++i) {
    auto it = first_position.find(configs[i].key());
    if (it != first_position.end() && it->second != i) out[i] = out[it->second];
  }
  return out;
}

void SearchContext::measure_batch(std::span<const Config> configs, std::span<const std::size_t> positions,
                                  std::vector<Measurement>& out) {
  std::vector<Candidate> batch;
  batch.reserve(positions.size());
  for (auto p : positions) batch.push_back(candidate(configs[p]));
  auto measured = m_benchmarker->measure(batch);
  if (measured.size() != batch.size())
    throw error(fmt::format("benchmarker returned {} measurements for {} candidates", measured.size(), batch.size()));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  for (std::size_t j = 0; j < positions.size(); ++j) {
    const Config& config = configs[positions[j]];
    TraceEntry e;
    e.config = config;
    e.measurement = measured[j];
    e.cost_s = measured[j].cost_s;
    e.elapsed_s = elapsed;
    m_trace.add(std::move(e));
    m_observations.push_back(Observation{std::move(batch[j]), measured[j], "search"});
    m_seen.emplace(config.key(), measured[j]);
    out[positions[j]] = std::move(measured[j]);
  }
  draw_progress(exhausted());
}

void SearchContext::draw_progress(bool final) {
  if (!m_draw) return;
  const std::size_t n = m_trace.size();
  double fraction = 0;
  std::string of;
  if (m_budget.max_measurements > 0) {
    fraction = static_cast<double>(n) / static_cast<double>(m_budget.max_measurements);
    of = fmt::format("{}/{}", n, m_budget.max_measurements);
  } else if (m_budget.max_seconds > 0) {
    fraction = m_trace.total_cost_s() / m_budget.max_seconds;
    of = fmt::format("{:.0f}/{:.0f} s", m_trace.total_cost_s(), m_budget.max_seconds);
  } else {
    of = fmt::format("{}", n);
  }
  fraction = std::clamp(fraction, 0.0, 1.0);
  constexpr int width = 30;
  const int filled = static_cast<int>(fraction * width + 0.5);
  const auto* b = m_trace.best();
  std::string best = b ? fmt::format("best {:.4g} ms", b->best_ms) : "no valid result yet";
  fmt::print(stderr, "\r{}{}[{}{}] {} {}\x1b[K", m_options.label, m_options.label.empty() ? "" : " ",
             std::string(static_cast<std::size_t>(filled), '#'), std::string(static_cast<std::size_t>(width - filled), ' '),
             of, best);
  if (final) fmt::print(stderr, "\n");
  std::fflush(stderr);
  m_drawn_at = final ? 0 : n;
}

}  // namespace gpuforecast
