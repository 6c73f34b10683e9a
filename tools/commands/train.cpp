// gpuforecast train: fits a surrogate on measurement files and writes one model file.
#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "command_registry.hpp"
#include "static_features_option.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "surrogate/openmp_environment.hpp"

namespace {

struct TrainArgs {
  std::vector<std::string> data;
  std::string out;
  std::string surrogate = "default";
  std::uint64_t seed = 0;
  std::string features;
};

void run(const TrainArgs& a) {
  using namespace gpuforecast;
  detail::ensure_passive_openmp_wait();
  auto model = make_surrogate(a.surrogate, a.seed);  // before loading: unknown names fail fast
  Dataset data = Dataset::load(a.data);
  const auto coverage = cli::join_static_features(data.spaces(), a.features);
  const auto observations = data.observations(false);
  if (observations.empty()) throw invalid_argument_error("the --data files hold no measurements");
  const auto t0 = std::chrono::steady_clock::now();
  model.fit(observations);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto summary = TrainingSummary::of(observations);
  save_surrogate(a.out, model, summary);
  std::string kernels, devices;
  for (const auto& k : summary.kernels) kernels += (kernels.empty() ? "" : ", ") + k;
  for (const auto& d : summary.devices) devices += (devices.empty() ? "" : ", ") + d;
  fmt::print("trained {} surrogate{} on {} observations ({} ok, {} failed) in {:.1f} s\n", model.kind(),
             a.surrogate == "default" ? " (default)" : "", summary.observations, summary.ok, summary.failed, seconds);
  fmt::print("  kernels: {}\n  devices: {}\n", kernels, devices);
  if (!a.features.empty()) fmt::print("{}", describe(coverage));
  fmt::print("wrote {} ({:.1f} MiB)\n", a.out, static_cast<double>(std::filesystem::file_size(a.out)) / (1 << 20));
}

gpuforecast::cli::RegisterCommand reg{"train", [](CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  auto* c = app.add_subcommand("train", "Train a runtime surrogate on measurement files and write a model file");
  c->add_option("--data", args->data, "measurements: Kernel Tuner cache or T4 files (.json, .json.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  c->add_option("--out", args->out, "model file to write (.gfm)")->required();
  c->add_option("--surrogate", args->surrogate,
                "default (what measures best in this build), ensemble, transformer, xgboost, gp, ridge, knn, or a blend such as \"ensemble(xgboost=0.8,transformer=0.2)\"")
      ->capture_default_str();
  c->add_option("--seed", args->seed, "seed of every random choice in training")->capture_default_str();
  gpuforecast::cli::add_static_features_option(*c, args->features);
  c->callback([args] { run(*args); });
}};

}  // namespace
