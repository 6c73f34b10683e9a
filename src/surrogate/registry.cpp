#include "gpuforecast/surrogate/registry.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "gpuforecast/core/error.hpp"
#include "surrogate/ensemble.hpp"
#include "surrogate/gaussian_process.hpp"
#include "surrogate/knn.hpp"
#include "surrogate/random_forest.hpp"
#include "surrogate/ridge.hpp"
#include "surrogate/xgboost.hpp"
#include "surrogate/compact.hpp"
#include "surrogate/surrogate_kind_table.hpp"
#include "surrogate/transformer_plugin.hpp"

namespace gpuforecast {

namespace {
std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

[[noreturn]] void unknown(std::string_view name) {
  throw invalid_argument_error(fmt::format("unknown surrogate \"{}\"; this build has: {}, default", name,
                                           joined(surrogate_names())));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// A registered kind; "transformer" loads libgpuforecast_transformer.so first when needed, and
// throws a clear error naming the library when that fails.
std::optional<SurrogateKind> find_kind(std::string_view name) {
  if (auto kind = detail::find_surrogate_kind(name)) return kind;
  if (name != detail::transformer_kind) return std::nullopt;
  if (const auto why = detail::load_transformer_library(); !why.empty())
    throw error(fmt::format("the \"transformer\" surrogate {}", detail::transformer_library_missing(why)));
  return detail::find_surrogate_kind(name);
}

AnySurrogate make_ensemble(const EnsembleRecipe& recipe, std::uint64_t seed) {
  std::vector<AnySurrogate> members;
  const auto repeats = ensemble_member_repeats(recipe.members);
  for (std::size_t i = 0; i < recipe.members.size(); ++i)
    members.push_back(make_surrogate(recipe.members[i], ensemble_member_seed(seed, repeats[i])));
  return AnyEnsemble(std::move(members), recipe.weights);
}
}  // namespace

std::vector<std::size_t> ensemble_member_repeats(const std::vector<std::string>& members) {
  std::vector<std::size_t> n(members.size());
  for (std::size_t i = 0; i < members.size(); ++i)
    n[i] = static_cast<std::size_t>(std::count(members.begin(), members.begin() + static_cast<std::ptrdiff_t>(i), members[i]));
  return n;
}

// "compact(members=1,teacher=ensemble(xgboost,gp))": options by name; commas inside parentheses
// belong to a value.
CompactOptions compact_options(std::string_view name, std::uint64_t seed) {
  auto bad = [&](std::string_view why) {
    throw invalid_argument_error(fmt::format("surrogate \"{}\": {} (expected e.g. compact(members=1,rounds=300))", name, why));
  };
  if (name.back() != ')') bad("no closing parenthesis");
  const std::string_view body = name.substr(8, name.size() - 9);
  CompactOptions o;
  o.seed = seed;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= body.size(); ++i) {
    if (i < body.size()) {
      if (body[i] == '(') ++depth;
      else if (body[i] == ')') --depth;
      if (depth < 0) bad("unbalanced parentheses");
      if (body[i] != ',' || depth > 0) continue;
    }
    const std::string_view item = trim(body.substr(start, i - start));
    start = i + 1;
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) bad(fmt::format("\"{}\" is not NAME=VALUE", item));
    try {
      compact_options_table().set(o, trim(item.substr(0, eq)), trim(item.substr(eq + 1)));
    } catch (const std::exception& e) {
      bad(e.what());
    }
  }
  if (depth != 0) bad("unbalanced parentheses");
  return o;
}

std::optional<EnsembleRecipe> ensemble_recipe(std::string_view name) {
  if (name == "ensemble") {
    EnsembleRecipe r;
    r.members = ensemble_member_names();
    r.weights = ensemble_member_weights();
    return r;
  }
  if (name.rfind("ensemble(", 0) != 0) return std::nullopt;
  auto bad = [&](std::string_view why) -> std::optional<EnsembleRecipe> {
    throw invalid_argument_error(fmt::format("surrogate \"{}\": {} (expected e.g. ensemble(xgboost=0.7,knn=0.3))", name, why));
  };
  if (name.back() != ')') return bad("no closing parenthesis");
  std::string_view body = name.substr(9, name.size() - 10);
  EnsembleRecipe r;
  while (!body.empty()) {
    const auto comma = body.find(',');
    const std::string_view item = trim(body.substr(0, comma));
    body = comma == std::string_view::npos ? std::string_view{} : body.substr(comma + 1);
    const auto eq = item.find('=');
    const std::string member(trim(item.substr(0, eq)));
    if (member.empty()) return bad("a member has no name");
    if (member.rfind("ensemble", 0) == 0 || member == "default") return bad("members must be plain surrogates");
    if (!find_kind(member))
      return bad(fmt::format("unknown member \"{}\" (this build has: {})", member, joined(surrogate_names())));
    double w = 1.0;
    if (eq != std::string_view::npos) {
      const std::string text(trim(item.substr(eq + 1)));
      char* end = nullptr;
      w = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(w) || w < 0)
        return bad(fmt::format("weight \"{}\" of {} is not a number >= 0", text, member));
    }
    r.members.push_back(member);
    r.weights.push_back(w);
  }
  if (r.members.empty()) return bad("no members");
  double sum = 0;
  for (double w : r.weights) sum += w;
  if (!(sum > 0)) return bad("the weights sum to 0");
  return r;
}

std::vector<std::string> ensemble_member_names() {
#if GPUFORECAST_HAVE_XGBOOST && GPUFORECAST_HAVE_TORCH
  return {"xgboost", "xgboost", "xgboost", "gp", "transformer"};
#elif GPUFORECAST_HAVE_XGBOOST
  return {"xgboost", "knn"};
#elif GPUFORECAST_HAVE_TORCH
  return {"ridge", "transformer"};
#else
  return {"ridge", "knn"};
#endif
}

