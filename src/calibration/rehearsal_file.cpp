#include "calibration/rehearsal_file.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "calibration/calibration_data.hpp"
#include "calibration/model_bundle.hpp"
#include "calibration/new_device_section.hpp"
#include "calibration/versioned_section.hpp"
#include "calibration/view_models.hpp"
#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/registry.hpp"

namespace gpuforecast {

namespace {

constexpr const char* rehearsal_section = "rehearsal";

void save_forecasts(ArchiveWriter& w, const std::vector<Forecast>& f) {
  auto column = [&](auto get) {
    std::vector<double> v;
    v.reserve(f.size());
    for (const auto& x : f) v.push_back(get(x));
    w.f64s(v);
  };
  column([](const Forecast& x) { return x.median_ms; });
  column([](const Forecast& x) { return x.lower_ms; });
  column([](const Forecast& x) { return x.upper_ms; });
  column([](const Forecast& x) { return x.p_fail; });
  column([](const Forecast& x) { return x.spread; });
}

// One set of forecast columns, each as long as the space's runtimes (`n`; npos: as the first).
std::vector<Forecast> load_forecasts(ArchiveReader& r, const std::string& what, std::size_t n = std::string::npos) {
  const auto median = r.f64s(), lower = r.f64s(), upper = r.f64s(), p_fail = r.f64s(), spread = r.f64s();
  if (n == std::string::npos) n = median.size();
  for (const std::vector<double>* v : {&median, &lower, &upper, &p_fail, &spread})
    if (v->size() != n) r.fail(fmt::format("rehearsal space {}: columns of unequal length", what));
  std::vector<Forecast> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back({median[i], lower[i], upper[i], p_fail[i], spread[i], std::nullopt});
  return out;
}

void save_space(ArchiveWriter& w, const RehearsalSpace& s) {
  w.str(s.kernel);
  w.str(s.device);
  w.str(s.vendor);
  w.f64s(s.data.observed_ms);
  save_forecasts(w, s.data.forecasts);
  // Version 2: the views, one forecast column set per view GPU.
  w.u64(s.view_devices.size());
  for (std::size_t v = 0; v < s.view_devices.size(); ++v) {
    w.str(s.view_devices[v]);
    std::vector<Forecast> column;
    column.reserve(s.data.views.size());
    for (const auto& views : s.data.views) column.push_back(views.at(v));
    save_forecasts(w, column);
  }
}

RehearsalSpace load_space(ArchiveReader& r, std::uint32_t version) {
  RehearsalSpace s;
  s.kernel = r.str();
  s.device = r.str();
  s.vendor = r.str();
  s.data.name = s.kernel + "/" + s.device;
  if (version < 2) {  // the forecasts' columns came before the runtimes: read them, then check
    s.data.forecasts = load_forecasts(r, s.data.name);
    s.data.observed_ms = r.f64s();
    if (s.data.observed_ms.size() != s.data.forecasts.size())
      r.fail(fmt::format("rehearsal space {}: columns of unequal length", s.data.name));
  } else {
    s.data.observed_ms = r.f64s();
    s.data.forecasts = load_forecasts(r, s.data.name, s.data.observed_ms.size());
    const auto views = r.u64();
    if (views > 10'000) r.fail(fmt::format("rehearsal space {}: implausible number of views {}", s.data.name, views));
    if (views > 0) s.data.views.resize(s.data.observed_ms.size());
    for (std::uint64_t v = 0; v < views; ++v) {
      s.view_devices.push_back(r.str());
      const auto column = load_forecasts(r, s.data.name + " view " + s.view_devices.back(), s.data.observed_ms.size());
      for (std::size_t i = 0; i < column.size(); ++i) s.data.views[i].push_back(column[i]);
    }
  }
  const auto device = std::make_shared<const Device>(Device::unknown(s.device));
  for (std::size_t i = 0; i < s.data.observed_ms.size(); ++i) {
    Candidate c;
    c.kernel = s.kernel;
    c.device = device;
    s.data.candidates.push_back(std::move(c));
  }
  return s;
}

// The successful runs of one space, at most `limit` of them in a seeded sample.
TimedCandidates sampled_runs(const SpaceData& space, std::size_t limit, std::uint64_t seed) {
  TimedCandidates all = successful_runs(space.observations);
  if (all.candidates.size() <= limit) return all;
  const std::vector<std::size_t> order = device_sample_order(all.candidates.size(), seed);
  TimedCandidates out;
  for (std::size_t k = 0; k < limit; ++k) {
    out.candidates.push_back(all.candidates[order[k]]);
    out.median_ms.push_back(all.median_ms[order[k]]);
  }
  return out;
}

}  // namespace

void set_rehearsal_section(ModelFile& file, const StoredRehearsal& rehearsal) {
  ArchiveWriter w;
  w.u32(rehearsal_section_version);
  w.str(rehearsal.surrogate);
  w.u64(rehearsal.seed);
  w.u64(rehearsal.spaces.size());
  for (const auto& s : rehearsal.spaces) save_space(w, s);
  file.set(rehearsal_section, w.data());
}

std::optional<StoredRehearsal> rehearsal_from(const ModelFile& file, const std::string& origin) {
  auto section = open_versioned_section(file, rehearsal_section, rehearsal_section_version, origin);
  if (!section) return std::nullopt;
  ArchiveReader& r = section->reader;
  StoredRehearsal out;
  out.surrogate = r.str();
  out.seed = r.u64();
  const auto n = r.u64();
  for (std::uint64_t i = 0; i < n; ++i) out.spaces.push_back(load_space(r, section->version));
  if (!r.at_end()) r.fail("trailing bytes after the rehearsal section");
  return out;
}

StoredRehearsal rehearse_model_file(const std::string& model_path, std::span<const std::string> data_files,
                                    const std::string& out_path, const RehearsalFitOptions& options,
                                    const std::function<void(const std::string&)>& progress) {
  ModelFile file = read_model_file(model_path);
  refuse_if_adapted(file, model_path, "calibrate --rehearse");
  StoredRehearsal out;
  out.surrogate = options.surrogate.empty() ? surrogate_from(file, model_path).kind() : options.surrogate;
  out.seed = options.seed;
  const Dataset data = Dataset::load(data_files);
  std::set<std::string> devices;
  for (const auto& s : data.spaces()) devices.insert(s.device->name);
  if (devices.size() < 2)
    throw invalid_argument_error(fmt::format(
        "rehearsing needs measurements of at least two GPUs (each is left out in turn); the {} file(s) hold {}",
        data_files.size(), devices.size()));
  for (const auto& device : devices) {
    std::vector<Observation> train;
    for (const auto& s : data.spaces())
      if (s.device->name != device)
        for (const auto& o : s.observations)
          if (o.measurement.ok() && o.measurement.median_ms > 0) train.push_back(o);
    if (progress) progress(fmt::format("refitting {} without {} ({} runs)", out.surrogate, device, train.size()));
    AnySurrogate model = make_surrogate(out.surrogate, options.seed);
    model.fit(train);
    for (const auto& s : data.spaces()) {
      if (s.device->name != device) continue;
      TimedCandidates runs = sampled_runs(s, options.max_configurations, options.seed);
      if (runs.candidates.empty()) continue;
      RehearsalSpace r{s.kernel, device, s.device->vendor, {}};
      r.data.name = s.kernel + "/" + device;
      r.data.forecasts = model.predict(runs.candidates);
      r.data.candidates = std::move(runs.candidates);
      r.data.observed_ms = std::move(runs.median_ms);
      out.spaces.push_back(std::move(r));
    }
  }
  const ViewModels views = fit_view_models(data, out.surrogate, options.seed, progress);
  for (auto& r : out.spaces) {
    const std::vector<const ViewModel*> of = views.of(r.kernel, r.vendor, r.device);
    for (const ViewModel* v : of) r.view_devices.push_back(v->device);
    if (!of.empty()) r.data.views = forecast_views(of, r.data.candidates);
  }
  set_rehearsal_section(file, out);
  set_views_section(file, views);
  write_model_file(out_path, file);
  return out;
}

ModelFileCrossDevice adapt_model_file_across_devices(const std::string& model_path, const std::string& data_file,
                                                     const std::string& out_path, const CrossDeviceOptions& options,
                                                     bool all_vendors, bool use_views) {
  ModelFile file = read_model_file(model_path);
  refuse_if_adapted(file, model_path, "calibrate --cross-device");
  const auto stored = rehearsal_from(file, model_path);
  if (!stored)
    throw invalid_argument_error(fmt::format(
        "{} holds no rehearsal: run `gpuforecast calibrate --rehearse` on it first (with the training data)", model_path));
  const AnySurrogate surrogate = surrogate_from(file, model_path);
  ModelFileCrossDevice out;
  auto& a = out.adaptation;
  a.calibration.surrogate_kind = surrogate.kind();
  a.calibration.files = 1;
  const std::vector<std::string> files{data_file};
  warn_if_trained_on(training_summary_from(file, model_path), files, a.calibration.warnings);

  const DeviceFile d = load_device_file(data_file);
  const auto& device = d.device();
  a.device = device->name;
  const auto& cands = d.runs.candidates;
  if (cands.size() <= options.samples)
    throw invalid_argument_error(fmt::format("{}: {} successful runs, need more than the {} asked for", data_file,
                                             cands.size(), options.samples));

  // Views when the model file has them for the new GPU's vendor and kernel; single forecasts else.
  const auto views = use_views ? views_from(file, model_path) : std::nullopt;
  const std::vector<const ViewModel*> new_views =
      views ? views->of(cands.front().kernel, device->vendor, device->name) : std::vector<const ViewModel*>{};
  const bool stacked = !new_views.empty();
  std::vector<RehearsalDevice> units;
  for (const auto& s : stored->spaces) {
    if (s.device == device->name || (!all_vendors && s.vendor != device->vendor)) {
      out.left_out.push_back(s.data.name);
      continue;
    }
    if (stacked && s.data.views.empty()) {
      out.left_out.push_back(s.data.name + " (no other GPU of its kernel to view it from)");
      continue;
    }
    units.push_back(s.data);
    if (!stacked) units.back().views.clear();
  }
  if (units.empty())
    throw invalid_argument_error(fmt::format("{}: the rehearsal holds no other {} GPU", model_path, device->vendor));
  out.rule = rehearse_new_device(units, options);

  const std::vector<std::size_t> order = device_sample_order(cands.size(), options.calibration.seed);
  std::vector<Forecast> forecasts;
  NewDeviceCalibration adapted;
  if (stacked) {
    const std::vector<ViewForecasts> space_views = forecast_views(new_views, cands);
    const auto k = drawn_runs(d.runs, space_views, order, options.samples);
    adapted = adapt_with_rule(out.rule, device->name, k.candidates, k.forecasts, k.times, cands, space_views);
    forecasts = adapted.stacking->apply(space_views);
    scope_to_views(adapted.calibrator, new_views, *adapted.stacking);
    out.view_devices = adapted.calibrator.device_scope()->view_devices;
    out.stacking = adapted.stacking;
  } else {
    forecasts = surrogate.predict(cands);
    const auto k = drawn_runs(d.runs, forecasts, order, options.samples);
    adapted = adapt_with_rule(out.rule, device->name, k.candidates, k.forecasts, k.times, cands, forecasts);
  }
  out.check = adapted.check;
  a.calibration.calibrator = std::move(adapted.calibrator);
  a.calibration.measurements = options.samples;
  const SelectiveCalibrator& cal = a.calibration.calibrator;
  judge_held_out(cal, d.runs, forecasts, order, options.samples, a);
  set_calibration_section(file, cal);
  write_model_file(out_path, file);
  return out;
}

}  // namespace gpuforecast
