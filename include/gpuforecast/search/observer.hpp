#pragma once
// What a SearchContext tells its observers, in this order: one SearchBegin before the first
// measurement, a SearchMeasured for each measurement as it lands, a SearchRound each time a
// batch handed to evaluate() has been answered, and one SearchEnd when the caller calls
// SearchContext::finish(). A strategy that ranks its proposals by a model (surrogate-filtered
// search) reports the model's decisions on them as a SearchForecasted, and, with screening on,
// the screening as a SearchScreened, both before the round it chose is measured. Events refer to
// the context's own data: valid during the call only.
//
// Search observers, detected by requires-expressions as ensmallen detects its callbacks: a type
// implements any subset of
//     on_begin(const SearchBegin&)        on_measured(const SearchMeasured&)
//     on_round(const SearchRound&)        on_end(const SearchEnd&)
//     on_screened(const SearchScreened&) on_forecasted(const SearchForecasted&)
//     on_anomaly(const SearchAnomaly&)   on_worker_lost(const SearchWorkerLost&)
// on_measured and on_round may return bool: `true` asks the search to stop (the context then
// reports exhausted(), and the strategy ends as it does at the end of its budget).
// SearchContext::add_observer(obs) keeps a copy; add_observer(std::ref(obs)) keeps a reference.
#include <concepts>
#include <cstddef>
#include <limits>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/core/measurement.hpp"
#include "gpuforecast/search/budget.hpp"
#include "gpuforecast/search/trace.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/stats/screening.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct SearchBegin {
  const TuningSpace& space;
  const Candidate& prototype;  // kernel, device, problem size of every candidate
  Budget budget;
};

struct SearchMeasured {
  std::size_t index;  // 1-based measurement count, as TraceEntry::index
  const Config& config;
  const Measurement& measurement;
  const Trace& trace;  // everything measured so far, this measurement last
};

struct SearchRound {
  std::size_t round;                          // 1-based count of evaluate() calls
  std::span<const Config> configs;            // as the strategy handed them over
  std::span<const Measurement> measurements;  // the answers, in the same order
  const Trace& trace;
};

struct SearchForecasted {
  std::span<const Config> proposed;     // every candidate the model decided on this round
  std::span<const Decision> decisions;  // one per proposed candidate, in the same order
  double seconds = 0;                   // wall time the model took to decide them
  // The model's forecast of the incumbent (the best measured), made with the candidates' so
  // that screening can set them against it; NaN before anything was measured.
  double incumbent_forecast_ms = std::numeric_limits<double>::quiet_NaN();
};

struct SearchScreened {
  double incumbent_ms;                // the best measured when the round was screened
  const ScreeningRule& rule;          // as certified for this round
  std::span<const Config> proposed;   // every candidate of the round
  std::span<const Decision> decisions;  // the model's, one per proposed candidate
  const std::vector<bool>& skipped;   // the rule's verdict, one per proposed candidate
};

struct SearchEnd {
  const Trace& trace;
  bool stopped = false;  // an observer asked the search to stop
};

// Odd GPU behaviour found while the search runs, reported beside the measurement it was raised
// at, never in place of it (SearchContext::report_anomaly): a measurement far slower than its
// forecast, a slower or drifting device (search/anomaly_monitor.hpp), or what the GPU itself
// says (NVML: throttling, temperature, ECC, Xid).
struct SearchAnomaly {
  std::size_t index = 0;  // the measurement (1-based, as the trace) it was raised at
  std::string kind;       // "slow_outlier", "slow_device", "step_drift", "repeat_rise"; "gpu_*" from NVML
  Config config;
  double statistic = 0;   // the log ratio, the sentinel's log, the CUSUM threshold or the repeats' rise
  double p_value = 1;     // where the test has one (1 otherwise)
  std::string detail;     // one sentence
};

