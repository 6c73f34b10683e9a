#include "monitor/monitor_hub.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace gpuforecast::detail::monitor {

namespace {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

json number(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

json config_json(const Config& c) {
  json j = json::object();
  const auto& names = c.names();
  for (std::size_t i = 0; i < c.size(); ++i) {
    const Value& v = c[i];
    if (v.is_int()) j[names[i]] = v.as_int();
    else if (v.is_float()) j[names[i]] = v.as_double();
    else j[names[i]] = v.as_string();
  }
  return j;
}

// Measurement and forecast latencies span tens of microseconds (a forecast round of a compact
// model) to minutes (a compile and benchmark): one bucket per decade and its 2.5 and 5 steps,
// written out so that the bucket labels are the round numbers they mean.
prometheus::Histogram::BucketBoundaries latency_buckets() {
  return {1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05, 0.1,
          0.25, 0.5, 1,     2.5,    5,    10,   25,     50,   100,  250,  500,  1000};
}

// What the page draws of one measurement.
struct MeasuredPoint {
  std::size_t index;
  double t;
  std::string status;
  double time_ms;  // NaN for a failed measurement
  double best_ms;
  std::optional<Decision> forecast;  // made before the measurement, when there was one
  std::optional<bool> loss;          // the answered forecast's loss, when it had one
};

struct RoundPoint {
  std::size_t round;
  std::size_t measurements;  // so far
  double t;
  std::size_t proposed, answered, skipped;  // of this round's forecasts and screening
  double answered_risk, interval_miss;      // realised so far 
};

struct AnomalyPoint {
  std::size_t index;
  double t;
  std::string kind, detail;
  double p_value;
};

// One run's metrics (children of the hub's families, labelled with the run) and series.
struct RunState {
  std::string label;
  std::string kernel, device;
  Clock::time_point start = Clock::now();
  bool begun = false, ended = false;

  prometheus::Counter* answered = nullptr;
  prometheus::Counter* deferred = nullptr;
  prometheus::Counter* skipped = nullptr;
  prometheus::Counter* kept = nullptr;
  prometheus::Gauge* best_seconds = nullptr;
  prometheus::Gauge* answered_risk = nullptr;
  prometheus::Gauge* interval_miss = nullptr;
  prometheus::Gauge* finished = nullptr;
  prometheus::Histogram* measurement_seconds = nullptr;
  prometheus::Histogram* forecast_round_seconds = nullptr;

  // This round's decisions, by Config::key(), attached to their measurements as they land.
  std::unordered_map<std::string, Decision> decisions;
  std::size_t round_proposed = 0, round_answered = 0, round_skipped = 0;
  std::size_t answered_measured = 0, answered_losses = 0;
  std::size_t interval_checked = 0, interval_misses = 0;
  std::size_t screened = 0, screened_out = 0;  // candidates the rule judged, and skipped
  double best_ms = std::numeric_limits<double>::infinity();
  json incumbent = nullptr;

  std::vector<MeasuredPoint> measured;
  std::vector<RoundPoint> rounds;
  std::vector<AnomalyPoint> flagged;

  [[nodiscard]] double seconds() const { return std::chrono::duration<double>(Clock::now() - start).count(); }
  [[nodiscard]] double realised_risk() const {
    return answered_measured ? static_cast<double>(answered_losses) / static_cast<double>(answered_measured) : nan;
  }
  [[nodiscard]] double realised_interval_miss() const {
    return interval_checked ? static_cast<double>(interval_misses) / static_cast<double>(interval_checked) : nan;
  }
};

}  // namespace

struct MonitorHub::Impl {
  MonitorOptions options;
  mutable std::mutex mutex;
  bool finished = false;
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();

