// gpuforecast predict: forecasts configurations with a model file. Either every configuration of
// measurement files (--data; where a file has a measured time it is shown beside the forecast),
// or configurations given on the command line (--config, repeatable) or in a JSON Lines file
// (--configs) for a device and problem size. Both go through forecast(), so every configuration
// is checked against what the model knows of its kernel's parameters (and --space when given).
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "command_registry.hpp"
#include "static_features_option.hpp"
#include "compose/model_impl.hpp"
#include "data/json_util.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/data/community_formats.hpp"
#include "gpuforecast/forecast.hpp"
#include "surrogate/metrics.hpp"

namespace {

using namespace gpuforecast;

struct PredictArgs {
  std::string model;
  std::vector<std::string> data;
  std::vector<std::string> configs;  // --config NAME=VALUE,...
  std::string configs_file;          // --configs FILE (JSON Lines)
  std::string device;
  std::vector<std::int64_t> problem_size;
  std::string kernel;
  std::string space;  // T1 file
  bool json = false;
  std::size_t top = 0;  // 0: every row, in file order
  std::string features;
};

// One JSON object per line; the error names the file and line.
std::vector<Config> read_config_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw input_error(path, "", "cannot open");
  std::vector<Config> out;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto where = fmt::format("line {}", number);
    nlohmann::json row;
    try {
      row = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw input_error(path, where, fmt::format("not JSON: {}", e.what()));
    }
    if (!row.is_object()) throw input_error(path, where, "expected an object {\"parameter\": value, ...}");
    auto names = std::make_shared<std::vector<std::string>>();
    std::vector<Value> values;
    for (const auto& [name, v] : row.items()) {
      names->push_back(name);
      if (auto value = detail::data::scalar_value(v)) values.push_back(std::move(*value));
      else throw input_error(path, where + ": " + name, fmt::format("value {} is not a number or a string", v.dump()));
    }
    out.emplace_back(std::move(names), std::move(values));
  }
  return out;
}

std::string only_kernel(const Model& model) {
  const auto& kernels = model.info().kernels;
  if (kernels.size() == 1) return kernels.front();
  throw invalid_argument_error(fmt::format("give --kernel: the model was trained on {} kernels", kernels.size()));
}

void print_decisions(const std::vector<Candidate>& candidates, const std::vector<Decision>& d, bool json) {
  if (json) {
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < d.size(); ++i)
      rows.push_back({{"config", candidates[i].config.to_string()},
                      {"median_ms", d[i].forecast.median_ms},
                      {"interval_low_ms", d[i].interval_low_ms},
                      {"interval_high_ms", d[i].interval_high_ms},
                      {"p_fail", d[i].forecast.p_fail},
                      {"defer", d[i].defer},
                      {"reason", d[i].reason},
                      {"extrapolation", d[i].extrapolation}});
    fmt::print("{}\n", rows.dump(1));
    return;
  }
  for (std::size_t i = 0; i < d.size(); ++i) {
    fmt::print("configuration {} [{}]\n  median {:.5g} ms, interval {:.5g}-{:.5g} ms, p_fail {:.3f}, {}\n", i,
               candidates[i].config.to_string(), d[i].forecast.median_ms, d[i].interval_low_ms,
               d[i].interval_high_ms, d[i].forecast.p_fail, d[i].defer ? "defer (measure it): " + d[i].reason : "trusted");
    if (!d[i].extrapolation.empty()) fmt::print("  extrapolation: {}\n", d[i].extrapolation);
  }
}

void predict_configs(const PredictArgs& a, const Model& model) {
  if (a.device.empty()) throw invalid_argument_error("--config and --configs need --device");
  Candidate proto;
  proto.kernel = a.kernel.empty() ? only_kernel(model) : a.kernel;
  proto.device = find_device(a.device);
  proto.problem_size = a.problem_size;
  std::vector<Candidate> candidates;
  auto add = [&](Config c) {
    candidates.push_back(proto);
    candidates.back().config = std::move(c);
  };
  for (const auto& text : a.configs) add(Config::parse(text));
  if (!a.configs_file.empty())
    for (auto& c : read_config_lines(a.configs_file)) add(std::move(c));
  if (!a.features.empty()) {
    std::vector<SpaceData> given(1);
    given[0].path = "the given configurations";
    given[0].kernel = proto.kernel;
    given[0].device = proto.device;
    for (auto& c : candidates) given[0].observations.push_back(Observation{std::move(c), {}});
    const auto coverage = cli::join_static_features(given, a.features);
    candidates.clear();
    for (auto& o : given[0].observations) candidates.push_back(std::move(o.candidate));
    fmt::print(stderr, "{}", describe(coverage));
  }
  const auto decisions = a.space.empty() ? forecast(model, candidates) : forecast(model, candidates, read_t1(a.space).space);
  print_decisions(candidates, decisions, a.json);
}

