#pragma once
// The shared evaluator every strategy talks to (Kernel Tuner's CostFunc): it dedups
// configurations, checks them against the TuningSpace, asks the Benchmarker for new ones only,
// records the trace and keeps to the Budget. Strategies never learn whether the Benchmarker is
// a GPU or a replay of a dataset.
// Two ways to measure: evaluate() hands over a batch and returns its answers; submit() and
// wait_any() keep several workers busy, choosing the next candidate while others still run.
// The benchmarker may be a plain Benchmarker (one worker: submit() queues and wait_any()
// measures) or an AsyncBenchmarker (core/concepts.hpp: a farm, a simulated farm).
#include <chrono>
#include <cstddef>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/search/budget.hpp"
#include "gpuforecast/search/observer.hpp"
#include "gpuforecast/search/trace.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct SearchContextOptions {
  // Draw a progress bar on stderr; it is drawn only when stderr is a terminal.
  bool progress = false;
  std::string label;  // shown before the progress bar
  // Candidates per call to the Benchmarker (0: the whole batch the strategy hands over). 1 makes
  // each measurement land, and reach the observers, before the next one starts: what a cache
  // written as the search goes needs to lose no more than the measurement in flight.
  std::size_t max_batch = 0;
  // Adds what is known of a configuration before it runs (its static features, docs/features.md)
  // to every candidate the context makes, so that models see it in proposals and measurements
  // alike. Called from the strategy's thread.
  std::function<void(Candidate&)> describe;
};

class SearchContext {
 public:
  // `prototype` gives kernel, device, problem size and spec of every candidate; its config is
  // replaced by the configs the strategy asks for. The benchmarker is kept (moved) inside.
  // B must model Benchmarker or AsyncBenchmarker; another type is told what it lacks
  // (core/concepts.hpp). A type that models both is used asynchronously.
  template <class B>
  SearchContext(TuningSpace space, Candidate prototype, B benchmarker, Budget budget,
                SearchContextOptions options = {})
      : SearchContext(std::move(space), std::move(prototype), erase_benchmarker(std::move(benchmarker)), budget,
                      std::move(options)) {}
  ~SearchContext();
  SearchContext(const SearchContext&) = delete;
  SearchContext& operator=(const SearchContext&) = delete;

  // Observers see the events from the next one on: add them before the first evaluate().
  template <class O>
  void add_observer(O observer) {
    using T = typename detail::unwrap_observer<O>::type;
    static_assert(SearchObserver<T>,
                  "SearchContext::add_observer: the type implements none of on_begin(const SearchBegin&), "
                  "on_measured(const SearchMeasured&), on_round(const SearchRound&), on_end(const SearchEnd&), "
                  "on_screened(const SearchScreened&), on_forecasted(const SearchForecasted&), on_anomaly(const SearchAnomaly&), "
                  "on_worker_lost(const SearchWorkerLost&)");
    if constexpr (SearchObserver<T>) m_observers.emplace_back(std::move(observer));
  }
  // Tells the observers that the search has ended (once; later calls do nothing). The strategy
  // does not call it, whoever ran the strategy does. A search that ends by an exception never
  // reaches it, so its cache stays open, as a killed one's does.
  void finish();
  // A strategy that screens its proposals tells the observers how (events.hpp).
  void report_screening(const SearchScreened& event);
  // A model-ranked strategy's decisions on its proposals, before it chooses among them.
  void report_forecasts(const SearchForecasted& event);
  // Odd behaviour found while searching (an observer watching the GPU, a monitor): every
  // observer with on_anomaly sees it, in the order they were added.
  void report_anomaly(const SearchAnomaly& anomaly);
  // A worker of the benchmarker was lost. Safe from any thread (a farm's MPI thread): the
  // observers see it on the search's thread, with the next results to land or at finish().
  void report_worker_lost(SearchWorkerLost lost);