  prometheus::Family<prometheus::Counter>& forecasts =
      prometheus::BuildCounter()
          .Name("gpuforecast_forecasts_total")
          .Help("Forecasts the model made of proposed candidates, by decision (answered: trusted without measuring)")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& screened =
      prometheus::BuildCounter()
          .Name("gpuforecast_screened_total")
          .Help("Proposals the screening rule judged, by verdict (skipped: certified not worth measuring)")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& measurements =
      prometheus::BuildCounter()
          .Name("gpuforecast_measurements_total")
          .Help("Measurements that landed, by status")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& faults =
      prometheus::BuildCounter()
          .Name("gpuforecast_faults_total")
          .Help("Measurements the compiler or the GPU failed (compile, launch, crash, hang), by kind")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& anomalies =
      prometheus::BuildCounter()
          .Name("gpuforecast_anomalies_total")
          .Help("Anomalies flagged on measurements (docs/monitoring.md), by kind")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& ranks_lost =
      prometheus::BuildCounter()
          .Name("gpuforecast_ranks_lost_total")
          .Help("Farm ranks given up on while the search ran (their candidates went to other ranks)")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& best =
      prometheus::BuildGauge()
          .Name("gpuforecast_best_time_seconds")
          .Help("Fastest runtime measured so far")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& risk =
      prometheus::BuildGauge()
          .Name("gpuforecast_answered_risk_ratio")
          .Help("Realised loss rate of answered forecasts that were measured")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& risk_target =
      prometheus::BuildGauge()
          .Name("gpuforecast_answered_risk_alpha_ratio")
          .Help("The risk level the answered forecasts are calibrated to (alpha of Learn-then-Test)")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& miss =
      prometheus::BuildGauge()
          .Name("gpuforecast_interval_miss_ratio")
          .Help("Share of measured forecasts whose runtime fell outside the calibrated interval")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& miss_target =
      prometheus::BuildGauge()
          .Name("gpuforecast_interval_alpha_ratio")
          .Help("The miss rate the calibrated intervals are built for (1 - coverage)")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& run_finished =
      prometheus::BuildGauge()
          .Name("gpuforecast_run_finished")
          .Help("1 once the run has ended, 0 while it runs")
          .Register(*registry);
  prometheus::Family<prometheus::Histogram>& measurement_latency =
      prometheus::BuildHistogram()
          .Name("gpuforecast_measurement_duration_seconds")
          .Help("Compile and benchmark time of one measurement (replay: the stored time)")
          .Register(*registry);
  prometheus::Family<prometheus::Histogram>& forecast_latency =
      prometheus::BuildHistogram()
          .Name("gpuforecast_forecast_round_duration_seconds")
          .Help("Wall time the model took to decide one round of proposals")
          .Register(*registry);

  std::vector<std::unique_ptr<RunState>> runs;

  explicit Impl(MonitorOptions o) : options(std::move(o)) {
    risk_target.Add({}).Set(options.calibration.risk_alpha);
    miss_target.Add({}).Set(options.calibration.alpha);
  }

  RunState& run(std::size_t i) { return *runs.at(i); }

