// How fast compiled constraint expressions evaluate: the four convolution_milo conditions over
// every cartesian configuration, repeated on one thread for at least a second per row.
// Target (issue 2): >= 1,000,000 evaluations/s. Build with -DCMAKE_BUILD_TYPE=Release to measure.
#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/space/enumerate.hpp"
#include "gpuforecast/space/expression.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("GPUFORECAST_DATA"); env && *env) return env;
  return std::filesystem::path(GPUFORECAST_SOURCE_DIR) / ".." / "shared" / "datasets";
}

struct Space {
  std::vector<std::string> names;
  std::vector<std::vector<double>> values;
  std::vector<std::string> conditions;
};

Space read_t1(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw gpuforecast::input_error(file.string(), "", "cannot open T1 file (set GPUFORECAST_DATA)");
  const auto doc = nlohmann::json::parse(in);
  const auto& cs = doc.at("ConfigurationSpace");
  Space s;
  for (const auto& p : cs.at("TuningParameters")) {
    s.names.push_back(p.at("Name").get<std::string>());
    std::vector<double> vals;
    for (const auto& v : nlohmann::json::parse(p.at("Values").get<std::string>())) vals.push_back(v.get<double>());
    s.values.push_back(std::move(vals));
  }
  for (const auto& c : cs.at("Conditions")) s.conditions.push_back(c.at("Expression").get<std::string>());
  return s;
}

std::vector<std::vector<double>> cartesian(const Space& s) {
  std::vector<std::vector<double>> out(1);
  for (const auto& vals : s.values) {
    std::vector<std::vector<double>> next;
    for (const auto& prefix : out)
      for (double v : vals) {
        next.push_back(prefix);
        next.back().push_back(v);
      }
    out = std::move(next);
  }
  return out;
}

struct Row {
  std::string what;
  double evaluations = 0;
  double seconds = 0;
  std::size_t valid = 0;
};

// Runs `pass` (one sweep returning evaluations done and configs valid) until a second passed.
template <class Pass>
Row time_it(const std::string& what, Pass&& pass) {
  Row r{what};
  const auto start = Clock::now();
  do {
    const auto [evals, valid] = pass();
    r.evaluations += static_cast<double>(evals);
    r.valid = valid;
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  } while (r.seconds < 1.0);
  return r;
}

}  // namespace

int main() {
  try {
    const auto file = data_dir() / "benchmark_hub" / "kernels" / "convolution_milo.json";
    const Space s = read_t1(file);
    std::vector<gpuforecast::Expression> exprs;
    for (const auto& c : s.conditions) exprs.push_back(gpuforecast::Expression::compile(c, s.names));
    const auto configs = cartesian(s);
    std::vector<std::vector<gpuforecast::Value>> value_configs;
    for (const auto& c : configs) value_configs.emplace_back(c.begin(), c.end());

    std::vector<Row> rows;
    // Every condition on every config: no short-circuit between conditions, so each row counts
    // exactly conditions x configs evaluations per sweep.
    rows.push_back(time_it("evaluate_number, all 4 conditions", [&] {
      std::size_t valid = 0;
      for (const auto& c : configs) {
        bool ok = true;
        for (const auto& e : exprs) ok &= e.test(c);
        valid += ok;
      }
      return std::pair{configs.size() * exprs.size(), valid};
    }));
    for (std::size_t i = 0; i < exprs.size(); ++i) {
      rows.push_back(time_it(fmt::format("evaluate_number, condition {} only", i + 1), [&] {
        std::size_t valid = 0;
        for (const auto& c : configs) valid += exprs[i].test(c);
        return std::pair{configs.size(), valid};
      }));
    }
    rows.push_back(time_it("evaluate (Value), all 4 conditions", [&] {
      std::size_t valid = 0;
      for (const auto& c : value_configs) {
        bool ok = true;
        for (const auto& e : exprs) ok &= e.evaluate(c).as_double() != 0.0;
        valid += ok;
      }
      return std::pair{value_configs.size() * exprs.size(), valid};
    }));
    std::vector<gpuforecast::Parameter> params;
    for (std::size_t p = 0; p < s.names.size(); ++p) {
      gpuforecast::Parameter par{s.names[p], {}};
      for (double v : s.values[p]) par.values.emplace_back(static_cast<std::int64_t>(v));
      params.push_back(std::move(par));
    }
    const gpuforecast::TuningSpace space(params, s.conditions);
    Row enumerate = time_it("enumerate_valid (pruned), configs/s", [&] {
      const auto all = gpuforecast::enumerate_valid(space);
      return std::pair{all.size(), all.size()};
    });

    fmt::print("expression_speed: {} ({} parameters, {} cartesian configs, {} conditions)\n", file.string(),
               s.names.size(), configs.size(), exprs.size());
    for (std::size_t i = 0; i < exprs.size(); ++i) fmt::print("  condition {}: {}\n", i + 1, exprs[i].source());
    fmt::print("\n| {:<40} | {:>16} | {:>8} | {:>7} |\n", "what", "evaluations/s", "seconds", "valid");
    fmt::print("|{:-<42}|{:->18}|{:->10}|{:->9}|\n", "", "", "", "");
    for (const auto& r : rows)
      fmt::print("| {:<40} | {:>16.0f} | {:>8.2f} | {:>7} |\n", r.what, r.evaluations / r.seconds, r.seconds, r.valid);
    fmt::print("| {:<40} | {:>16.0f} | {:>8.2f} | {:>7} |\n", enumerate.what, enumerate.evaluations / enumerate.seconds,
               enumerate.seconds, enumerate.valid);
    const double headline = rows.front().evaluations / rows.front().seconds;
    fmt::print("\nconvolution_milo conditions: {:.0f} evaluations/s on one thread (target >= 1,000,000): {}\n", headline,
               headline >= 1e6 ? "met" : "NOT MET");
    return headline >= 1e6 ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "expression_speed: {}\n", e.what());
    return 2;
  }
}