void predict_files(const PredictArgs& a, const Model& model) {
  Dataset data = Dataset::load(a.data);
  const auto coverage = cli::join_static_features(data.spaces(), a.features);
  if (!a.features.empty()) fmt::print(stderr, "{}", describe(coverage));
  nlohmann::json out = nlohmann::json::array();
  for (const auto& space : data.spaces()) {
    // An adapted model forecasts its new device through the stacked views (gpuforecast adapt).
    const auto& adapted = model.impl().new_device;
    const std::string kind = adapted && space.device && adapted->device == space.device->name &&
                                     adapted->kernel == space.kernel
                                 ? adapted->forecaster->kind()
                                 : model.info().surrogate_kind;
    std::vector<Candidate> candidates;
    candidates.reserve(space.observations.size());
    for (const auto& o : space.observations) candidates.push_back(o.candidate);
    const auto decisions = forecast(model, candidates);
    std::vector<double> pred, truth;
    for (std::size_t i = 0; i < decisions.size(); ++i)
      if (space.observations[i].measurement.ok()) {
        pred.push_back(decisions[i].forecast.median_ms);
        truth.push_back(space.observations[i].measurement.median_ms);
      }
    std::vector<std::size_t> order(decisions.size());
    std::iota(order.begin(), order.end(), 0);
    if (a.top) {
      std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
        return decisions[x].forecast.median_ms < decisions[y].forecast.median_ms;
      });
      order.resize(std::min(order.size(), a.top));
    }
    if (a.json) {
      nlohmann::json rows = nlohmann::json::array();
      for (std::size_t i : order) {
        const auto& o = space.observations[i];
        const auto& f = decisions[i].forecast;
        nlohmann::json row = {{"config", o.candidate.config.key()},
                              {"median_ms", f.median_ms},
                              {"lower_ms", f.lower_ms},
                              {"upper_ms", f.upper_ms},
                              {"p_fail", f.p_fail},
                              {"spread", f.spread},
                              {"status", std::string(to_string(o.measurement.status))}};
        if (o.measurement.ok()) row["measured_ms"] = o.measurement.median_ms;
        if (!decisions[i].extrapolation.empty()) row["extrapolation"] = decisions[i].extrapolation;
        rows.push_back(std::move(row));
      }
      nlohmann::json s = {{"file", space.path}, {"kernel", space.kernel},
                          {"device", space.device ? space.device->name : ""}, {"surrogate", kind},
                          {"parameters", *space.space.names()}, {"forecasts", std::move(rows)}};
      if (truth.size() >= 2) s["spearman"] = spearman(pred, truth);
      out.push_back(std::move(s));
      continue;
    }
    fmt::print("{} ({} @ {}, {} surrogate)\n", space.path, space.kernel, space.device ? space.device->name : "?", kind);
    fmt::print("{:<40} {:>11} {:>23} {:>7} {:>11}\n", "config (" + fmt::format("{} parameters", space.space.names()->size()) + ")",
               "median ms", "90% interval ms", "p_fail", "measured");
    for (std::size_t i : order) {
      const auto& o = space.observations[i];
      const auto& f = decisions[i].forecast;
      fmt::print("{:<40} {:>11.5g} {:>11.5g}-{:<11.5g} {:>7.3f} {:>11}\n", o.candidate.config.key(), f.median_ms, f.lower_ms,
                 f.upper_ms, f.p_fail,
                 o.measurement.ok() ? fmt::format("{:.5g}", o.measurement.median_ms) : std::string(to_string(o.measurement.status)));
    }
    if (truth.size() >= 2)
      fmt::print("Spearman against the {} measured times: {:.3f}; top-1% recall in predicted top-5%: {:.2f}\n\n", truth.size(),
                 spearman(pred, truth), top_recall(pred, truth));
  }
  if (a.json) fmt::print("{}\n", out.dump(1));
}

void run(const PredictArgs& a) {
  const bool given = !a.configs.empty() || !a.configs_file.empty();
  if (given == !a.data.empty()) throw invalid_argument_error("give either --data FILE... or --config / --configs");
  const Model model = load(a.model);
  if (given) predict_configs(a, model);
  else predict_files(a, model);
}

gpuforecast::cli::RegisterCommand reg{"predict", [](CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  auto* c = app.add_subcommand("predict", "Forecast the runtime of configurations (of measurement files, or given)");
  c->add_option("--model", args->model, "trained model file (gpuforecast train)")->required()->check(CLI::ExistingFile);
  c->add_option("--data", args->data, "Kernel Tuner cache or T4 files whose configurations to forecast")
      ->check(CLI::ExistingFile);
  c->add_option("--config", args->configs, "a configuration NAME=VALUE,... to forecast (repeatable)");
  gpuforecast::cli::add_static_features_option(*c, args->features);
  c->add_option("--configs", args->configs_file, "configurations to forecast, one JSON object per line")
      ->check(CLI::ExistingFile);
  c->add_option("--device", args->device, "--config/--configs: the GPU (a name from the device table)");
  c->add_option("--problem-size", args->problem_size, "--config/--configs: the problem size, e.g. 4096,4096")
      ->delimiter(',');
  c->add_option("--kernel", args->kernel, "--config/--configs: the kernel (default: the model's only kernel)");
  c->add_option("--space", args->space, "--config/--configs: T1 file whose space every configuration must lie in")
      ->check(CLI::ExistingFile);
  c->add_flag("--json", args->json, "JSON instead of a table");
  c->add_option("--top", args->top, "--data: only the N predicted fastest, fastest first (0: all, file order)");
  c->callback([args] { run(*args); });
}};

}  // namespace
