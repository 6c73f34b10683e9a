#pragma once
// --features PATH for the commands that read measurements (train, eval, predict, search): joins
// the stored static features (data/features/, docs/features.md) to the configurations and says
// how many had them; a configuration without them is kept, marked static_features_known = 0.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "gpuforecast/data/dataset.hpp"
#include "data/static_feature_table.hpp"

namespace gpuforecast::cli {

CLI::Option* add_static_features_option(CLI::App& command, std::string& path);

// Nothing when `path` is empty; describe() the result for the user.
std::vector<StaticFeatureCoverage> join_static_features(std::vector<SpaceData>& spaces, const std::string& path);

// For a search without measurement files (live, farm): describes each candidate from the table
// of the prototype's kernel and the architecture of its device, and says on stderr which table
// that is, or that there is none. Empty when `path` is.
std::function<void(Candidate&)> static_feature_describer(const std::string& path, const Candidate& prototype);

}  // namespace gpuforecast::cli
