// gpuforecast adapt: a model file of a GPU the model was not trained on, forecasting it through the
// model's views of the kernel's other GPUs stacked by measurements of it (for_new_device).
#include <fmt/core.h>

#include <memory>
#include <string>
#include <vector>

#include "api/new_device_file.hpp"
#include "command_registry.hpp"
#include "compose/model_impl.hpp"

namespace {

struct AdaptArgs {
  std::string model, out;
  std::vector<std::string> data;
  std::string ratio_surrogate = gpuforecast::NewDeviceOptions{}.ratio_surrogate;
  std::uint64_t seed = 0;
};

void run(const AdaptArgs& a) {
  using namespace gpuforecast;
  const Model adapted = write_new_device_model(a.model, a.data, a.out, {a.ratio_surrogate, a.seed});
  const NewDeviceForecaster& n = *adapted.impl().new_device;
  const auto& f = *n.forecaster;
  std::vector<std::string> view_devices;
  for (const auto* v : f.views()) view_devices.push_back(v->device);
  fmt::print("adapted {} to {} on {} from {} measurements\n", a.model, n.kernel, n.device, n.measurements);
  fmt::print("  the views of {} other GPU(s) stacked: log t = {}\n", f.views().size(),
             f.stacking()->describe(view_devices));
  fmt::print("  times a {} model of measured / stacked, fitted on the same measurements (seed {})\n", f.ratio().kind(),
             a.seed);
  fmt::print("  not calibrated: every forecast defers; calibrate its pairs on other measurements of {} (compare())\n",
             n.device);
  fmt::print("wrote {}\n", a.out);
}

gpuforecast::cli::RegisterCommand reg{"adapt", [](CLI::App& app) {
  auto args = std::make_shared<AdaptArgs>();
  auto* c = app.add_subcommand(
      "adapt", "Adapt a model to a GPU it was not trained on: its views of the kernel's other GPUs, stacked by "
               "measurements of the new GPU (views: gpuforecast calibrate --rehearse)");
  c->add_option("--model", args->model, "model file with views (.gfm)")->required()->check(CLI::ExistingFile);
  c->add_option("--data", args->data, "measurements of the new GPU: one kernel on one device")
      ->required()
      ->check(CLI::ExistingFile);
  c->add_option("--out", args->out, "adapted model file to write (.gfm)")->required();
  c->add_option("--ratio-surrogate", args->ratio_surrogate, "surrogate kind fitted to measured / stacked")
      ->capture_default_str();
  c->add_option("--seed", args->seed, "seed of the ratio model")->capture_default_str();
  c->callback([args] { run(*args); });
}};

}  // namespace
