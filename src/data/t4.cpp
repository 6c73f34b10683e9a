#include "gpuforecast/data/community_formats.hpp"

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "data/file_io.hpp"
#include "data/json_util.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {

using ojson = nlohmann::ordered_json;

class T4Reader {
 public:
  explicit T4Reader(const std::string& name) : m_name(name) {}

  T4File read(std::string_view text) {
    const ojson doc = detail::data::parse_json_document(text, m_name);
    if (!doc.is_object()) throw input_error(m_name, "byte 0", "a T4 results file is a JSON object");
    T4File file;
    file.path = m_name;
    if (auto it = doc.find("schema_version"); it != doc.end()) file.schema_version = string_at(*it, "schema_version");
    if (auto it = doc.find("metadata"); it != doc.end() && it->is_object()) {
      if (auto u = it->find("timeunit"); u != it->end()) file.time_unit = string_at(*u, "metadata.timeunit");
    }
    auto results = doc.find("results");
    if (results == doc.end()) throw input_error(m_name, "", "missing key \"results\": not a T4 results file");
    if (!results->is_array()) throw input_error(m_name, "results", "\"results\" must be a list");
    file.results.reserve(results->size());
    for (std::size_t i = 0; i < results->size(); ++i) file.results.push_back(result((*results)[i], i));
    return file;
  }

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& message) const {
    throw input_error(m_name, where, message);
  }

  std::string string_at(const ojson& j, const std::string& where) const {
    if (!j.is_string()) fail(where, fmt::format("expected a string, found {}", j.type_name()));
    return j.get<std::string>();
  }

  double time_at(const ojson& j, const std::string& where) const {
    if (!j.is_number()) fail(where, fmt::format("a time must be a number, found {}", j.type_name()));
    const double d = j.get<double>();
    if (!std::isfinite(d)) fail(where, "a time must be finite");
    if (d < 0) fail(where, fmt::format("a time must not be negative ({})", d));
    return d;
  }

  ParameterNames names_for(const ojson& configuration) {
    bool same = m_names && m_names->size() == configuration.size();
    if (same) {
      std::size_t i = 0;
      for (auto it = configuration.begin(); it != configuration.end(); ++it, ++i)
        if ((*m_names)[i] != it.key()) {
          same = false;
          break;
        }
    }
    if (!same) {
      std::vector<std::string> names;
      for (auto it = configuration.begin(); it != configuration.end(); ++it) names.push_back(it.key());
      m_names = std::make_shared<const std::vector<std::string>>(std::move(names));
    }
    return m_names;
  }

  T4Result result(const ojson& r, std::size_t index) {
    const std::string at = fmt::format("results[{}]", index);
    if (!r.is_object()) fail(at, "a result must be an object");
    T4Result out;
    auto cfg = r.find("configuration");
    if (cfg == r.end()) fail(at, "missing key \"configuration\"");
    if (!cfg->is_object()) fail(at + ".configuration", "must be an object");
    std::vector<Value> values;
    values.reserve(cfg->size());
    for (auto it = cfg->begin(); it != cfg->end(); ++it) {
      const ojson& v = it.value();
      if (auto value = detail::data::scalar_value(v))
        values.push_back(std::move(*value));
      else
        fail(fmt::format("{}.configuration[{}]", at, detail::data::quote_json(it.key())),
             fmt::format("a parameter value must be a number or a string, found {}", v.type_name()));
    }
    out.config = Config(names_for(*cfg), std::move(values));
    if (auto ts = r.find("timestamp"); ts != r.end() && ts->is_string()) out.timestamp = ts->get<std::string>();

    auto inv = r.find("invalidity");
    if (inv == r.end()) fail(at, "missing key \"invalidity\"");
    out.invalidity = string_at(*inv, at + ".invalidity");
    Measurement& m = out.measurement;
    try {
      m.status = parse_status(out.invalidity);
    } catch (const invalid_argument_error&) {
      fail(at + ".invalidity", fmt::format("unknown invalidity \"{}\" (expected correct, compile, runtime or constraints)",
                                           out.invalidity));
    }

    if (auto times = r.find("times"); times != r.end()) {
      if (!times->is_object()) fail(at + ".times", "must be an object");
      for (auto it = times->begin(); it != times->end(); ++it) {
        const std::string where = fmt::format("{}.times.{}", at, it.key());
        if (it.key() == "runtimes") {
          if (!it->is_array()) fail(where, "must be a list of runtimes");
          m.samples_ms.reserve(it->size());
          for (std::size_t j = 0; j < it->size(); ++j)
            m.samples_ms.push_back(time_at((*it)[j], fmt::format("{}[{}]", where, j)));
        } else if (it->is_null()) {
          continue;
        } else if (it.key() == "compilation") {
          m.compile_ms = time_at(*it, where);
        } else if (it.key() == "framework") {
          out.framework_ms = time_at(*it, where);
        } else if (it.key() == "search_algorithm") {
          out.search_algorithm_ms = time_at(*it, where);
        } else if (it.key() == "validation") {
          out.validation_ms = time_at(*it, where);
        }
      }
    }

    if (auto ms = r.find("measurements"); ms != r.end()) {
      if (!ms->is_array()) fail(at + ".measurements", "must be a list");
      for (std::size_t j = 0; j < ms->size(); ++j) {
        const ojson& e = (*ms)[j];
        const std::string where = fmt::format("{}.measurements[{}]", at, j);
        if (!e.is_object() || !e.contains("name") || !e.contains("value"))
          fail(where, "a measurement is an object with \"name\" and \"value\"");
        const std::string name = string_at(e["name"], where + ".name");
        const ojson& v = e["value"];
        if (v.is_number()) {
          const double d = v.get<double>();
          if (!std::isfinite(d)) fail(where + ".value", "not finite");
          out.measurements.emplace_back(name, d);
        } else if (v.is_string()) {
          out.text_measurements.emplace_back(name, v.get<std::string>());
        } else {
          fail(where + ".value", fmt::format("expected a number or a string, found {}", v.type_name()));
        }
      }
    }
    if (auto obj = r.find("objectives"); obj != r.end() && obj->is_array())
      for (std::size_t j = 0; j < obj->size(); ++j)
        out.objectives.push_back(string_at((*obj)[j], fmt::format("{}.objectives[{}]", at, j)));

    const std::string objective = out.objectives.empty() ? "time" : out.objectives.front();
    if (m.ok()) {
      if (!m.samples_ms.empty()) {
        summarise_samples(m);
      } else {
        for (const auto& [n, v] : out.measurements)
          if (n == objective) {
            if (v < 0) fail(at + ".measurements", fmt::format("the objective \"{}\" is negative", n));
            m.median_ms = m.ci_low_ms = m.ci_high_ms = v;
          }
      }
    } else {
      m.reason = out.invalidity;
      for (const auto& [n, v] : out.text_measurements)
        if (n == objective) m.reason = v;
    }
    double run_ms = 0;
    for (double s : m.samples_ms) run_ms += s;
    m.cost_s = (m.compile_ms + out.validation_ms + run_ms) / 1000.0;
    return out;
  }

  const std::string& m_name;
  ParameterNames m_names;
};

