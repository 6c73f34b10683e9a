#include "calibration/new_device_section.hpp"

#include <fmt/core.h>

#include <tuple>
#include <utility>
#include <vector>

#include "calibration/versioned_section.hpp"
#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/surrogate/registry.hpp"

namespace gpuforecast {

namespace {
constexpr const char* new_device_section = "new_device";
constexpr std::uint32_t new_device_section_version = 1;

// The kernel and the device the section adapts to, first after its version.
std::pair<std::string, std::string> read_target(ArchiveReader& r) {
  std::string kernel = r.str();
  return {std::move(kernel), r.str()};
}
}  // namespace

void set_new_device_section(ModelFile& file, const NewDeviceForecaster& d) {
  const auto& f = *d.forecaster;
  if (!f.stacking()) throw invalid_argument_error("a new device's forecaster must be fitted before it is saved");
  ArchiveWriter w;
  w.u32(new_device_section_version);
  w.str(d.kernel);
  w.str(d.device);
  w.u64(d.measurements);
  w.u64(f.views().size());
  for (const auto* v : f.views()) w.str(v->device);
  w.f64(f.stacking()->intercept);
  w.f64s(f.stacking()->weights);
  save_surrogate_with_kind(w, f.ratio());
  file.set(new_device_section, w.data());
}

std::optional<NewDeviceForecaster> new_device_from(const ModelFile& file, const std::string& origin,
                                                   const ViewModels* views) {
  auto section = open_versioned_section(file, new_device_section, new_device_section_version, origin);
  if (!section) return std::nullopt;
  ArchiveReader& r = section->reader;
  NewDeviceForecaster d;
  std::tie(d.kernel, d.device) = read_target(r);
  d.measurements = r.u64();
  const auto n = r.u64();
  if (n == 0 || n > 100'000) r.fail(fmt::format("implausible number of views {}", n));
  std::vector<const ViewModel*> stacked;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::string name = r.str();
    const ViewModel* v = views ? views->find(name) : nullptr;
    if (!v)
      r.fail(fmt::format("{} is forecast through the view of {}, which the file's \"views\" section does not hold",
                         d.device, name));
    stacked.push_back(v);
  }
  ViewStacking stacking;
  stacking.intercept = r.f64();
  stacking.weights = r.f64s();
  if (stacking.weights.size() != stacked.size())
    r.fail(fmt::format("{} weights for {} views", stacking.weights.size(), stacked.size()));
  AnySurrogate ratio = load_surrogate_with_kind(r, "ratio model of " + d.device);
  if (!r.at_end()) r.fail("trailing bytes after the new_device section");
  d.forecaster = std::make_shared<const StackedViewsSurrogate>(
      StackedViewsSurrogate::restored(std::move(stacked), std::move(stacking), std::move(ratio)));
  return d;
}

void refuse_if_adapted(const ModelFile& file, const std::string& origin, const std::string& what) {
  auto section = open_versioned_section(file, new_device_section, new_device_section_version, origin);
  if (!section) return;
  const auto [kernel, device] = read_target(section->reader);
  throw invalid_argument_error(fmt::format(
      "{} forecasts {} on {} through views stacked by gpuforecast adapt, which {} would not see: use the model it "
      "was adapted from, or calibrate the adapted model's pairs (compare.hpp)",
      origin, kernel, device, what));
}

}  // namespace gpuforecast