// A worker that measured for the search was lost (a farm's rank that stopped answering): which,
// what it held and where that went. Raised on the benchmarker's thread and delivered on the
// search's (SearchContext::report_worker_lost), with the next result or at the end.
struct SearchWorkerLost {
  std::size_t index = 0;       // measurements recorded when it was delivered
  int worker = 0;              // the farm's rank
  std::string device;          // what the worker said it measures on
  std::string reason;          // "no heartbeat for 10 s while measuring"
  std::optional<Config> held;  // the candidate it was measuring, if any
  HeldWork went = HeldWork::none;  // held's fate: requeued (another worker measures it), failed (lost
                                   // on every attempt)
};


template <class O>
concept ObservesBegin = requires(O& o, const SearchBegin& e) { o.on_begin(e); };
template <class O>
concept ObservesMeasured = requires(O& o, const SearchMeasured& e) { o.on_measured(e); };
template <class O>
concept ObservesRound = requires(O& o, const SearchRound& e) { o.on_round(e); };
template <class O>
concept ObservesEnd = requires(O& o, const SearchEnd& e) { o.on_end(e); };

template <class O>
concept ObservesScreened = requires(O& o, const SearchScreened& e) { o.on_screened(e); };
template <class O>
concept ObservesForecasted = requires(O& o, const SearchForecasted& e) { o.on_forecasted(e); };
template <class O>
concept ObservesAnomaly = requires(O& o, const SearchAnomaly& e) { o.on_anomaly(e); };
template <class O>
concept ObservesWorkerLost = requires(O& o, const SearchWorkerLost& e) { o.on_worker_lost(e); };
template <class O>
concept SearchObserver = ObservesBegin<O> || ObservesMeasured<O> || ObservesRound<O> || ObservesEnd<O> ||
                         ObservesScreened<O> || ObservesForecasted<O> || ObservesAnomaly<O> || ObservesWorkerLost<O>;

namespace detail {

template <class O>
struct unwrap_observer {
  using type = O;
  static O& get(O& o) noexcept { return o; }
};
template <class T>
struct unwrap_observer<std::reference_wrapper<T>> {
  using type = T;
  static T& get(std::reference_wrapper<T> o) noexcept { return o.get(); }
};

// The answer of on_measured / on_round: void (never stops) or bool (true: stop).
template <class R>
inline constexpr bool stop_answer = std::is_void_v<R> || std::same_as<R, bool>;

template <class O>
[[nodiscard]] constexpr bool readable_observer() {
  static_assert(SearchObserver<O>,
                "a search observer must implement at least one of on_begin(const SearchBegin&), "
                "on_measured(const SearchMeasured&), on_round(const SearchRound&), on_end(const SearchEnd&), "
                "on_screened(const SearchScreened&), on_forecasted(const SearchForecasted&), "
                "on_anomaly(const SearchAnomaly&), on_worker_lost(const SearchWorkerLost&)");
  if constexpr (ObservesMeasured<O>)
    static_assert(stop_answer<decltype(std::declval<O&>().on_measured(std::declval<const SearchMeasured&>()))>,
                  "on_measured must return void, or bool (true: stop the search)");
  if constexpr (ObservesRound<O>)
    static_assert(stop_answer<decltype(std::declval<O&>().on_round(std::declval<const SearchRound&>()))>,
                  "on_round must return void, or bool (true: stop the search)");
  if constexpr (ObservesBegin<O>)
    static_assert(std::is_void_v<decltype(std::declval<O&>().on_begin(std::declval<const SearchBegin&>()))>,
                  "on_begin must return void (only on_measured and on_round can stop a search)");
  if constexpr (ObservesEnd<O>)
    static_assert(std::is_void_v<decltype(std::declval<O&>().on_end(std::declval<const SearchEnd&>()))>,
                  "on_end must return void");
  if constexpr (ObservesScreened<O>)
    static_assert(std::is_void_v<decltype(std::declval<O&>().on_screened(std::declval<const SearchScreened&>()))>,
                  "on_screened must return void");
  if constexpr (ObservesForecasted<O>)
    static_assert(std::is_void_v<decltype(std::declval<O&>().on_forecasted(std::declval<const SearchForecasted&>()))>,
                  "on_forecasted must return void");
  if constexpr (ObservesAnomaly<O>)
    static_assert(std::is_void_v<decltype(std::declval<O&>().on_anomaly(std::declval<const SearchAnomaly&>()))>,
                  "on_anomaly must return void");
  if constexpr (ObservesWorkerLost<O>)
    static_assert(std::is_void_v<decltype(std::declval<O&>().on_worker_lost(std::declval<const SearchWorkerLost&>()))>,
                  "on_worker_lost must return void");
  return SearchObserver<O>;
}

template <class O, class E>
bool deliver_and_ask(O& o, const E& e) {
  if constexpr (std::same_as<E, SearchMeasured>) {
    if constexpr (std::same_as<decltype(o.on_measured(e)), bool>) return o.on_measured(e);
    else o.on_measured(e);
  } else {
    if constexpr (std::same_as<decltype(o.on_round(e)), bool>) return o.on_round(e);
    else o.on_round(e);
  }
  return false;
}

}  // namespace detail

