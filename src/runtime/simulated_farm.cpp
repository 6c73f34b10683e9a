#include "runtime/simulated_farm.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

struct SimulatedFarm::State {
  MeasureFunction measure;
  std::vector<double> free_at;  // per worker: virtual time it finishes what it holds
  struct Running {
    double finish = 0;
    Measurement measurement;
  };
  std::map<std::uint64_t, Running> running;  // by ticket
  std::uint64_t next_ticket = 0;
  double now = 0;
  double busy = 0;
};

SimulatedFarm::SimulatedFarm(std::size_t workers, MeasureFunction measure) : m_state(std::make_shared<State>()) {
  if (workers == 0) throw invalid_argument_error("simulated farm: workers must be at least 1");
  if (!measure) throw invalid_argument_error("simulated farm: no measure function");
  m_state->measure = std::move(measure);
  m_state->free_at.assign(workers, 0.0);
}

std::size_t SimulatedFarm::workers() const noexcept { return m_state->free_at.size(); }

std::uint64_t SimulatedFarm::submit(const Candidate& candidate) {
  State& s = *m_state;
  auto measured = s.measure(std::span<const Candidate>(&candidate, 1));
  if (measured.size() != 1)
    throw error(fmt::format("simulated farm: the benchmarker returned {} measurements for 1 candidate", measured.size()));
  // Seconds the candidate holds its worker; a negative or non-finite charge holds it for none.
  const double hold = std::isfinite(measured.front().cost_s) ? std::max(0.0, measured.front().cost_s) : 0.0;
  const auto worker = std::min_element(s.free_at.begin(), s.free_at.end());
  const double start = std::max(s.now, *worker);
  *worker = start + hold;
  s.busy += hold;
  const std::uint64_t ticket = s.next_ticket++;
  s.running.emplace(ticket, State::Running{start + hold, std::move(measured.front())});
  return ticket;
}

std::vector<Landed> SimulatedFarm::wait_any() {
  State& s = *m_state;
  if (s.running.empty()) return {};
  // The earliest finish; std::map iterates by ticket, so ties go to the earlier submission.
  auto first = s.running.begin();
  for (auto it = s.running.begin(); it != s.running.end(); ++it)
    if (it->second.finish < first->second.finish) first = it;
  s.now = std::max(s.now, first->second.finish);
  std::vector<Landed> out;
  out.push_back(Landed{first->first, std::move(first->second.measurement)});
  s.running.erase(first);
  return out;
}

double SimulatedFarm::clock_s() const noexcept { return m_state->now; }
double SimulatedFarm::busy_s() const noexcept { return m_state->busy; }

}  // namespace gpuforecast
