#include "surrogate/compact.hpp"

#include <fmt/core.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <numeric>
#include <random>

#include "boosting.hpp"
#include "common/parallel_indices.hpp"
#include "compact_weights.hpp"
#include "flat_trees.hpp"
#include "kernel_correction.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "tabular.hpp"

namespace gpuforecast {

namespace {
constexpr double z95 = 1.6448536269514722;  // the 5% and 95% quantiles of a normal, in standard deviations
}

struct CompactSurrogate::State {
  detail::TabularBase base;           // rows empty after a load until update() decodes `packed_rows`
  std::string packed_rows;            // zlib-compressed archive of base.rows (kept across loads)
  std::vector<std::size_t> columns;   // encoder columns fed to the trees
  std::vector<detail::FlatTrees> members;
  // Kernel-independent models: each thinly measured kernel's correction (kernel_correction.hpp).
  std::map<std::string, detail::KernelCorrection> corrections;
  std::optional<detail::FlatTrees> failure;  // margin of P(fail); none: constant rate
  double failure_rate = 0;
  double q05 = 0, q95 = 0;  // held-out residual quantiles of one member, natural log
  // The observations of the last fit, in memory only: update() refits the teacher on them.
  std::vector<Observation> observations;

  [[nodiscard]] std::vector<float> features(const std::vector<double>& x, std::size_t rows, std::size_t dim) const {
    std::vector<float> out(rows * columns.size());
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < columns.size(); ++j)
        out[i * columns.size() + j] = static_cast<float>(x[i * dim + columns[j]]);
    return out;
  }
};

namespace detail {

std::vector<float> compact_row_weights(const TrainingRows& rows, const std::vector<std::size_t>& ok,
                                    const CompactOptions& o) {
  std::vector<float> w(rows.rows(), 1.0f);
  std::vector<std::vector<std::size_t>> groups(rows.group_keys.size());
  for (const auto i : ok) groups[rows.group[i]].push_back(i);
  if (o.group_balance > 0) {
    std::size_t largest = 0;
    for (const auto& g : groups) largest = std::max(largest, g.size());
    for (const auto& g : groups) {
      if (g.empty()) continue;
      const double b = std::min(o.max_group_weight, std::pow(static_cast<double>(largest) / static_cast<double>(g.size()), o.group_balance));
      for (const auto i : g) w[i] = static_cast<float>(b);
    }
  }
  if (o.fast_weight <= 0) return w;
  for (auto& g : groups) {
    if (g.size() < o.fast_min_group) continue;
    std::sort(g.begin(), g.end(), [&](std::size_t a, std::size_t b) { return rows.log_ms[a] < rows.log_ms[b] || (rows.log_ms[a] == rows.log_ms[b] && a < b); });
    for (std::size_t r = 0; r < g.size(); ++r) {
      const double u = g.size() > 1 ? static_cast<double>(r) / static_cast<double>(g.size() - 1) : 0.0;
      w[g[r]] *= static_cast<float>(1.0 + o.fast_weight * std::exp(-u / o.fast_scale));
    }
  }
  return w;
}

}  // namespace detail

namespace {

std::string pack_rows(const detail::TrainingRows& rows) {
  ArchiveWriter w;
  rows.save(w);
  const std::string& raw = w.data();
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
                static_cast<uLong>(raw.size()), Z_BEST_SPEED) != Z_OK)
    throw error("compact surrogate: compressing the training rows failed");
  out.resize(size);
  ArchiveWriter framed;
  framed.u64(raw.size());
  framed.bytes(out);
  return framed.release();
}

detail::TrainingRows unpack_rows(const std::string& packed, const std::string& origin) {
  ArchiveReader framed(packed, origin);
  const auto raw_size = framed.u64();
  const std::string z = framed.bytes();
  if (raw_size > (std::uint64_t{1} << 34)) framed.fail("compact: implausible size of the training rows");
  std::string raw(raw_size, '\0');
  uLongf size = static_cast<uLongf>(raw_size);
  if (uncompress(reinterpret_cast<Bytef*>(raw.data()), &size, reinterpret_cast<const Bytef*>(z.data()),
                 static_cast<uLong>(z.size())) != Z_OK ||
      size != raw_size)
    framed.fail("compact: the stored training rows do not decompress");
  ArchiveReader r(raw, origin);  // views `raw`, which outlives it
  auto rows = detail::TrainingRows::load(r);
  if (!r.at_end()) r.fail("compact: trailing bytes after the training rows");
  return rows;
}