  [[nodiscard]] const TuningSpace& space() const noexcept { return m_space; }
  [[nodiscard]] const Budget& budget() const noexcept { return m_budget; }
  [[nodiscard]] const Trace& trace() const noexcept { return m_trace; }
  [[nodiscard]] const Candidate& prototype() const noexcept { return m_prototype; }
  [[nodiscard]] Candidate candidate(const Config& config) const;

  // Measures what is new and allowed, in order. A config seen before returns its earlier
  // measurement without cost; one outside the space or violating a constraint returns status
  // invalid (not measured, not counted); one left over when the budget ends returns status
  // invalid with reason "not measured: budget exhausted" and stays unseen. Throws when
  // submitted candidates are still in flight (wait for them first).
  std::vector<Measurement> evaluate(std::span<const Config> configs);
  Measurement evaluate(const Config& config);

  // Asynchronous use. workers(): measurements the benchmarker runs at once (1 for a plain
  // Benchmarker). free_workers(): workers not holding a submitted candidate, capped by the
  // measurements the budget has left after those in flight; 0 once the search is exhausted.
  [[nodiscard]] std::size_t workers() const;
  [[nodiscard]] std::size_t free_workers() const;
  [[nodiscard]] std::size_t in_flight() const noexcept { return m_in_flight.size(); }
  // Submitted and not landed, in submission order.
  [[nodiscard]] std::vector<Config> in_flight_configs() const;
  [[nodiscard]] bool in_flight(const Config& config) const;
  enum class Submitted {
    started,    // handed to the benchmarker
    known,      // measured before or in flight: nothing to do
    invalid,    // outside the space or violating a constraint: recorded invalid, not counted
    no_budget,  // the budget (with what is in flight) has no room, or the search was stopped
  };
  // Starts measuring `config` when it is new, valid and the budget has room. The benchmarker
  // queues it when every worker is busy, so check free_workers() to keep just enough in flight.
  Submitted submit(const Config& config);
  struct Finished {
    Config config;
    Measurement measurement;
  };
  // Waits until at least one submitted candidate lands and returns those that did, in the order
  // they were recorded (trace, observers: one SearchMeasured each, then one SearchRound for them
  // all). Empty when nothing is in flight.
  std::vector<Finished> wait_any();
  // wait_any() until nothing is in flight.
  void wait_all();

  // The budget is spent, or an observer asked the search to stop.
  [[nodiscard]] bool exhausted() const noexcept;
  [[nodiscard]] bool stop_requested() const noexcept { return m_stop; }
  // Measurements left under the count budget, less those in flight (SIZE_MAX when only seconds
  // are limited).
  [[nodiscard]] std::size_t remaining() const noexcept;
  // Measured, found invalid, or in flight: a strategy need not propose it again.
  [[nodiscard]] bool seen(const Config& config) const;
  // Earlier measurement of `config` (measured or found invalid), or nullptr.
  [[nodiscard]] const Measurement* lookup(const Config& config) const;
  // Observations of everything measured, in measurement order (for surrogate updates).
  [[nodiscard]] const std::vector<Observation>& observations() const noexcept { return m_observations; }
  [[nodiscard]] const TraceEntry* best() const noexcept { return m_trace.best(); }
  [[nodiscard]] std::size_t measurement_count() const noexcept { return m_trace.size(); }