// Any observer, type-erased (what SearchContext stores). Calls only what the type implements.
class AnyObserver {
 public:
  template <class O>
    requires(!std::same_as<std::remove_cvref_t<O>, AnyObserver>)
  explicit AnyObserver(O observer)
      : m_self(std::make_unique<Model<O>>(std::move(observer))) {
    static_assert(detail::readable_observer<typename detail::unwrap_observer<O>::type>());
  }

  void begin(const SearchBegin& e) { m_self->begin(e); }
  [[nodiscard]] bool measured(const SearchMeasured& e) { return m_self->measured(e); }  // true: stop
  [[nodiscard]] bool round(const SearchRound& e) { return m_self->round(e); }           // true: stop
  void end(const SearchEnd& e) { m_self->end(e); }
  void screened(const SearchScreened& e) { m_self->screened(e); }
  void forecasted(const SearchForecasted& e) { m_self->forecasted(e); }
  void anomaly(const SearchAnomaly& e) { m_self->anomaly(e); }
  void worker_lost(const SearchWorkerLost& e) { m_self->worker_lost(e); }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual void begin(const SearchBegin& e) = 0;
    virtual bool measured(const SearchMeasured& e) = 0;
    virtual bool round(const SearchRound& e) = 0;
    virtual void end(const SearchEnd& e) = 0;
    virtual void screened(const SearchScreened& e) = 0;
    virtual void forecasted(const SearchForecasted& e) = 0;
    virtual void anomaly(const SearchAnomaly& e) = 0;
    virtual void worker_lost(const SearchWorkerLost& e) = 0;
  };
  template <class O>
  struct Model final : Concept {
    using U = detail::unwrap_observer<O>;
    using T = typename U::type;
    explicit Model(O o) : value(std::move(o)) {}
    void begin(const SearchBegin& e) override {
      if constexpr (ObservesBegin<T>) U::get(value).on_begin(e);
    }
    bool measured(const SearchMeasured& e) override {
      if constexpr (ObservesMeasured<T>) return detail::deliver_and_ask(U::get(value), e);
      return false;
    }
    bool round(const SearchRound& e) override {
      if constexpr (ObservesRound<T>) return detail::deliver_and_ask(U::get(value), e);
      return false;
    }
    void end(const SearchEnd& e) override {
      if constexpr (ObservesEnd<T>) U::get(value).on_end(e);
    }
    void screened(const SearchScreened& e) override {
      if constexpr (ObservesScreened<T>) U::get(value).on_screened(e);
    }
    void forecasted(const SearchForecasted& e) override {
      if constexpr (ObservesForecasted<T>) U::get(value).on_forecasted(e);
    }
    void anomaly(const SearchAnomaly& e) override {
      if constexpr (ObservesAnomaly<T>) U::get(value).on_anomaly(e);
    }
    void worker_lost(const SearchWorkerLost& e) override {
      if constexpr (ObservesWorkerLost<T>) U::get(value).on_worker_lost(e);
    }
    O value;
  };
  std::unique_ptr<Concept> m_self;
};

}  // namespace gpuforecast