ojson value_json(const Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_float()) return v.as_double();
  return v.as_string();
}

std::string invalidity_of(const T4Result& r) {
  if (!r.invalidity.empty()) return r.invalidity;
  switch (r.measurement.status) {
    case Status::ok: return "correct";
    case Status::compile_failed: return "compile";
    case Status::invalid: return "constraints";
    default: return "runtime";
  }
}

}  // namespace

T4File parse_t4(std::string_view bytes, const std::string& name) {
  std::string inflated;
  if (detail::data::is_gzip(bytes)) {
    inflated = detail::data::gunzip(bytes, name);
    bytes = inflated;
  }
  return T4Reader(name).read(bytes);
}

T4File read_t4(const std::string& path) {
  const std::string text = detail::data::read_maybe_gzip(path);
  return T4Reader(path).read(text);
}

void write_t4(const T4File& file, const std::string& path) {
  ojson doc;
  doc["schema_version"] = file.schema_version;
  doc["metadata"] = {{"timeunit", file.time_unit}};
  ojson results = ojson::array();
  for (const auto& r : file.results) {
    ojson j;
    j["timestamp"] = r.timestamp;
    ojson cfg = ojson::object();
    const auto& names = r.config.names();
    for (std::size_t i = 0; i < r.config.size(); ++i) cfg[names[i]] = value_json(r.config[i]);
    j["configuration"] = std::move(cfg);
    ojson times;
    times["compilation"] = r.measurement.compile_ms;
    times["framework"] = r.framework_ms;
    times["search_algorithm"] = r.search_algorithm_ms;
    times["validation"] = r.validation_ms;
    if (!r.measurement.samples_ms.empty()) times["runtimes"] = r.measurement.samples_ms;
    j["times"] = std::move(times);
    j["invalidity"] = invalidity_of(r);
    j["correctness"] = r.measurement.ok() ? 1 : 0;
    ojson ms = ojson::array();
    for (const auto& [n, v] : r.measurements) ms.push_back({{"name", n}, {"value", v}, {"unit", ""}});
    for (const auto& [n, v] : r.text_measurements) ms.push_back({{"name", n}, {"value", v}, {"unit", ""}});
    j["measurements"] = std::move(ms);
    ojson obj = ojson::array();
    for (const auto& o : r.objectives) obj.push_back(o);
    j["objectives"] = std::move(obj);
    results.push_back(std::move(j));
  }
  doc["results"] = std::move(results);
  detail::data::write_text(path, doc.dump(2));
}

}  // namespace gpuforecast