XgboostOptions boosting(const CompactOptions& o, std::uint64_t seed) {
  XgboostOptions p;
  p.rounds = o.rounds;
  p.failure_rounds = o.failure_rounds;
  p.eta = o.eta;
  p.max_depth = o.max_depth;
  p.min_child_weight = o.min_child_weight;
  p.subsample = o.subsample;
  p.colsample_bytree = o.colsample_bytree;
  p.lambda = o.lambda;
  p.seed = seed;
  return p;
}

// Member m's seed: distinct per member, fixed by the surrogate's seed.
std::uint64_t member_seed(std::uint64_t seed, std::size_t m) { return seed * 1000003ULL + 7919ULL * (m + 1); }

// Observed configurations with parameters swapped, each with probability p, for the value of the
// same parameter in another observation of the same kernel (so every value was seen in training).
std::vector<Candidate> synthetic_candidates(std::span<const Observation> observations, std::size_t count, double p,
                                            std::uint64_t seed) {
  std::vector<Candidate> out;
  if (observations.empty() || count == 0) return out;
  std::mt19937_64 rng(seed ^ 0x5deece66dULL);
  std::uniform_int_distribution<std::size_t> pick(0, observations.size() - 1);
  std::bernoulli_distribution swap(p);
  out.reserve(count);
  for (std::size_t k = 0; k < count; ++k) {
    Candidate c = observations[pick(rng)].candidate;
    auto& values = c.config.values();
    for (std::size_t j = 0; j < values.size(); ++j) {
      if (!swap(rng)) continue;
      const Candidate& donor = observations[pick(rng)].candidate;
      if (donor.kernel == c.kernel && donor.config.shared_names() == c.config.shared_names()) values[j] = donor.config[j];
    }
    out.push_back(std::move(c));
  }
  return out;
}

struct TrainingSet {
  std::vector<float> x, y, weight;
  void add(const float* row, std::size_t cols, float target, float w = 1.0f) {
    x.insert(x.end(), row, row + cols);
    y.push_back(target);
    weight.push_back(w);
  }
};

// The encoder columns of `roles`, less the static features not asked for: the PTX instruction
// mix ("feature.ptx_*") is the part "resources" leaves out.
std::vector<std::size_t> columns_of(const FeatureEncoder& encoder, std::initializer_list<FeatureRole> roles,
                                    const CompactOptions& o) {
  auto columns = encoder.columns(roles);
  const auto& names = encoder.feature_names();
  const auto& role = encoder.roles();
  std::erase_if(columns, [&](std::size_t j) {
    if (role[j] != FeatureRole::feature || o.static_features == "all") return false;
    return o.static_features == "none" || names[j].starts_with("feature.ptx_");
  });
  return columns;
}

// "kernel|problem" -> "kernel" (a problem key holds no '|').
std::string kernel_of(const std::string& kernel_key) { return kernel_key.substr(0, kernel_key.rfind('|')); }