  void count_anomaly(RunState& r, const SearchAnomaly& a) {
    anomalies.Add({{"run", r.label}, {"kind", a.kind}}).Increment();
    r.flagged.push_back({a.index, r.seconds(), a.kind, a.detail, a.p_value});
  }
};

MonitorHub::MonitorHub(MonitorOptions options) : m_impl(std::make_shared<Impl>(std::move(options))) {}
MonitorHub::~MonitorHub() = default;

RunObserver MonitorHub::observer(std::string run) {
  std::lock_guard lock(m_impl->mutex);
  auto state = std::make_unique<RunState>();
  state->label = std::move(run);
  const prometheus::Labels labels{{"run", state->label}};
  auto& s = *state;
  s.answered = &m_impl->forecasts.Add({{"run", s.label}, {"decision", "answered"}});
  s.deferred = &m_impl->forecasts.Add({{"run", s.label}, {"decision", "deferred"}});
  s.skipped = &m_impl->screened.Add({{"run", s.label}, {"verdict", "skipped"}});
  s.kept = &m_impl->screened.Add({{"run", s.label}, {"verdict", "kept"}});
  s.finished = &m_impl->run_finished.Add(labels);
  s.measurement_seconds = &m_impl->measurement_latency.Add(labels, latency_buckets());
  s.forecast_round_seconds = &m_impl->forecast_latency.Add(labels, latency_buckets());
  m_impl->runs.push_back(std::move(state));
  return RunObserver(m_impl, m_impl->runs.size() - 1);
}

std::string MonitorHub::metrics_text() const {
  // Collect() reads the metrics atomically; the lock keeps a run from being added meanwhile.
  std::lock_guard lock(m_impl->mutex);
  return prometheus::TextSerializer().Serialize(m_impl->registry->Collect());
}

void MonitorHub::finish() {
  std::lock_guard lock(m_impl->mutex);
  m_impl->finished = true;
}

std::string MonitorHub::state_json() const {
  std::lock_guard lock(m_impl->mutex);
  const auto& o = m_impl->options;
  json runs = json::array();
  for (const auto& r : m_impl->runs) {
    json measured = json::array(), rounds = json::array(), anomalies = json::array();
    for (const auto& p : r->measured) {
      json m = {{"i", p.index}, {"t", p.t}, {"status", p.status}, {"ms", number(p.time_ms)}, {"best_ms", number(p.best_ms)}};
      if (p.forecast) {
        m["forecast_ms"] = number(p.forecast->forecast.median_ms);
        m["interval_ms"] = {number(p.forecast->interval_low_ms), number(p.forecast->interval_high_ms)};
        m["answered"] = !p.forecast->defer;
      }
      if (p.loss) m["loss"] = *p.loss;
      measured.push_back(std::move(m));
    }
    for (const auto& p : r->rounds)
      rounds.push_back({{"round", p.round}, {"measurements", p.measurements}, {"t", p.t}, {"proposed", p.proposed},
                        {"answered", p.answered}, {"skipped", p.skipped}, {"answered_risk", number(p.answered_risk)},
                        {"interval_miss", number(p.interval_miss)}});
    for (const auto& a : r->flagged)
      anomalies.push_back({{"i", a.index}, {"t", a.t}, {"kind", a.kind}, {"detail", a.detail}, {"p_value", number(a.p_value)}});
    runs.push_back({{"run", r->label},
                    {"kernel", r->kernel},
                    {"device", r->device},
                    {"finished", r->ended},
                    {"best_ms", number(r->best_ms)},
                    {"incumbent", r->incumbent},
                    {"answered_risk", number(r->realised_risk())},
                    {"interval_miss", number(r->realised_interval_miss())},
                    {"screening", {{"considered", r->screened}, {"screened_out", r->screened_out}}},
                    {"measured", std::move(measured)},
                    {"rounds", std::move(rounds)},
                    {"anomalies", std::move(anomalies)}});
  }
  return json{{"version", 1},
              {"title", o.title},
              {"finished", m_impl->finished},
              {"risk_alpha", o.calibration.risk_alpha},
              {"interval_alpha", o.calibration.alpha},
              {"loss", o.calibration.loss == DeferralLoss::relative_error
                           ? fmt::format("relative error > {}", o.calibration.tolerance)
                           : std::string("wrong speedup bin")},
              {"runs", std::move(runs)}}
      .dump();
}

void RunObserver::on_begin(const SearchBegin& e) {
  std::lock_guard lock(m_hub->mutex);
  RunState& r = m_hub->run(m_run);
  r.kernel = e.prototype.kernel;
  r.device = e.prototype.device ? e.prototype.device->name : std::string();
  r.start = Clock::now();
  r.begun = true;
  r.finished->Set(0);
}

void RunObserver::on_forecasted(const SearchForecasted& e) {
  std::lock_guard lock(m_hub->mutex);
  RunState& r = m_hub->run(m_run);
  std::size_t answered = 0;
  for (std::size_t i = 0; i < e.proposed.size() && i < e.decisions.size(); ++i) {
    answered += e.decisions[i].defer ? 0 : 1;
    r.decisions[e.proposed[i].key()] = e.decisions[i];
  }
  r.answered->Increment(static_cast<double>(answered));
  r.deferred->Increment(static_cast<double>(e.decisions.size() - answered));
  r.forecast_round_seconds->Observe(e.seconds);
  r.round_proposed += e.decisions.size();
  r.round_answered += answered;
}

void RunObserver::on_screened(const SearchScreened& e) {
  std::lock_guard lock(m_hub->mutex);
  RunState& r = m_hub->run(m_run);
  std::size_t skipped = 0;
  for (const bool s : e.skipped) skipped += s ? 1 : 0;
  r.skipped->Increment(static_cast<double>(skipped));
  r.kept->Increment(static_cast<double>(e.skipped.size() - skipped));
  r.round_skipped += skipped;
  r.screened += e.skipped.size();
  r.screened_out += skipped;
}

void RunObserver::on_measured(const SearchMeasured& e) {
  std::lock_guard lock(m_hub->mutex);
  RunState& r = m_hub->run(m_run);
  const Measurement& m = e.measurement;
  const std::string status(to_string(m.status));
  m_hub->measurements.Add({{"run", r.label}, {"status", status}}).Increment();
  if (is_fault(m.status)) m_hub->faults.Add({{"run", r.label}, {"kind", status}}).Increment();
  if (std::isfinite(m.cost_s) && m.cost_s >= 0) r.measurement_seconds->Observe(m.cost_s);

  const bool timed = m.ok() && m.median_ms > 0;
  const double incumbent_before = r.best_ms;
  MeasuredPoint point{e.index, r.seconds(), status, timed ? m.median_ms : nan, nan, std::nullopt, std::nullopt};
  if (const auto it = r.decisions.find(e.config.key()); it != r.decisions.end()) {
    const Decision& d = it->second;
    point.forecast = d;
    if (timed) {
      ++r.interval_checked;
      if (!d.covers(m.median_ms)) ++r.interval_misses;
      const CalibrationOptions& c = m_hub->options.calibration;
      // The wrong-bin loss compares against a reference: the calibration's own when it has one,
      // else the incumbent the forecast was made against.
      std::optional<double> reference;
      if (c.reference_ms > 0) reference = c.reference_ms;
      else if (std::isfinite(incumbent_before)) reference = incumbent_before;
      if (!d.defer && (c.loss == DeferralLoss::relative_error || reference)) {
        const bool loss = deferral_loss(c, d.forecast, m.median_ms, reference) > 0.5;
        point.loss = loss;
        ++r.answered_measured;
        r.answered_losses += loss ? 1 : 0;
      }
    }
  }
  // Gauges without a value yet (no measurement, no measured forecast) are not exposed at all:
  // an absent series is what Prometheus' conventions ask for, not NaN or 0.
  const prometheus::Labels labels{{"run", r.label}};
  if (timed && m.median_ms < r.best_ms) {
    r.best_ms = m.median_ms;
    r.incumbent = {{"config", config_json(e.config)}, {"ms", m.median_ms}, {"i", e.index}};
    if (!r.best_seconds) r.best_seconds = &m_hub->best.Add(labels);
    r.best_seconds->Set(m.median_ms / 1000.0);
  }
  point.best_ms = r.best_ms;
  r.measured.push_back(std::move(point));
  if (r.answered_measured > 0) {
    if (!r.answered_risk) r.answered_risk = &m_hub->risk.Add(labels);
    r.answered_risk->Set(r.realised_risk());
  }
  if (r.interval_checked > 0) {
    if (!r.interval_miss) r.interval_miss = &m_hub->miss.Add(labels);
    r.interval_miss->Set(r.realised_interval_miss());
  }
}

void RunObserver::on_round(const SearchRound& e) {
  std::lock_guard lock(m_hub->mutex);
  RunState& r = m_hub->run(m_run);
  r.rounds.push_back({e.round, e.trace.size(), r.seconds(), r.round_proposed, r.round_answered, r.round_skipped,
                      r.realised_risk(), r.realised_interval_miss()});
  r.decisions.clear();
  r.round_proposed = r.round_answered = r.round_skipped = 0;
}

void RunObserver::on_anomaly(const SearchAnomaly& a) {
  std::lock_guard lock(m_hub->mutex);
  m_hub->count_anomaly(m_hub->run(m_run), a);
}

// Counted, and listed on the dashboard beside the anomalies.
void RunObserver::on_worker_lost(const SearchWorkerLost& e) {
  std::lock_guard lock(m_hub->mutex);
  RunState& r = m_hub->run(m_run);
  m_hub->ranks_lost.Add({{"run", r.label}}).Increment();
  const std::string fate = e.went == HeldWork::requeued ? ", its candidate went to another rank"
                           : e.went == HeldWork::failed ? ", its candidate failed on every rank tried"
                                                        : "";
  r.flagged.push_back({e.index, r.seconds(), "rank_lost", fmt::format("rank {} lost: {}{}", e.worker, e.reason, fate), 1.0});
}

void RunObserver::on_end(const SearchEnd&) {
  std::lock_guard lock(m_hub->mutex);
  RunState& r = m_hub->run(m_run);
  r.ended = true;
  r.finished->Set(1);
}

}  // namespace gpuforecast::detail::monitor
