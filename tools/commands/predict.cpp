// gpuforecast predict: forecasts every configuration of measurement files with a trained model;
// where the file has a measured time it is shown beside the forecast (and summarised).
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "command_registry.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/metrics.hpp"
#include "gpuforecast/surrogate/model_file.hpp"

namespace {

struct PredictArgs {
  std::string model;
  std::vector<std::string> data;
  bool json = false;
  std::size_t top = 0;  // 0: every row, in file order
};

void run(const PredictArgs& a) {
  using namespace gpuforecast;
  const auto model = load_surrogate(a.model);
  const Dataset data = Dataset::load(a.data);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& space : data.spaces()) {
    std::vector<Candidate> candidates;
    candidates.reserve(space.observations.size());
    for (const auto& o : space.observations) candidates.push_back(o.candidate);
    const auto forecasts = model.predict(candidates);
    std::vector<double> pred, truth;
    for (std::size_t i = 0; i < forecasts.size(); ++i)
      if (space.observations[i].measurement.ok()) {
        pred.push_back(forecasts[i].median_ms);
        truth.push_back(space.observations[i].measurement.median_ms);
      }
    std::vector<std::size_t> order(forecasts.size());
    std::iota(order.begin(), order.end(), 0);
    if (a.top) {
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t x, std::size_t y) { return forecasts[x].median_ms < forecasts[y].median_ms; });
      order.resize(std::min(order.size(), a.top));
    }
    if (a.json) {
      nlohmann::json rows = nlohmann::json::array();
      for (std::size_t i : order) {
        const auto& o = space.observations[i];
        const auto& f = forecasts[i];
        nlohmann::json row = {{"config", o.candidate.config.key()},
                              {"median_ms", f.median_ms},
                              {"lower_ms", f.lower_ms},
                              {"upper_ms", f.upper_ms},
                              {"p_fail", f.p_fail},
                              {"spread", f.spread},
                              {"status", std::string(to_string(o.measurement.status))}};
        if (o.measurement.ok()) row["measured_ms"] = o.measurement.median_ms;
        rows.push_back(std::move(row));
      }
      nlohmann::json s = {{"file", space.path}, {"kernel", space.kernel},
                          {"device", space.device ? space.device->name : ""}, {"surrogate", model.kind()},
                          {"parameters", *space.space.names()}, {"forecasts", std::move(rows)}};
      if (truth.size() >= 2) s["spearman"] = spearman(pred, truth);
      out.push_back(std::move(s));
      continue;
    }
    fmt::print("{} ({} @ {}, {} surrogate)\n", space.path, space.kernel, space.device ? space.device->name : "?",
               model.kind());
    fmt::print("{:<40} {:>11} {:>23} {:>7} {:>11}\n", "config (" + fmt::format("{} parameters", space.space.names()->size()) + ")",
               "median ms", "90% interval ms", "p_fail", "measured");
    for (std::size_t i : order) {
      const auto& o = space.observations[i];
      const auto& f = forecasts[i];
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

gpuforecast::cli::RegisterCommand reg{"predict", [](CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  auto* c = app.add_subcommand("predict", "Forecast the runtime of every configuration in measurement files");
  c->add_option("--model", args->model, "trained model file (gpuforecast train)")->required()->check(CLI::ExistingFile);
  c->add_option("--data", args->data, "Kernel Tuner cache or T4 files whose configurations to forecast")
      ->required()
      ->check(CLI::ExistingFile);
  c->add_flag("--json", args->json, "JSON instead of a table");
  c->add_option("--top", args->top, "only the N predicted fastest, fastest first (0: all, file order)");
  c->callback([args] { run(*args); });
}};

}  // namespace