// The thin kernels' corrections of the members (kernel_correction.hpp), each fitted on its rows,
// its prior weight chosen with `unseen`, a model that never saw the thin kernels. The kernels are
// fitted concurrently, each deterministically.
void fit_corrections(CompactSurrogate::State& s, const std::map<std::string, std::vector<std::size_t>>& thin,
                     const std::vector<double>& y_all, const std::vector<float>& x_all,
                     const detail::FlatTrees& unseen, std::uint64_t seed) {
  const auto& rows = s.base.rows;
  const auto& encoder = s.base.encoder;
  // The kernel's parameters, problem and device: its static features, learned from a few dozen
  // points, cost more than they told (measured: Spearman 0.56 with them, 0.64 without, on 20
  // points of dedispersion_milo).
  const auto columns = encoder.columns({FeatureRole::device, FeatureRole::problem, FeatureRole::parameter_raw,
                                        FeatureRole::parameter_category});
  const std::vector<std::pair<std::string, std::vector<std::size_t>>> kernels(thin.begin(), thin.end());
  const std::size_t c = s.columns.size(), dim = rows.dim;
  std::vector<std::optional<detail::KernelCorrection>> fitted(kernels.size());
  detail::parallel_for_each_index(kernels.size(), detail::parallel_threads(kernels.size(), 0), [&](std::size_t k) {
    const auto& idx = kernels[k].second;
    const auto x_prior = detail::rows_at<float>(x_all, c, idx);
    std::vector<float> y;
    for (const auto i : idx) y.push_back(static_cast<float>(y_all[i]));
    fitted[k] = detail::fit_kernel_correction(detail::rows_at<double>(rows.x, dim, idx), dim, columns, y,
                                              detail::mean_forecast({&unseen, 1}, x_prior, idx.size()),
                                              detail::mean_forecast(s.members, x_prior, idx.size()), {},
                                              member_seed(seed, 1000 + k));
  });
  s.corrections.clear();
  for (std::size_t k = 0; k < kernels.size(); ++k) s.corrections.emplace(kernels[k].first, std::move(*fitted[k]));
}

