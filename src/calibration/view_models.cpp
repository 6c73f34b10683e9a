#include "calibration/view_models.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>

#include "calibration/versioned_section.hpp"
#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/core/device.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/surrogate/registry.hpp"

namespace gpuforecast {

namespace {
constexpr const char* views_section = "views";
}  // namespace

std::vector<const ViewModel*> ViewModels::of(const std::string& kernel, const std::string& vendor,
                                             const std::string& except) const {
  std::vector<const ViewModel*> out;
  for (const auto& m : models)
    if (m.vendor == vendor && m.device != except && std::binary_search(m.kernels.begin(), m.kernels.end(), kernel))
      out.push_back(&m);
  return out;
}

std::vector<const ViewModel*> ViewModels::of_space(const SpaceData& space) const {
  auto out = of(space.kernel, space.device->vendor, space.device->name);
  if (out.empty())
    throw invalid_argument_error(fmt::format("{} has no other GPU of vendor {} that measured {} among the views' data",
                                             space.path, space.device->vendor, space.kernel));
  return out;
}

const ViewModel* ViewModels::find(const std::string& device) const {
  for (const auto& m : models)
    if (m.device == device) return &m;
  return nullptr;
}

std::shared_ptr<const Device> view_device(const std::string& name) {
  if (auto known = DeviceRegistry::global().try_find(name)) return known;
  return std::make_shared<const Device>(Device::unknown(name));
}

ViewModels fit_view_models(const Dataset& data, const std::string& surrogate, std::uint64_t seed,
                           const std::function<void(const std::string&)>& progress) {
  ViewModels out;
  out.surrogate = surrogate;
  out.seed = seed;
  std::map<std::string, ViewModel> by_device;
  std::map<std::string, std::vector<Observation>> runs;
  std::map<std::string, std::set<std::string>> kernels;
  for (const auto& s : data.spaces()) {
    ViewModel& m = by_device[s.device->name];
    m.device = s.device->name;
    m.vendor = s.device->vendor;
    kernels[m.device].insert(s.kernel);
    for (const auto& o : s.observations)
      if (o.measurement.ok() && o.measurement.median_ms > 0) runs[m.device].push_back(o);
  }
  for (auto& [device, m] : by_device) {
    m.kernels.assign(kernels[device].begin(), kernels[device].end());
    if (runs[device].empty()) continue;  // nothing measured: no view of it
    if (progress) progress(fmt::format("fitting {} on {} alone ({} runs)", surrogate, device, runs[device].size()));
    m.model = make_surrogate(surrogate, seed);
    m.model.fit(runs[device]);
    out.models.push_back(std::move(m));
  }
  return out;
}

std::vector<ViewForecasts> forecast_views(std::span<const ViewModel* const> views,
                                          std::span<const Candidate> candidates) {
  std::vector<ViewForecasts> out(candidates.size());
  std::vector<Candidate> as_there(candidates.begin(), candidates.end());
  for (const ViewModel* v : views) {
    const auto device = view_device(v->device);
    for (auto& c : as_there) c.device = device;
    const std::vector<Forecast> f = v->model.predict(as_there);
    if (f.size() != candidates.size())
      throw error(fmt::format("view model of {} returned {} forecasts for {} candidates", v->device, f.size(),
                              candidates.size()));
    for (std::size_t i = 0; i < f.size(); ++i) out[i].push_back(f[i]);
  }
  return out;
}

void set_views_section(ModelFile& file, const ViewModels& views) {
  ArchiveWriter w;
  w.u32(views_section_version);
  w.str(views.surrogate);
  w.u64(views.seed);
  w.u64(views.models.size());
  for (const auto& m : views.models) {
    w.str(m.device);
    w.str(m.vendor);
    w.u64(m.kernels.size());
    for (const auto& k : m.kernels) w.str(k);
    save_surrogate_with_kind(w, m.model);
  }
  file.set(views_section, w.data());
}

std::optional<ViewModels> views_from(const ModelFile& file, const std::string& origin) {
  auto section = open_versioned_section(file, views_section, views_section_version, origin);
  if (!section) return std::nullopt;
  ArchiveReader& r = section->reader;
  ViewModels out;
  out.surrogate = r.str();
  out.seed = r.u64();
  const auto n = r.u64();
  if (n > 100'000) r.fail(fmt::format("implausible number of view models {}", n));
  for (std::uint64_t i = 0; i < n; ++i) {
    ViewModel m;
    m.device = r.str();
    m.vendor = r.str();
    const auto kernels = r.u64();
    if (kernels > 100'000) r.fail(fmt::format("view model {}: implausible number of kernels {}", m.device, kernels));
    for (std::uint64_t k = 0; k < kernels; ++k) m.kernels.push_back(r.str());
    if (!std::is_sorted(m.kernels.begin(), m.kernels.end())) r.fail(fmt::format("view model {}: kernels out of order", m.device));
    m.model = load_surrogate_with_kind(r, "view model of " + m.device);
    out.models.push_back(std::move(m));
  }
  if (!r.at_end()) r.fail("trailing bytes after the views section");
  return out;
}

}  // namespace gpuforecast