std::vector<double> ensemble_member_weights() {
#if GPUFORECAST_HAVE_XGBOOST && GPUFORECAST_HAVE_TORCH
  // A bag of three subsampled XGBoost models (0.85 together), the GP 0.05, the transformer 0.10.
  // Chosen on seed 0 of benchmarks/forecast_quality (forecasts dumped with --dump-forecasts,
  // blends scored offline; docs/surrogates.md): the bag gains 0.001-0.002 Spearman over one model
  // (five gain a little more but halve the forecasts per second); the GP helps interpolation but
  // not transfer, the transformer transfer more than interpolation.
  constexpr double tree = 0.85 / 3;
  return {tree, tree, tree, 0.05, 0.10};
#else
  return std::vector<double>(ensemble_member_names().size(), 1.0);
#endif
}

std::vector<std::string> surrogate_names() {
#if GPUFORECAST_HAVE_TORCH
  (void)detail::load_transformer_library();  // lists "transformer" when the library loads
#endif
  std::vector<std::string> names;
  for (auto& name : registered_surrogate_kinds())
    if (name != "ensemble") names.push_back(std::move(name));
  names.emplace_back("ensemble");
  return names;
}

std::string default_surrogate_name() {
  // Measured with benchmarks/forecast_quality and benchmarks/forecast_speed (docs/surrogates.md has
  // the tables): the compact bag of flat boosted trees ranks at least as well as XGBoost in every
  // regime, forecasts several times faster, loads in milliseconds without libtorch, and needs
  // XGBoost only to train. The libtorch ensemble stays available as "ensemble".
#if GPUFORECAST_HAVE_XGBOOST
  return "compact";
#else
  return "ridge";
#endif
}

namespace detail {
std::vector<SurrogateKind> builtin_surrogate_kinds() {
  std::vector<SurrogateKind> kinds;
  const auto add = [&]<class S>(std::string name, auto make) {
    kinds.push_back(SurrogateKind{std::move(name), [make](std::uint64_t seed) -> AnySurrogate { return make(seed); },
                                  [](ArchiveReader& r) -> AnySurrogate { return S::load(r); }});
  };
  add.operator()<RidgeSurrogate>("ridge", [](std::uint64_t) { return RidgeSurrogate(); });
  add.operator()<KnnSurrogate>("knn", [](std::uint64_t seed) {
    KnnOptions o;
    o.seed = seed;
    return KnnSurrogate(o);
  });
  add.operator()<GaussianProcessSurrogate>("gp", [](std::uint64_t seed) {
    GaussianProcessOptions o;
    o.seed = seed;
    return GaussianProcessSurrogate(o);
  });
  add.operator()<RandomForestSurrogate>("forest", [](std::uint64_t seed) {
    RandomForestOptions o;
    o.seed = seed;
    o.max_samples = 2048;  // whole datasets: a tree per 2,048 drawn rows keeps fitting to seconds
    return RandomForestSurrogate(o);
  });
#if GPUFORECAST_HAVE_XGBOOST
  add.operator()<XgboostSurrogate>("xgboost", [](std::uint64_t seed) {
    XgboostOptions o;
    o.seed = seed;
    return XgboostSurrogate(o);
  });
#endif
  // Loads and forecasts in every build; training needs XGBoost (it says so otherwise).
  add.operator()<CompactSurrogate>("compact", [](std::uint64_t seed) {
    CompactOptions o;
    o.seed = seed;
    return CompactSurrogate(o);
  });
  add.operator()<AnyEnsemble>("ensemble", [](std::uint64_t seed) { return make_ensemble(*ensemble_recipe("ensemble"), seed); });
  return kinds;
}
}  // namespace detail

AnySurrogate make_surrogate(std::string_view name, std::uint64_t seed) {
  if (name == "default") return make_surrogate(default_surrogate_name(), seed);
  if (const auto recipe = ensemble_recipe(name)) return make_ensemble(*recipe, seed);
  if (name.starts_with("compact(")) return CompactSurrogate(compact_options(name, seed));
  if (const auto kind = find_kind(name)) return kind->make(seed);
  unknown(name);
}

AnySurrogate load_surrogate_archive(std::string_view kind, ArchiveReader& r) {
  std::optional<SurrogateKind> found = detail::find_surrogate_kind(kind);
  if (!found && kind == detail::transformer_kind) {
    if (const auto why = detail::load_transformer_library(); !why.empty())
      throw model_file_error(r.origin(), fmt::format("the model holds a \"transformer\" surrogate, {}",
                                                     detail::transformer_library_missing(why)));
    found = detail::find_surrogate_kind(kind);
  }
  if (!found)
    r.fail(fmt::format("the model holds a \"{}\" surrogate, which this build cannot load (it has: {}; a surrogate "
                       "kind of your own must be registered with register_surrogate_kind before loading)",
                       kind, joined(surrogate_names())));
  return found->load(r);
}

void save_surrogate_with_kind(ArchiveWriter& w, const AnySurrogate& surrogate) {
  ArchiveWriter inner;
  surrogate.save(inner);
  w.str(surrogate.kind());
  w.bytes(inner.data());
}

AnySurrogate load_surrogate_with_kind(ArchiveReader& r, std::string_view what) {
  const auto kind = r.str();
  const auto blob = r.bytes();
  ArchiveReader inner(blob, fmt::format("{} [{} {}]", r.origin(), what, kind));
  AnySurrogate out = load_surrogate_archive(kind, inner);
  if (!inner.at_end()) inner.fail(fmt::format("unexpected bytes after the {}", what));
  return out;
}

}  // namespace gpuforecast