void train(CompactSurrogate::State& s, const CompactOptions& o) {
  const auto& rows = s.base.rows;
  s.columns = o.kernel_independent
                  ? columns_of(s.base.encoder, {FeatureRole::device, FeatureRole::problem, FeatureRole::feature}, o)
                  : columns_of(s.base.encoder, {FeatureRole::device, FeatureRole::problem, FeatureRole::kernel,
                                                FeatureRole::parameter_raw, FeatureRole::parameter_category,
                                                FeatureRole::feature}, o);
  if (s.columns.size() == s.base.encoder.columns({FeatureRole::device, FeatureRole::problem}).size() &&
      o.kernel_independent)
    throw invalid_argument_error(
        "compact surrogate: kernel_independent=true forecasts from static features, and the observations have "
        "none (join them with --features, docs/features.md)");
  const std::size_t c = s.columns.size();
  auto ok = detail::ok_rows(rows);
  if (o.kernel_independent) {
    // A configuration the tables do not hold (static_features_known = 0) has nothing a
    // kernel-independent model can learn from: its other feature columns are blanks, not values.
    const auto& all = s.base.encoder.feature_names();
    const auto known = std::find(all.begin(), all.end(), "feature.static_features_known.log2");
    if (known != all.end()) {
      const auto j = static_cast<std::size_t>(known - all.begin());
      std::erase_if(ok, [&](std::size_t i) { return rows.x[i * rows.dim + j] == 0; });
    }
    if (ok.empty())
      throw invalid_argument_error(
          "compact surrogate: kernel_independent=true and no successful observation has static features");
  }
  // Thinly measured kernels get corrections of their own (kernel_correction.hpp).
  std::map<std::string, std::vector<std::size_t>> thin;
  if (o.kernel_independent && o.kernel_correction) {
    std::map<std::string, std::vector<std::size_t>> by_kernel;
    for (const auto i : ok) by_kernel[kernel_of(rows.group_kernel_keys[rows.group[i]])].push_back(i);
    for (auto& [kernel, idx] : by_kernel)
      if (idx.size() < o.correction_below) thin.emplace(kernel, std::move(idx));
    if (thin.size() == by_kernel.size()) thin.clear();  // no kernel measured well enough to judge the others by
  }
  const auto y_all = s.base.norm.targets(rows);
  const auto x_all = s.features(rows.x, rows.rows(), rows.dim);

  const auto weight = detail::compact_row_weights(rows, ok, o);
  TrainingSet observed;
  for (const auto i : ok) observed.add(x_all.data() + i * c, c, static_cast<float>(y_all[i]), weight[i]);

  // The teacher's opinion about configurations nobody measured.
  TrainingSet taught = observed;
  if (!o.teacher.empty() && !s.observations.empty()) {
    auto teacher = make_surrogate(o.teacher, o.seed ^ 0x7ea7c4e5ULL);
    teacher.fit(s.observations);
    const auto count = std::min(o.max_synthetic, static_cast<std::size_t>(o.synthetic_per_observation *
                                                                          static_cast<double>(s.observations.size())));
    const auto synthetic = synthetic_candidates(s.observations, count, o.swap_probability, o.seed);
    const auto forecasts = teacher.predict(synthetic);
    const auto xs = s.features(s.base.encoder.encode(synthetic), synthetic.size(), s.base.encoder.dimension());
    for (std::size_t i = 0; i < synthetic.size(); ++i) {
      const double log_ms = std::log(forecasts[i].median_ms);
      if (!std::isfinite(log_ms)) continue;
      taught.add(xs.data() + i * c, c, static_cast<float>(log_ms - s.base.norm.offset(synthetic[i])));
    }
  }

  // Members (and the held-out probe) train concurrently: each uses one thread on these sizes.
  std::vector<std::function<detail::FlatTrees()>> jobs;
  const auto launch = [&](const TrainingSet& set, std::uint64_t seed) {
    jobs.push_back([&set, &o, seed, c] {
      return detail::boost_flat_trees(set.x, c, set.y, boosting(o, seed), false, nullptr, &set.weight);
    });
  };
  // Members past the static feature share see the same rows with the static features blanked:
  // a constant column is never split on, so their trees read the parameters alone.
  const auto sighted = o.kernel_independent
                           ? o.members
                           : static_cast<std::size_t>(std::ceil(o.static_feature_share * static_cast<double>(o.members)));
  TrainingSet blind;
  if (sighted < o.members) {
    blind = taught;
    std::vector<std::size_t> static_columns;
    for (std::size_t j = 0; j < c; ++j)
      if (s.base.encoder.roles()[s.columns[j]] == FeatureRole::feature) static_columns.push_back(j);
    for (std::size_t i = 0; i < blind.y.size(); ++i)
      for (const auto j : static_columns) blind.x[i * c + j] = 0.0f;
  }
  for (std::size_t m = 0; m < o.members; ++m) launch(m < sighted ? taught : blind, member_seed(o.seed, m));

  // Interval: residuals of a model that did not see a held-out fifth of the observations.
  TrainingSet probe_fit, held;
  std::size_t held_job = 0;
  if (o.holdout_fraction > 0 && ok.size() >= 20) {
    std::vector<std::size_t> idx(ok.size());
    std::iota(idx.begin(), idx.end(), std::size_t{0});
    std::mt19937_64 rng(o.seed ^ 0x9e3779b97f4a7c15ULL);
    std::shuffle(idx.begin(), idx.end(), rng);
    const auto n_held = std::max<std::size_t>(5, static_cast<std::size_t>(o.holdout_fraction * static_cast<double>(idx.size())));
    for (std::size_t k = 0; k < idx.size(); ++k)
      (k < n_held ? held : probe_fit).add(observed.x.data() + idx[k] * c, c, observed.y[idx[k]], observed.weight[idx[k]]);
    held_job = jobs.size();
    launch(probe_fit, member_seed(o.seed, o.members));
  }

  // How much of the members' forecast a thin kernel's correction keeps is chosen with a prior that
  // never saw that kernel: the members, having seen its few points, would look better on them than
  // they forecast the rest of it.
  TrainingSet well_measured;
  std::optional<std::size_t> unseen_job;
  if (!thin.empty()) {
    std::vector<bool> in_thin(rows.rows(), false);
    for (const auto& [kernel, idx] : thin)
      for (const auto i : idx) in_thin[i] = true;
    for (std::size_t k = 0; k < ok.size(); ++k)
      if (!in_thin[ok[k]]) well_measured.add(observed.x.data() + k * c, c, observed.y[k], observed.weight[k]);
    unseen_job = jobs.size();
    launch(well_measured, member_seed(o.seed, o.members + 2));
  }

  // Each job is one deterministic fit: the results do not depend on the thread count.
  std::vector<std::optional<detail::FlatTrees>> fitted(jobs.size());
  detail::parallel_for_each_index(jobs.size(), detail::parallel_threads(jobs.size(), 0),
                                  [&](std::size_t j) { fitted[j] = jobs[j](); });
  s.members.clear();
  for (std::size_t m = 0; m < o.members; ++m) s.members.push_back(std::move(*fitted[m]));

  std::vector<double> residuals;
  if (!held.y.empty()) {
    const auto& probe = *fitted[held_job];
    std::vector<float> p(held.y.size());
    probe.predict(held.x, held.y.size(), p);
    for (std::size_t i = 0; i < p.size(); ++i) residuals.push_back(static_cast<double>(held.y[i]) - p[i]);
  } else {
    std::vector<float> p(observed.y.size());
    s.members.front().predict(observed.x, observed.y.size(), p);
    for (std::size_t i = 0; i < p.size(); ++i) residuals.push_back(static_cast<double>(observed.y[i]) - p[i]);
  }
  s.q05 = detail::quantile(residuals, 0.05);
  s.q95 = detail::quantile(residuals, 0.95);
  s.corrections.clear();
  if (unseen_job) fit_corrections(s, thin, y_all, x_all, *fitted[*unseen_job], o.seed);

  s.failure_rate = detail::base_failure_rate(rows);
  s.failure.reset();
  if (const auto label = detail::failure_labels(rows); !label.empty())
    s.failure = detail::boost_flat_trees(x_all, c, label, boosting(o, member_seed(o.seed, o.members + 1)), true);
  if (o.keep_training_rows) s.packed_rows = pack_rows(rows);
}

