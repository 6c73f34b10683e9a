// A surrogate type of the user's own, registered by kind: made by name, trained, saved to a model
// file and loaded back like the library's own.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "surrogate/ensemble.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "support/data.hpp"

using namespace gpuforecast;

namespace {

// Forecasts the mean log-runtime of the training points that share the value of one tunable
// parameter (chosen by the seed among the configuration's values), else the overall mean.
class ParameterMeanSurrogate {
 public:
  explicit ParameterMeanSurrogate(std::uint64_t seed = 0) : m_seed(seed) {}

  void fit(std::span<const Observation> observations) {
    m_means.clear();
    std::map<std::string, std::pair<double, int>> acc;
    double all = 0;
    int n = 0;
    for (const auto& o : observations) {
      if (!o.measurement.ok()) continue;
      const double l = std::log(o.measurement.median_ms);
      auto& [sum, count] = acc[key(o.candidate)];
      sum += l;
      ++count;
      all += l;
      ++n;
    }
    if (n == 0) throw invalid_argument_error("ParameterMeanSurrogate: no ok observation");
    for (const auto& [k, sc] : acc) m_means[k] = sc.first / sc.second;
    m_overall = all / n;
  }
  void update(std::span<const Observation> observations) { fit(observations); }
  [[nodiscard]] std::vector<Forecast> predict(std::span<const Candidate> candidates) const {
    std::vector<Forecast> out;
    for (const auto& c : candidates) {
      const auto it = m_means.find(key(c));
      const double l = it == m_means.end() ? m_overall : it->second;
      Forecast f;
      f.median_ms = std::exp(l);
      f.lower_ms = std::exp(l - 0.5);
      f.upper_ms = std::exp(l + 0.5);
      f.spread = 0.3;
      out.push_back(f);
    }
    return out;
  }
  [[nodiscard]] std::string kind() const { return "parameter-mean"; }
  void save(ArchiveWriter& w) const {
    w.u64(m_seed);
    w.f64(m_overall);
    w.u64(m_means.size());
    for (const auto& [k, m] : m_means) {
      w.str(k);
      w.f64(m);
    }
  }
  static ParameterMeanSurrogate load(ArchiveReader& r) {
    ParameterMeanSurrogate s(r.u64());
    s.m_overall = r.f64();
    const auto n = r.u64();
    for (std::uint64_t i = 0; i < n; ++i) {
      auto k = r.str();
      s.m_means[k] = r.f64();
    }
    return s;
  }

 private:
  [[nodiscard]] std::string key(const Candidate& c) const {
    const auto& values = c.config.values();
    if (values.empty()) return {};
    return values[m_seed % values.size()].to_string();
  }
  std::uint64_t m_seed;
  double m_overall = 0;
  std::map<std::string, double> m_means;
};
static_assert(PersistentSurrogate<ParameterMeanSurrogate>);

const Dataset& conv() {
  static const Dataset ds = [] {
    const std::vector<std::string> paths{test::cache_file("convolution_milo", "A4000").string()};
    return Dataset::load(paths);
  }();
  return ds;
}

void register_once() {
  if (!has_surrogate_kind("parameter-mean"))
    register_surrogate_kind<ParameterMeanSurrogate>("parameter-mean",
                                                    [](std::uint64_t seed) { return ParameterMeanSurrogate(seed); });
}

}  // namespace

TEST_CASE("surrogate kinds: a user's own surrogate is made, saved and loaded by kind") {
  register_once();
  const auto names = surrogate_names();
  CHECK(std::find(names.begin(), names.end(), "parameter-mean") != names.end());
  auto s = make_surrogate("parameter-mean", 2);
  CHECK(s.kind() == "parameter-mean");
  const auto obs = conv().observations();
  s.fit(obs);
  const auto path = (std::filesystem::temp_directory_path() / "gpuforecast_surrogate_kind_test.gfm").string();
  save_surrogate(path, s, TrainingSummary::of(obs));
  const auto loaded = load_surrogate(path);
  std::filesystem::remove(path);
  CHECK(loaded.kind() == "parameter-mean");
  std::vector<Candidate> cands;
  for (std::size_t i = 0; i < obs.size(); i += 97) cands.push_back(obs[i].candidate);
  const auto a = s.predict(cands), b = loaded.predict(cands);
  REQUIRE(a.size() == b.size());
  std::size_t distinct = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].median_ms == b[i].median_ms);
    distinct += a[i].median_ms != a[0].median_ms;
  }
  CHECK(distinct > 0);  // it did learn something per parameter value
}

TEST_CASE("surrogate kinds: a user's kind is an ensemble member like the library's") {
  register_once();
  auto e = make_surrogate("ensemble(parameter-mean=0.5,ridge=0.5)", 1);
  e.fit(conv().observations());
  ArchiveWriter w;
  e.save(w);
  ArchiveReader r(w.data(), "memory.gfm");
  const auto back = load_surrogate_archive("ensemble", r);
  const std::vector<Candidate> c{conv().observations().front().candidate};
  CHECK(back.predict(c).front().median_ms == e.predict(c).front().median_ms);
}

TEST_CASE("surrogate kinds: bad registrations are refused with the kind's name") {
  register_once();
  const auto make = [](std::uint64_t seed) { return ParameterMeanSurrogate(seed); };
  CHECK_THROWS_WITH(register_surrogate_kind<ParameterMeanSurrogate>("parameter-mean", make),
                    Catch::Contains("parameter-mean") && Catch::Contains("registered already"));
  CHECK_THROWS_WITH(register_surrogate_kind<ParameterMeanSurrogate>("ridge", make), Catch::Contains("registered already"));
  CHECK_THROWS_WITH(register_surrogate_kind<ParameterMeanSurrogate>("default", make), Catch::Contains("reserved"));
  CHECK_THROWS_WITH(register_surrogate_kind<ParameterMeanSurrogate>("ensemble(x)", make), Catch::Contains("ensemble(x)"));
  CHECK_THROWS_WITH(register_surrogate_kind<ParameterMeanSurrogate>("", make), Catch::Contains("empty"));
  CHECK_THROWS_WITH(register_surrogate_kind(SurrogateKind{"no-loader", [](std::uint64_t) -> AnySurrogate {
                                                           return ParameterMeanSurrogate();
                                                         }, {}}),
                    Catch::Contains("no-loader") && Catch::Contains("loader"));
  ArchiveReader r("", "m.gfm");
  CHECK_THROWS_WITH(load_surrogate_archive("someone-elses", r),
                    Catch::Contains("m.gfm") && Catch::Contains("someone-elses") && Catch::Contains("register_surrogate_kind"));
}
