#include "search/event_log.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {

nlohmann::ordered_json value_json(const Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_float()) return v.as_double();
  return v.as_string();
}

nlohmann::ordered_json config_json(const Config& c) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  const auto& names = c.names();
  for (std::size_t i = 0; i < c.size(); ++i) j[names[i]] = value_json(c[i]);
  return j;
}

// JSON has no infinity or NaN: an unknown number is null.
nlohmann::ordered_json number(double x) { return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr); }

nlohmann::ordered_json decision_json(const Decision& d) {
  return {{"forecast_ms", number(d.forecast.median_ms)},
          {"interval_ms", {number(d.interval_low_ms), number(d.interval_high_ms)}},
          {"confidence", number(d.confidence)},
          {"answered", !d.defer},
          {"p_fail", number(d.forecast.p_fail)}};
}

}  // namespace

struct EventLog::State {
  std::FILE* file = nullptr;
  std::uint64_t seq = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  // The latest decision on each proposed configuration and, when it was screened, the verdict:
  // attached to its measurement when it lands.
  std::unordered_map<std::string, Decision> decisions;
  std::unordered_map<std::string, bool> skipped;
  double best_ms = std::numeric_limits<double>::infinity();
  std::size_t measured = 0;
  // For the end line: candidates screened and screened out, measurements that had a forecast and
  // those of them outside its interval.
  std::size_t screened = 0, screened_out = 0, forecast_measured = 0, outside_interval = 0;

  ~State() {
    if (file) std::fclose(file);
  }
};

EventLog::EventLog(std::string path, EventLogOptions options)
    : m_path(std::move(path)), m_options(std::move(options)) {}
EventLog::EventLog(EventLog&&) noexcept = default;
EventLog& EventLog::operator=(EventLog&&) noexcept = default;
EventLog::~EventLog() = default;

namespace {

// What every line starts with: version, sequence number, seconds since the beginning, run, kind.
nlohmann::ordered_json header(std::uint64_t& seq, std::chrono::steady_clock::time_point start, const std::string& run,
                      const char* event) {
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {{"v", event_log_version}, {"seq", seq++}, {"t", t}, {"run", run}, {"event", event}};
}

void write_line(std::FILE* f, const std::string& path, nlohmann::ordered_json line) {
  const std::string text = line.dump() + "\n";
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fflush(f) != 0)
    throw error(fmt::format("{}: writing the event log failed: {}", path, std::strerror(errno)));
}

nlohmann::ordered_json anomaly_line(std::uint64_t& seq, std::chrono::steady_clock::time_point start,
                                    const std::string& run, const SearchAnomaly& a) {
  auto line = header(seq, start, run, "anomaly");
  line["index"] = a.index;
  line["kind"] = a.kind;
  line["config"] = config_json(a.config);
  line["statistic"] = number(a.statistic);
  line["p_value"] = number(a.p_value);
  line["detail"] = a.detail;
  return line;
}

}  // namespace

void EventLog::on_begin(const SearchBegin& e) {
  m_state = std::make_unique<State>();
  m_state->file = std::fopen(m_path.c_str(), "wb");
  if (!m_state->file) throw error(fmt::format("{}: cannot open the event log for writing: {}", m_path, std::strerror(errno)));
  nlohmann::ordered_json parameters = nlohmann::ordered_json::array();
  for (const auto& p : e.space.parameters()) parameters.push_back(p.name);
  write_line(m_state->file, m_path,
             {{"v", event_log_version},
              {"seq", m_state->seq++},
              {"t", 0.0},
              {"run", m_options.run},
              {"event", "begin"},
              {"kernel", e.prototype.kernel},
              {"device", e.prototype.device ? e.prototype.device->name : std::string()},
              {"problem_size", e.prototype.problem_size},
              {"parameters", parameters},
              {"budget", {{"measurements", e.budget.max_measurements}, {"seconds", e.budget.max_seconds}}}});
  if (m_options.resumed_configs) {
    auto line = header(m_state->seq, m_state->start, m_options.run, "resumed");
    line["from"] = m_options.resumed_from;
    line["configurations"] = m_options.resumed_configs->size();
    write_line(m_state->file, m_path, std::move(line));
  }
}

void EventLog::on_anomaly(const SearchAnomaly& a) {
  if (!m_state || !m_state->file) return;
  write_line(m_state->file, m_path, anomaly_line(m_state->seq, m_state->start, m_options.run, a));
}

void EventLog::on_worker_lost(const SearchWorkerLost& e) {
  if (!m_state || !m_state->file) return;
  auto& s = *m_state;
  auto line = header(s.seq, s.start, m_options.run, "rank_lost");
  line["index"] = e.index;
  line["rank"] = e.worker;
  line["device"] = e.device;
  line["reason"] = e.reason;
  line["held"] = e.held ? config_json(*e.held) : nlohmann::ordered_json(nullptr);
  line["went"] = e.went == HeldWork::none ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(to_string(e.went));
  write_line(s.file, m_path, line);
}

