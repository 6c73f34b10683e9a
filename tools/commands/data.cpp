// gpuforecast data info FILE...: what is in measurement files (Kernel Tuner cache files, .json
// or .json.gz, and T4 results files), one block per file. A file that cannot be read is reported
// and the others still printed; the exit status is then non-zero.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "command_registry.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Sample coefficient of variation of one configuration's runs; NaN with fewer than two.
double coefficient_of_variation(const std::vector<double>& s) {
  if (s.size() < 2) return std::nan("");
  double mean = 0;
  for (double x : s) mean += x;
  mean /= static_cast<double>(s.size());
  if (mean <= 0) return std::nan("");
  double ss = 0;
  for (double x : s) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(s.size() - 1)) / mean;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

void print_info(const gpuforecast::SpaceData& s) {
  fmt::print("{}\n", s.path);
  fmt::print("  kernel      {}{}\n", s.kernel, s.kernel_name.empty() ? "" : fmt::format(" (entry point {})", s.kernel_name));
  fmt::print("  device      {}{}\n", s.device ? s.device->name : "?",
             !s.device                 ? ""
             : s.device->has_numbers() ? fmt::format(" ({} {})", s.device->vendor, s.device->architecture)
                                       : " (not in the device table: no numbers)");
  std::vector<std::string> names;
  for (const auto& p : s.space.parameters()) names.push_back(fmt::format("{}[{}]", p.name, p.values.size()));
  fmt::print("  parameters  {}: {}\n", names.size(), join(names, ", "));
  fmt::print("  entries     {} (cartesian space {})\n", s.observations.size(), s.space.cartesian_size());
  const std::size_t valid = s.valid_count();
  fmt::print("  valid       {}\n", valid);
  std::map<std::string, std::size_t> failed;
  for (const auto& o : s.observations)
    if (!o.measurement.ok())
      ++failed[o.measurement.reason.empty() ? std::string(gpuforecast::to_string(o.measurement.status))
                                            : o.measurement.reason];
  std::vector<std::string> reasons;
  for (const auto& [r, n] : failed) reasons.push_back(fmt::format("{} {}", r, n));
  fmt::print("  failed      {}{}\n", s.observations.size() - valid, reasons.empty() ? "" : ": " + join(reasons, ", "));
  std::vector<double> medians, cvs;
  std::size_t runs = 0;
  for (const auto& o : s.observations) {
    if (!o.measurement.ok()) continue;
    medians.push_back(o.measurement.median_ms);
    const double cv = coefficient_of_variation(o.measurement.samples_ms);
    if (!std::isnan(cv)) {
      cvs.push_back(cv);
      runs = std::max(runs, o.measurement.samples_ms.size());
    }
  }
  if (medians.empty()) {
    fmt::print("  time        no valid configuration\n");
  } else {
    fmt::print("  time        best {:.4g} ms, median {:.4g} ms, worst {:.4g} ms (per-config medians)\n",
               *std::min_element(medians.begin(), medians.end()), median_of(medians),
               *std::max_element(medians.begin(), medians.end()));
  }
  if (cvs.empty())
    fmt::print("  noise       n/a (no per-run times stored)\n");
  else
    fmt::print("  noise       {:.3g} % (median coefficient of variation over {} configs, up to {} runs each)\n",
               100 * median_of(cvs), cvs.size(), runs);
}

struct InfoArgs {
  std::vector<std::string> files;
};

void run_info(const InfoArgs& a) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < a.files.size(); ++i) {
    if (i) fmt::print("\n");
    try {
      print_info(gpuforecast::load_space(a.files[i]));
    } catch (const gpuforecast::error& e) {
      ++bad;
      std::fflush(stdout);
      fmt::print(stderr, "gpuforecast data info: {}\n", e.what());
    }
  }
  if (bad) throw gpuforecast::error(fmt::format("{} of {} files could not be read", bad, a.files.size()));
}

gpuforecast::cli::RegisterCommand reg{"data", [](CLI::App& app) {
  auto* data = app.add_subcommand("data", "Inspect measurement files (Kernel Tuner cache, T4 results)");
  data->require_subcommand(1);
  auto args = std::make_shared<InfoArgs>();
  auto* info = data->add_subcommand(
      "info", "Per file: kernel, device, parameters, entries, valid, failed by reason, best and median time, noise");
  info->add_option("files", args->files, "Kernel Tuner cache files (.json, .json.gz) or T4 results files")
      ->required();
  info->callback([args] { run_info(*args); });
}};

}  // namespace