void check(const CompactOptions& o) {
  if (o.members < 1) throw invalid_argument_error("CompactOptions::members must be at least 1");
  if (o.rounds < 1 || o.failure_rounds < 1) throw invalid_argument_error("CompactOptions: round counts must be positive");
  if (o.max_depth < 1 || o.max_depth > 16) throw invalid_argument_error("CompactOptions::max_depth must be in [1, 16]");
  if (!(o.eta > 0) || !(o.eta <= 1)) throw invalid_argument_error("CompactOptions::eta must be in (0, 1]");
  if (!(o.synthetic_per_observation >= 0) || !std::isfinite(o.synthetic_per_observation))
    throw invalid_argument_error("CompactOptions::synthetic_per_observation must be finite and non-negative");
  if (!(o.swap_probability >= 0 && o.swap_probability <= 1))
    throw invalid_argument_error("CompactOptions::swap_probability must be in [0, 1]");
  if (!(o.fast_weight >= 0) || !std::isfinite(o.fast_weight) || !(o.fast_scale > 0) || !std::isfinite(o.fast_scale))
    throw invalid_argument_error("CompactOptions: fast_weight must be >= 0 and fast_scale > 0, both finite");
  if (!(o.group_balance >= 0) || !std::isfinite(o.group_balance) || !(o.max_group_weight >= 1) ||
      !std::isfinite(o.max_group_weight))
    throw invalid_argument_error("CompactOptions: group_balance must be >= 0 and max_group_weight >= 1, both finite");
  if (!(o.holdout_fraction >= 0 && o.holdout_fraction < 1))
    throw invalid_argument_error("CompactOptions::holdout_fraction must be in [0, 1)");
  if (o.static_features != "all" && o.static_features != "resources" && o.static_features != "none")
    throw invalid_argument_error(fmt::format(
        "CompactOptions::static_features must be all, resources or none, not \"{}\"", o.static_features));
  if (!(o.static_feature_share >= 0 && o.static_feature_share <= 1))
    throw invalid_argument_error("CompactOptions::static_feature_share must be in [0, 1]");
  if (o.kernel_independent && o.static_features == "none")
    throw invalid_argument_error(
        "CompactOptions: kernel_independent forecasts from the static features: static_features must be all or "
        "resources");
  if (o.kernel_independent && !o.teacher.empty())
    throw invalid_argument_error(
        "CompactOptions: a teacher's synthetic candidates swap parameter values, which changes what the compiler "
        "makes of them and so their static features: kernel_independent takes no teacher");
}

}  // namespace