void EventLog::on_forecasted(const SearchForecasted& e) {
  if (!m_state) return;
  auto& s = *m_state;
  std::size_t answered = 0;
  double best_forecast = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < e.proposed.size() && i < e.decisions.size(); ++i) {
    const Decision& d = e.decisions[i];
    answered += d.defer ? 0 : 1;
    best_forecast = std::min(best_forecast, d.forecast.median_ms);
    s.decisions[e.proposed[i].key()] = d;
    if (m_options.all_decisions) {
      auto line = header(s.seq, s.start, m_options.run, "decision");
      line["config"] = config_json(e.proposed[i]);
      line.update(decision_json(d));
      write_line(s.file, m_path, std::move(line));
    }
  }
  auto line = header(s.seq, s.start, m_options.run, "forecasts");
  line["proposed"] = e.proposed.size();
  line["answered"] = answered;
  line["deferred"] = e.proposed.size() - answered;
  line["best_forecast_ms"] = number(best_forecast);
  if (std::isfinite(e.incumbent_forecast_ms)) line["incumbent_forecast_ms"] = number(e.incumbent_forecast_ms);
  line["decide_s"] = number(e.seconds);
  write_line(s.file, m_path, std::move(line));
}

void EventLog::on_screened(const SearchScreened& e) {
  if (!m_state) return;
  auto& s = *m_state;
  std::size_t skipped = 0;
  for (std::size_t i = 0; i < e.proposed.size() && i < e.skipped.size(); ++i) {
    skipped += e.skipped[i] ? 1 : 0;
    s.skipped[e.proposed[i].key()] = e.skipped[i];
  }
  s.screened += e.proposed.size();
  s.screened_out += skipped;
  auto line = header(s.seq, s.start, m_options.run, "screened");
  line["incumbent_ms"] = number(e.incumbent_ms);
  line["certified"] = e.rule.certified;
  line["margin"] = number(e.rule.margin);
  line["improvements"] = e.rule.improvements;
  line["risk_upper_bound"] = number(e.rule.risk_upper_bound);
  line["proposed"] = e.proposed.size();
  line["skipped"] = skipped;
  line["reason"] = e.rule.reason;
  write_line(s.file, m_path, std::move(line));
}

void EventLog::on_measured(const SearchMeasured& e) {
  if (!m_state) return;
  auto& s = *m_state;
  const Measurement& m = e.measurement;
  ++s.measured;
  if (m.ok() && m.median_ms > 0) s.best_ms = std::min(s.best_ms, m.median_ms);
  auto line = header(s.seq, s.start, m_options.run, "measured");
  line["index"] = e.index;
  line["config"] = config_json(e.config);
  line["status"] = std::string(to_string(m.status));
  line["time_ms"] = m.ok() ? number(m.median_ms) : nlohmann::ordered_json(nullptr);
  line["ci_ms"] = {number(m.ci_low_ms), number(m.ci_high_ms)};
  line["samples"] = m.samples_ms.size();
  line["compile_ms"] = number(m.compile_ms);
  line["cost_s"] = number(m.cost_s);
  line["best_ms"] = number(s.best_ms);
  if (!m.reason.empty()) line["reason"] = m.reason;
  const std::string key = e.config.key();
  if (m_options.resumed_configs && m_options.resumed_configs->count(key)) line["resumed"] = true;
  if (const auto it = s.decisions.find(key); it != s.decisions.end()) {
    nlohmann::ordered_json f = decision_json(it->second);
    if (m.ok() && m.median_ms > 0) {
      f["relative_error"] = number(std::abs(it->second.forecast.median_ms - m.median_ms) / m.median_ms);
      const bool inside = it->second.covers(m.median_ms);
      f["inside_interval"] = inside;
      ++s.forecast_measured;
      s.outside_interval += inside ? 0 : 1;
    }
    line["forecast"] = std::move(f);
  } else {
    line["forecast"] = nullptr;  // measured without a forecast: the initial design, or another strategy
  }
  if (const auto it = s.skipped.find(key); it != s.skipped.end()) line["screened_out"] = it->second;
  write_line(s.file, m_path, std::move(line));
  if (is_fault(m.status)) {
    auto fault = header(s.seq, s.start, m_options.run, "fault");
    fault["index"] = e.index;
    fault["kind"] = std::string(fault_kind(m.status));
    fault["config"] = config_json(e.config);
    fault["detail"] = fault_detail(m);
    write_line(s.file, m_path, std::move(fault));
  }
}

void EventLog::on_round(const SearchRound& e) {
  if (!m_state) return;
  auto& s = *m_state;
  auto line = header(s.seq, s.start, m_options.run, "round");
  line["round"] = e.round;
  line["measured"] = e.measurements.size();
  line["best_ms"] = number(s.best_ms);
  write_line(s.file, m_path, std::move(line));
  // Decisions of this round have met their measurements; the next round decides afresh.
  s.decisions.clear();
  s.skipped.clear();
}

void EventLog::on_end(const SearchEnd& e) {
  if (!m_state) return;
  auto& s = *m_state;
  auto line = header(s.seq, s.start, m_options.run, "end");
  line["measurements"] = e.trace.size();
  line["best_ms"] = number(s.best_ms);
  line["stopped"] = e.stopped;
  if (e.stopped) line["reason"] = m_options.stop_reason ? m_options.stop_reason() : std::string("stopped by an observer");
  if (s.screened > 0) line["screening"] = {{"considered", s.screened}, {"screened_out", s.screened_out}};
  if (s.forecast_measured > 0)
    line["intervals"] = {{"measured", s.forecast_measured}, {"outside", s.outside_interval}};
  write_line(s.file, m_path, std::move(line));
  std::fclose(s.file);
  s.file = nullptr;
}

}  // namespace gpuforecast
