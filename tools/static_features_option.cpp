#include "static_features_option.hpp"

#include <fmt/core.h>

#include <memory>

namespace gpuforecast::cli {

CLI::Option* add_static_features_option(CLI::App& command, std::string& path) {
  return command
      .add_option("--features", path,
                  "static features to join to the configurations: a table or a folder of them (data/features)")
      ->check(CLI::ExistingPath);
}

std::vector<StaticFeatureCoverage> join_static_features(std::vector<SpaceData>& spaces, const std::string& path) {
  if (path.empty()) return {};
  const auto tables = read_static_feature_tables(path);
  return attach_static_features(spaces, tables);
}

std::function<void(Candidate&)> static_feature_describer(const std::string& path, const Candidate& prototype) {
  if (path.empty()) return {};
  auto tables = std::make_shared<const std::vector<StaticFeatureTable>>(read_static_feature_tables(path));
  const StaticFeatureTable* table = find_static_feature_table(*tables, prototype.kernel, prototype.device.get());
  const std::string device = prototype.device ? prototype.device->name : "no device";
  if (!table) {
    fmt::print(stderr, "static features: none for {} on {} in {}: candidates are marked static_features_known = 0\n",
               prototype.kernel, device, path);
    return [](Candidate& c) { c.features["static_features_known"] = 0.0; };
  }
  fmt::print(stderr, "static features: {} ({} configurations) for {} on {}\n", path, table->size(), prototype.kernel, device);
  return [tables, table](Candidate& c) { (void)describe_with_static_features(c, *table); };
}

}  // namespace gpuforecast::cli