const OptionsTable<CompactOptions>& compact_options_table() {
  static const auto table = [] {
    OptionsTable<CompactOptions> t("compact");
    t.add("members", &CompactOptions::members, "boosted models, each with its own seed; their mean is the forecast",
          OptionRange::between(1, 1000))
        .add("rounds", &CompactOptions::rounds, "trees per member", OptionRange::between(1, 100000))
        .add("eta", &CompactOptions::eta, "learning rate", OptionRange::between(1e-6, 1))
        .add("max_depth", &CompactOptions::max_depth, "depth of every tree", OptionRange::between(1, 16))
        .add("min_child_weight", &CompactOptions::min_child_weight, "least weight in a leaf", OptionRange::at_least(0))
        .add("subsample", &CompactOptions::subsample, "share of rows each tree sees", OptionRange::between(0.01, 1))
        .add("colsample_bytree", &CompactOptions::colsample_bytree, "share of columns each tree sees",
             OptionRange::between(0.01, 1))
        .add("lambda", &CompactOptions::lambda, "L2 penalty on leaf values", OptionRange::at_least(0))
        .add("failure_rounds", &CompactOptions::failure_rounds, "trees of the failure classifier",
             OptionRange::between(1, 100000))
        .add("holdout_fraction", &CompactOptions::holdout_fraction,
             "share of the observations held out to size the interval (0: training residuals)",
             OptionRange::between(0, 0.9))
        .add("fast_weight", &CompactOptions::fast_weight,
             "extra weight of a group's fastest observations (0: every row weighs 1)", OptionRange::between(0, 1000))
        .add("fast_scale", &CompactOptions::fast_scale,
             "rank fraction over which the extra weight decays by e", OptionRange::between(1e-3, 10))
        .add("fast_min_group", &CompactOptions::fast_min_group,
             "groups with fewer observations get no extra weight", OptionRange::between(0, 1e9))
        .add("group_balance", &CompactOptions::group_balance,
             "rows of small groups weigh (largest group / their group)^this (0: off)", OptionRange::between(0, 2))
        .add("max_group_weight", &CompactOptions::max_group_weight, "cap of the group weight",
             OptionRange::between(1, 1e6))
        .add("teacher", &CompactOptions::teacher,
             "surrogate (any name make_surrogate takes) whose forecasts of synthetic candidates become training rows; "
             "empty: none")
        .add("synthetic", &CompactOptions::synthetic_per_observation,
             "synthetic candidates the teacher labels, per observation", OptionRange::between(0, 1000))
        .add("max_synthetic", &CompactOptions::max_synthetic, "at most this many synthetic candidates",
             OptionRange::between(0, 10000000))
        .add("swap_probability", &CompactOptions::swap_probability,
             "chance that a synthetic candidate takes another observed value of a parameter", OptionRange::between(0, 1))
        .add("keep_training_rows", &CompactOptions::keep_training_rows,
             "store the (compressed) training rows so that update() after a load refits on everything")
        .add("static_features", &CompactOptions::static_features,
             "static features used when the observations carry them: all, resources (not the PTX instruction "
             "mix) or none")
        .add("static_feature_share", &CompactOptions::static_feature_share,
             "share of the members that see the static features; the others see the parameters alone",
             OptionRange::between(0, 1))
        .add("kernel_independent", &CompactOptions::kernel_independent,
             "forecast from the static features, problem size and device alone (no parameters, no kernel "
             "identity), so that a kernel never measured gets a forecast")
        .add("kernel_correction", &CompactOptions::kernel_correction,
             "with kernel_independent: each thinly measured kernel's own correction, on its parameters, "
             "chosen by cross-validation on its observations")
        .add("correction_below", &CompactOptions::correction_below,
             "kernels with fewer successful observations are corrected; the others judge the corrections",
             OptionRange::between(0, 1e9));
    return t;
  }();
  return table;
}

CompactSurrogate::CompactSurrogate(CompactOptions options) : m_options(std::move(options)) { check(m_options); }

void CompactSurrogate::fit(std::span<const Observation> observations) {
  auto s = std::make_shared<State>();
  s->base = detail::make_base(observations, m_options.encoder, "compact surrogate");
  if (!m_options.teacher.empty()) s->observations.assign(observations.begin(), observations.end());
  train(*s, m_options);
  m_state = std::move(s);
}

void CompactSurrogate::update(std::span<const Observation> observations) {
  if (!m_state) return fit(observations);
  if (observations.empty()) return;
  auto s = std::make_shared<State>();
  s->base = m_state->base;
  if (s->base.rows.rows() == 0 && !m_state->packed_rows.empty())
    s->base.rows = unpack_rows(m_state->packed_rows, "compact surrogate's stored training rows");
  s->base = detail::extend_base(s->base, observations);
  // The teacher learns from observations; a loaded model has only encoded rows, so after a load it
  // distils again from what it sees from now on.
  if (!m_options.teacher.empty()) {
    s->observations = m_state->observations;
    s->observations.insert(s->observations.end(), observations.begin(), observations.end());
  }
  train(*s, m_options);
  m_state = std::move(s);
}

