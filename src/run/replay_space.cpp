#include "gpuforecast/run/search_target.hpp"

#include <fmt/core.h>

#include <filesystem>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/community_formats.hpp"

namespace gpuforecast {

ReplaySpace parse_replay_space(std::string_view name) {
  for (auto s : {ReplaySpace::automatic, ReplaySpace::t1, ReplaySpace::cached, ReplaySpace::cartesian})
    if (name == replay_space_name(s)) return s;
  throw invalid_argument_error(fmt::format("--space {}: expected auto, t1, cached or cartesian", name));
}

std::string_view replay_space_name(ReplaySpace space) noexcept {
  switch (space) {
    case ReplaySpace::automatic: return "auto";
    case ReplaySpace::t1: return "t1";
    case ReplaySpace::cached: return "cached";
    case ReplaySpace::cartesian: return "cartesian";
  }
  return "?";
}

namespace {

// The T1 file given, or the one the benchmark_hub layout puts beside the data; empty if none.
std::string find_t1(const std::string& path, const SpaceData& data, const std::string& t1_path) {
  if (!t1_path.empty()) return t1_path;
  namespace fs = std::filesystem;
  const fs::path candidate = fs::path(path).parent_path().parent_path().parent_path() / "kernels" / (data.kernel + ".json");
  std::error_code ec;
  if (!data.kernel.empty() && fs::exists(candidate, ec)) return candidate.string();
  return {};
}

void attach_t1(SpaceData& data, const std::string& t1) {
  T1File spec = read_t1(t1);
  // Keep the data's parameters (their order matches the stored keys); take the constraints.
  for (const auto& p : data.space.parameters())
    (void)spec.space.index_of(p.name);  // throws naming the parameter when the T1 file lacks it
  data.space = TuningSpace(data.space.parameters(), spec.space.constraints());
}

void restrict_to_cached(SpaceData& data) {
  std::vector<Config> valid;
  for (const auto& o : data.observations)
    if (o.measurement.ok()) valid.push_back(o.candidate.config);
  if (valid.empty())
    throw invalid_argument_error(fmt::format("{}: no configuration has a valid time, so the cached space is empty", data.path));
  data.space = data.space.restricted_to(valid);
}

}  // namespace

SpaceData load_replay_space(const std::string& path, const std::string& t1_path, ReplaySpace space) {
  SpaceData data = load_space(path);
  const bool own_constraints = !data.space.constraints().empty();
  switch (space) {
    case ReplaySpace::automatic: {
      if (own_constraints && t1_path.empty()) return data;
      const std::string t1 = find_t1(path, data, t1_path);
      if (t1.empty()) restrict_to_cached(data);
      else attach_t1(data, t1);
      return data;
    }
    case ReplaySpace::t1: {
      if (own_constraints && t1_path.empty()) return data;
      const std::string t1 = find_t1(path, data, t1_path);
      if (t1.empty())
        throw invalid_argument_error(fmt::format(
            "--space t1: no T1 file for kernel \"{}\" of {} (looked for <root>/kernels/{}.json); give one with --t1, "
            "or use --space cached",
            data.kernel, path, data.kernel));
      attach_t1(data, t1);
      return data;
    }
    case ReplaySpace::cached:
      restrict_to_cached(data);
      return data;
    case ReplaySpace::cartesian:
      data.space = TuningSpace(data.space.parameters(), {});
      return data;
  }
  return data;
}

std::string describe_replay_space(const SpaceData& data) {
  if (const auto* members = data.space.members()) return fmt::format("cached ({} configurations)", members->size());
  if (!data.space.constraints().empty()) return fmt::format("t1 ({} constraints)", data.space.constraints().size());
  return fmt::format("cartesian ({} configurations)", data.space.cartesian_size());
}

}  // namespace gpuforecast