 private:
  struct BenchmarkerConcept {
    virtual ~BenchmarkerConcept() = default;
    virtual std::vector<Measurement> measure(std::span<const Candidate> c) = 0;
    virtual std::size_t workers() = 0;
    virtual std::uint64_t submit(const Candidate& c) = 0;
    virtual std::vector<Landed> wait_any() = 0;
    // Seconds on the benchmarker's own clock (a simulated farm's virtual one), when it has one.
    virtual std::optional<double> clock_s() { return std::nullopt; }
  };
  // A plain Benchmarker as one worker: submit() queues, wait_any() measures the oldest.
  template <class B>
  struct BenchmarkerModel final : BenchmarkerConcept {
    explicit BenchmarkerModel(B b) : value(std::move(b)) {}
    std::vector<Measurement> measure(std::span<const Candidate> c) override { return value.measure(c); }
    std::size_t workers() override { return 1; }
    std::uint64_t submit(const Candidate& c) override {
      queued.emplace(next_ticket, c);
      return next_ticket++;
    }
    std::vector<Landed> wait_any() override {
      if (queued.empty()) return {};
      auto oldest = queued.extract(queued.begin());
      auto m = value.measure(std::span<const Candidate>(&oldest.mapped(), 1));
      return {Landed{oldest.key(), measured_one(std::move(m))}};
    }
    B value;
    std::map<std::uint64_t, Candidate> queued;
    std::uint64_t next_ticket = 0;
  };
  template <class B>
  struct AsyncBenchmarkerModel final : BenchmarkerConcept {
    explicit AsyncBenchmarkerModel(B b) : value(std::move(b)) {}
    std::vector<Measurement> measure(std::span<const Candidate> c) override {
      std::map<std::uint64_t, std::size_t> position;
      for (std::size_t i = 0; i < c.size(); ++i) position.emplace(value.submit(c[i]), i);
      std::vector<Measurement> out(c.size());
      while (!position.empty()) {
        auto landed = value.wait_any();
        if (landed.empty()) break;
        for (auto& l : landed)
          if (auto it = position.find(l.ticket); it != position.end()) {
            out[it->second] = std::move(l.measurement);
            position.erase(it);
          }
      }
      return out;
    }
    std::size_t workers() override { return static_cast<std::size_t>(value.workers()); }
    std::uint64_t submit(const Candidate& c) override { return value.submit(c); }
    std::vector<Landed> wait_any() override { return value.wait_any(); }
    std::optional<double> clock_s() override {
      if constexpr (requires(B& b) { { b.clock_s() } -> std::convertible_to<double>; }) return value.clock_s();
      else return std::nullopt;
    }
    B value;
  };
  static Measurement measured_one(std::vector<Measurement> m);
  template <class B>
  static std::unique_ptr<BenchmarkerConcept> erase_benchmarker(B b) {
    if constexpr (AsyncBenchmarker<B> && std::move_constructible<B>)
      return std::make_unique<AsyncBenchmarkerModel<B>>(std::move(b));
    else if constexpr (check_benchmarker<B>())
      return std::make_unique<BenchmarkerModel<B>>(std::move(b));
    else
      return nullptr;  // not reached: the check stops the build with its message
  }
  SearchContext(TuningSpace space, Candidate prototype, std::unique_ptr<BenchmarkerConcept> benchmarker,
                Budget budget, SearchContextOptions options);
  void measure_batch(std::span<const Config> configs, std::span<const std::size_t> positions,
                     std::vector<Measurement>& out);
  void begin_once();
  void deliver_lost_workers();
  [[nodiscard]] double elapsed_s() const;
  void record(const Config& config, Candidate candidate, Measurement measured, double elapsed, Measurement& out);

  TuningSpace m_space;
  Candidate m_prototype;
  std::unique_ptr<BenchmarkerConcept> m_benchmarker;
  Budget m_budget;
  SearchContextOptions m_options;
  Trace m_trace;
  std::vector<Observation> m_observations;
  std::unordered_map<std::string, Measurement> m_seen;  // by Config::key()
  std::map<std::uint64_t, Config> m_in_flight;         // by ticket: submission order
  std::unordered_map<std::string, std::uint64_t> m_in_flight_keys;
  std::chrono::steady_clock::time_point m_start;
  std::vector<AnyObserver> m_observers;
  std::size_t m_rounds = 0;
  std::mutex m_lost_mutex;
  std::vector<SearchWorkerLost> m_lost;  // reported, not yet delivered
  bool m_begun = false;
  bool m_ended = false;
  bool m_stop = false;
};

}  // namespace gpuforecast