namespace {

// Each candidate's forecast after its kernel's correction (none: the members' mean stands), and
// the correction that applied (null: none).
std::vector<const detail::KernelCorrection*> correct(const CompactSurrogate::State& s,
                                                     std::span<const Candidate> candidates,
                                                     const std::vector<double>& encoded, std::vector<double>& mean) {
  std::vector<const detail::KernelCorrection*> applied(candidates.size(), nullptr);
  if (s.corrections.empty()) return applied;
  std::map<const detail::KernelCorrection*, std::vector<std::size_t>> rows_by_correction;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (const auto it = s.corrections.find(candidates[i].kernel); it != s.corrections.end()) {
      applied[i] = &it->second;
      rows_by_correction[&it->second].push_back(i);
    }
  const std::size_t dim = s.base.encoder.dimension();
  for (const auto& [correction, idx] : rows_by_correction) {
    std::vector<float> forecast;
    for (const auto i : idx) forecast.push_back(static_cast<float>(mean[i]));
    correction->apply(detail::rows_at<double>(encoded, dim, idx), idx.size(), dim, forecast);
    for (std::size_t k = 0; k < idx.size(); ++k) mean[idx[k]] = forecast[k];
  }
  return applied;
}

// Forecasts of one run of candidates, on the calling thread.
std::vector<Forecast> predict_rows(const CompactSurrogate::State& s, std::span<const Candidate> candidates) {
  const std::size_t n = candidates.size();
  const auto encoded = s.base.encoder.encode(candidates);
  const auto f = s.features(encoded, n, s.base.encoder.dimension());
  const std::size_t members = s.members.size();
  std::vector<float> sum(n, 0.0f), sum_sq(n, 0.0f), one(n);
  for (const auto& m : s.members) {
    m.predict(f, n, one);
    for (std::size_t i = 0; i < n; ++i) {
      sum[i] += one[i];
      sum_sq[i] += one[i] * one[i];
    }
  }
  std::vector<double> mean(n);
  for (std::size_t i = 0; i < n; ++i) mean[i] = sum[i] / static_cast<double>(members);
  const std::vector<double> prior = mean;
  const auto corrected = correct(s, candidates, encoded, mean);
  std::vector<float> margin;
  if (s.failure) {
    margin.resize(n);
    s.failure->predict(f, n, margin);
  }
  std::vector<detail::RowPrediction> rows(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double var = std::max(0.0, sum_sq[i] / static_cast<double>(members) - prior[i] * prior[i]);
    // The members' disagreement widens the held-out interval, as far as the forecast keeps them.
    const double kept = corrected[i] ? corrected[i]->prior_weight : 1.0;
    const double widen = z95 * std::sqrt(var) * kept;
    const bool own = corrected[i] && corrected[i]->has_interval;
    const double q05 = own ? corrected[i]->q05 : s.q05, q95 = own ? corrected[i]->q95 : s.q95;
    const double p_fail = s.failure ? 1.0 / (1.0 + std::exp(-static_cast<double>(margin[i]))) : s.failure_rate;
    rows[i] = {mean[i], mean[i] + q05 - widen, mean[i] + q95 + widen, p_fail};
  }
  return detail::to_forecasts(candidates, s.base.norm, rows);
}

// Below this many candidates a second thread costs more than it saves.
constexpr std::size_t rows_per_thread = 1024;

}  // namespace

