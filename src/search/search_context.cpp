#include "gpuforecast/search/search_context.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <limits>

#include "gpuforecast/core/error.hpp"
#include "search/progress_bar.hpp"

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
  deliver_lost_workers();
  m_ended = true;
  const SearchEnd e{m_trace, m_stop};
  for (auto& o : m_observers) o.end(e);
}
void SearchContext::report_screening(const SearchScreened& e) {
  begin_once();
  for (auto& o : m_observers) o.screened(e);
}

void SearchContext::report_forecasts(const SearchForecasted& e) {
  begin_once();
  for (auto& o : m_observers) o.forecasted(e);
}

void SearchContext::report_anomaly(const SearchAnomaly& a) {
  begin_once();
  for (auto& o : m_observers) o.anomaly(a);
}

void SearchContext::report_worker_lost(SearchWorkerLost lost) {
  std::lock_guard lock(m_lost_mutex);
  m_lost.push_back(std::move(lost));
}

void SearchContext::deliver_lost_workers() {
  std::vector<SearchWorkerLost> lost;
  {
    std::lock_guard lock(m_lost_mutex);
    lost.swap(m_lost);
  }
  for (auto& l : lost) {
    l.index = m_trace.size();
    for (auto& o : m_observers) o.worker_lost(l);
  }
}

Candidate SearchContext::candidate(const Config& config) const {
  Candidate c = m_prototype;
  c.config = config;
  if (m_options.describe) m_options.describe(c);
  return c;
}

bool SearchContext::exhausted() const noexcept {
  return m_stop || m_budget.exhausted(m_trace.size(), m_trace.total_cost_s());
}

std::size_t SearchContext::remaining() const noexcept {
  if (exhausted()) return 0;
  if (m_budget.max_measurements == 0) return std::numeric_limits<std::size_t>::max();
  const std::size_t spent = m_trace.size() + m_in_flight.size();
  return spent >= m_budget.max_measurements ? 0 : m_budget.max_measurements - spent;
}

bool SearchContext::seen(const Config& config) const {
  const auto key = config.key();
  return m_seen.count(key) != 0 || m_in_flight_keys.count(key) != 0;
}

const Measurement* SearchContext::lookup(const Config& config) const {
  auto it = m_seen.find(config.key());
  return it == m_seen.end() ? nullptr : &it->second;
}

Measurement SearchContext::measured_one(std::vector<Measurement> m) {
  if (m.size() != 1) throw error(fmt::format("benchmarker returned {} measurements for 1 candidate", m.size()));
  return std::move(m.front());
}

double SearchContext::elapsed_s() const {
  if (auto t = m_benchmarker->clock_s()) return *t;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
}

void SearchContext::record(const Config& config, Candidate candidate, Measurement measured, double elapsed,
                           Measurement& out) {
  TraceEntry e;
  e.config = config;
  e.measurement = measured;
  e.cost_s = measured.cost_s;
  e.elapsed_s = elapsed;
  m_trace.add(std::move(e));
  m_observations.push_back(Observation{std::move(candidate), measured, "search"});
  m_seen.emplace(config.key(), measured);
  out = std::move(measured);
  const SearchMeasured event{m_trace.size(), config, out, m_trace};
  for (auto& o : m_observers) m_stop = o.measured(event) || m_stop;
}

std::size_t SearchContext::workers() const { return m_benchmarker->workers(); }

std::size_t SearchContext::free_workers() const {
  const std::size_t w = workers();
  if (exhausted() || w <= m_in_flight.size()) return 0;
  return std::min(w - m_in_flight.size(), remaining());
}

std::vector<Config> SearchContext::in_flight_configs() const {
  std::vector<Config> out;
  out.reserve(m_in_flight.size());
  for (const auto& [ticket, config] : m_in_flight) out.push_back(config);
  return out;
}

bool SearchContext::in_flight(const Config& config) const { return m_in_flight_keys.count(config.key()) != 0; }

SearchContext::Submitted SearchContext::submit(const Config& config) {
  begin_once();
  auto key = config.key();
  if (m_seen.count(key) != 0 || m_in_flight_keys.count(key) != 0) return Submitted::known;
  if (!m_space.is_valid(config)) {
    Measurement m;
    m.status = Status::invalid;
    m.reason = m_space.contains(config) ? "violates a constraint of the space" : "outside the space";
    m_seen.emplace(std::move(key), std::move(m));
    return Submitted::invalid;
  }
  if (remaining() == 0) return Submitted::no_budget;
  const std::uint64_t ticket = m_benchmarker->submit(candidate(config));
  if (!m_in_flight.emplace(ticket, config).second)
    throw error(fmt::format("benchmarker gave ticket {} twice", ticket));
  m_in_flight_keys.emplace(std::move(key), ticket);
  return Submitted::started;
}

std::vector<SearchContext::Finished> SearchContext::wait_any() {
  if (m_in_flight.empty()) return {};
  auto landed = m_benchmarker->wait_any();
  if (landed.empty())
    throw error(fmt::format("benchmarker returned nothing from wait_any() with {} candidates in flight", m_in_flight.size()));
  deliver_lost_workers();  // before the results: a lost worker's candidate may be among them
  const double elapsed = elapsed_s();
  std::vector<Finished> out;
  std::vector<Config> configs;
  std::vector<Measurement> measurements;
  for (auto& l : landed) {
    auto it = m_in_flight.find(l.ticket);
    if (it == m_in_flight.end()) throw error(fmt::format("benchmarker returned unknown ticket {}", l.ticket));
    Config config = std::move(it->second);
    m_in_flight.erase(it);
    m_in_flight_keys.erase(config.key());
    Measurement m;
    record(config, candidate(config), std::move(l.measurement), elapsed, m);
    configs.push_back(config);
    measurements.push_back(m);
    out.push_back(Finished{std::move(config), std::move(m)});
  }
  const SearchRound round{++m_rounds, configs, measurements, m_trace};
  for (auto& o : m_observers) m_stop = o.round(round) || m_stop;
  return out;
}

void SearchContext::wait_all() {
  while (!m_in_flight.empty()) (void)wait_any();
}

Measurement SearchContext::evaluate(const Config& config) { return evaluate(std::span<const Config>(&config, 1)).front(); }

std::vector<Measurement> SearchContext::evaluate(std::span<const Config> configs) {
  if (!m_in_flight.empty())
    throw error(fmt::format("SearchContext::evaluate: {} submitted candidates are still in flight (wait_all() first)",
                            m_in_flight.size()));
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
  deliver_lost_workers();
  const double elapsed = elapsed_s();
  for (std::size_t j = 0; j < positions.size(); ++j)
    record(configs[positions[j]], std::move(batch[j]), std::move(measured[j]), elapsed, out[positions[j]]);
}

}  // namespace gpuforecast
