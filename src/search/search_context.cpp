#include "gpuforecast/search/search_context.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <limits>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/search/progress_bar.hpp"

namespace gpuforecast {

SearchContext::SearchContext(TuningSpace space, Candidate prototype, std::unique_ptr<BenchmarkerConcept> benchmarker,
                             Budget budget, SearchContextOptions options)
    : m_space(std::move(space)),
      m_prototype(std::move(prototype)),
      m_benchmarker(std::move(benchmarker)),
      m_budget(budget),
      m_options(std::move(options)),
      m_start(std::chrono::steady_clock::now()) {
  if (m_options.progress) add_observer(ProgressBar(m_options.label));
}

SearchContext::~SearchContext() = default;

void SearchContext::begin_once() {
  if (m_begun) return;
  m_begun = true;
  const SearchBegin e{m_space, m_prototype, m_budget};
  for (auto& o : m_observers) o.begin(e);
}

void SearchContext::finish() {
  if (m_ended) return;
  begin_once();
  m_ended = true;
  const SearchEnd e{m_trace, m_stop};
  for (auto& o : m_observers) o.end(e);
}
Candidate SearchContext::candidate(const Config& config) const {
  Candidate c = m_prototype;
  c.config = config;
  return c;
}

bool SearchContext::exhausted() const noexcept {
  return m_stop || m_budget.exhausted(m_trace.size(), m_trace.total_cost_s());
}

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
  begin_once();
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
  std::size_t chunk = m_budget.max_seconds > 0 ? 1 : fresh.size();
  if (m_options.max_batch > 0) chunk = std::min(chunk, m_options.max_batch);
  std::size_t done = 0;
  while (done < fresh.size() && !exhausted()) {
    std::size_t n = std::min({chunk, fresh.size() - done, remaining()});
    measure_batch(configs, std::span<const std::size_t>(fresh).subspan(done, n), out);
    done += n;
  }
  for (; done < fresh.size(); ++done) {
    out[fresh[done]].status = Status::invalid;
    out[fresh[done]].reason = m_stop ? "not measured: the search was stopped" : "not measured: budget exhausted";
  }
  // Duplicates inside the batch share their first occurrence's answer.
  for (std::size_t i = 0; i < configs.size(); ++i) {
    auto it = first_position.find(configs[i].key());
    if (it != first_position.end() && it->second != i) out[i] = out[it->second];
  }
  const SearchRound round{++m_rounds, configs, out, m_trace};
  for (auto& o : m_observers) m_stop = o.round(round) || m_stop;
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
    const SearchMeasured event{m_trace.size(), config, out[positions[j]], m_trace};
    for (auto& o : m_observers) m_stop = o.measured(event) || m_stop;
  }
}

}  // namespace gpuforecast