std::vector<Forecast> CompactSurrogate::predict(std::span<const Candidate> candidates) const {
  if (!m_state) throw invalid_argument_error("compact surrogate: predict() before fit()");
  const std::size_t n = candidates.size();
  const unsigned threads = detail::parallel_threads(n / rows_per_thread, 0);
  if (threads == 1) return predict_rows(*m_state, candidates);
  // Contiguous slices, one per thread; each row's forecast is the same whichever slice holds it.
  std::vector<std::vector<Forecast>> parts(threads);
  const std::size_t step = (n + threads - 1) / threads;
  detail::parallel_for_each_index(threads, static_cast<unsigned>(threads), [&](std::size_t t) {
    const std::size_t b = std::min(n, t * step), e = std::min(n, b + step);
    parts[t] = predict_rows(*m_state, candidates.subspan(b, e - b));
  });
  std::vector<Forecast> out;
  out.reserve(n);
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::size_t CompactSurrogate::tree_bytes() const {
  if (!m_state) return 0;
  std::size_t b = m_state->failure ? m_state->failure->bytes() : 0;
  for (const auto& m : m_state->members) b += m.bytes();
  return b;
}

void CompactSurrogate::save(ArchiveWriter& w) const {
  if (!m_state) throw invalid_argument_error("compact surrogate: save() before fit()");
  const State& s = *m_state;
  const auto& o = m_options;
  detail::write_tag(w, "compact", 2);
  // The options as their table writes them (NAME=VALUE), then what the table does not hold.
  const auto options = compact_options_table().write(o);
  w.u64(options.size());
  for (const auto& [name, value] : options) {
    w.str(name);
    w.str(value);
  }
  w.u64(o.seed);
  w.u64(o.encoder.max_one_hot);
  s.base.encoder.save(w);
  s.base.norm.save_offsets(w);
  w.f32s(std::vector<float>(s.columns.begin(), s.columns.end()));
  w.u64(s.members.size());
  for (const auto& m : s.members) m.save(w);
  w.u32(s.failure ? 1 : 0);
  if (s.failure) s.failure->save(w);
  w.f64(s.failure_rate);
  w.f64(s.q05);
  w.f64(s.q95);
  w.bytes(s.packed_rows);
  // Since version 2: the kernels' corrections.
  w.u64(s.corrections.size());
  for (const auto& [kernel, c] : s.corrections) {
    w.str(kernel);
    c.save(w);
  }
}

CompactSurrogate CompactSurrogate::load(ArchiveReader& r) {
  const auto version = detail::expect_tag(r, "compact", 2);
  CompactOptions o;
  const auto count = r.u64();
  if (count > 1000) r.fail("compact: implausible option count");
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::string name = r.str(), value = r.str();
    try {
      compact_options_table().set(o, name, value);  // ranges checked as for --option
    } catch (const std::exception& e) {
      r.fail(std::string("compact: stored option: ") + e.what());
    }
  }
  o.seed = r.u64();
  o.encoder.max_one_hot = r.u64();
  try {
    check(o);
  } catch (const std::exception& e) {
    r.fail(std::string("compact: stored options are invalid: ") + e.what());
  }
  CompactSurrogate out(o);
  auto s = std::make_shared<State>();
  s->base.encoder = FeatureEncoder::load(r);
  s->base.norm = detail::GroupNormaliser::load_offsets(r);
  const std::size_t dim = s->base.encoder.dimension();
  for (const float v : r.f32s()) {
    if (!(v >= 0) || static_cast<double>(v) >= static_cast<double>(dim)) r.fail("compact: feature column out of range");
    s->columns.push_back(static_cast<std::size_t>(v));
  }
  const auto members = r.u64();
  if (members != o.members) r.fail("compact: stored member count differs from the options");
  for (std::uint64_t m = 0; m < members; ++m) {
    s->members.push_back(detail::FlatTrees::load(r));
    if (s->members.back().features() != s->columns.size()) r.fail("compact: a member's width differs from the columns'");
  }
  if (r.u32()) {
    s->failure = detail::FlatTrees::load(r);
    if (s->failure->features() != s->columns.size()) r.fail("compact: the failure model's width differs from the columns'");
  }
  s->failure_rate = r.f64();
  s->q05 = r.f64();
  s->q95 = r.f64();
  s->packed_rows = r.bytes();
  if (version >= 2) {
    const auto kernels = r.u64();
    if (kernels > 100000) r.fail("compact: implausible count of kernel corrections");
    for (std::uint64_t k = 0; k < kernels; ++k) {
      std::string kernel = r.str();
      auto c = detail::KernelCorrection::load(r, dim);
      s->corrections.emplace(std::move(kernel), std::move(c));
    }
  }
  s->base.rows.dim = dim;
  out.m_state = std::move(s);
  return out;
}

}  // namespace gpuforecast
