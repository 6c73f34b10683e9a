#pragma once
// Ensembles: the forecast is the mean of the members' log-runtimes, the spread the members'
// disagreement (added to their own). Ensemble<S...> holds fixed types (no virtual calls);
// AnyEnsemble holds members chosen at run time. Both save the same layout, so either loads
// what the other wrote (as an AnyEnsemble).
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// members[m][i]: member m's forecast of candidate i; weights[m] >= 0 (empty: equal weights;
// normalised to sum 1). Median: exp(weighted mean log median); interval: weighted mean of the
// members' log bounds widened by their disagreement; p_fail: weighted mean; spread:
// sqrt(weighted mean own spread^2 + weighted variance of the log medians).
[[nodiscard]] std::vector<Forecast> combine_forecasts(std::span<const std::vector<Forecast>> members,
                                                      std::span<const double> weights = {});

namespace detail {
void write_ensemble_header(ArchiveWriter& w, std::size_t members);
std::size_t read_ensemble_header(ArchiveReader& r);
// Checks and normalises member weights (empty: equal); throws invalid_argument_error.
std::vector<double> normalised_weights(std::span<const double> weights, std::size_t members);
void write_member(ArchiveWriter& w, const std::string& kind, const std::string& blob);
// Returns the member's archive after checking its kind.
std::string read_member(ArchiveReader& r, const std::string& expected_kind);
}  // namespace detail

template <PersistentSurrogate... S>
class Ensemble {
 public:
  static_assert(sizeof...(S) > 0, "an ensemble needs at least one member type");
  Ensemble() = default;
  explicit Ensemble(S... members) : m_members(std::move(members)...) {}

  void fit(std::span<const Observation> o) {
    std::apply([&](auto&... m) { (m.fit(o), ...); }, m_members);
  }
  void update(std::span<const Observation> o) {
    std::apply([&](auto&... m) { (m.update(o), ...); }, m_members);
  }
  [[nodiscard]] std::vector<Forecast> predict(std::span<const Candidate> c) const {
    std::vector<std::vector<Forecast>> f;
    std::apply([&](const auto&... m) { (f.push_back(predict_one(m, c)), ...); }, m_members);
    return combine_forecasts(f);
  }
  [[nodiscard]] std::string kind() const { return "ensemble"; }
  void save(ArchiveWriter& w) const {
    detail::write_ensemble_header(w, sizeof...(S));
    std::apply([&](const auto&... m) {
      (([&] {
         ArchiveWriter inner;
         m.save(inner);
         detail::write_member(w, m.kind(), inner.data());
       }()),
       ...);
    }, m_members);
  }
  static Ensemble load(ArchiveReader& r) {
    if (detail::read_ensemble_header(r) != sizeof...(S)) r.fail("ensemble: stored member count differs from this type's");
    Ensemble e;
    std::apply([&](auto&... m) { ((m = load_one<std::remove_reference_t<decltype(m)>>(r, m.kind())), ...); }, e.m_members);
    return e;
  }
  [[nodiscard]] const std::tuple<S...>& members() const noexcept { return m_members; }

 private:
  template <class T>
  static std::vector<Forecast> predict_one(const T& m, std::span<const Candidate> c) {
    return const_cast<T&>(m).predict(c);  // members' predict is thread-safe (see AnySurrogate)
  }
  template <class T>
  static T load_one(ArchiveReader& r, const std::string& kind) {
    const std::string blob = detail::read_member(r, kind);
    ArchiveReader inner(blob, r.origin() + " (ensemble member " + kind + ")");
    return T::load(inner);
  }
  std::tuple<S...> m_members;
};

class AnyEnsemble {
 public:
  AnyEnsemble() = default;
  // Throws invalid_argument_error when empty, a member is empty, or the weights are not one
  // non-negative number per member with a positive sum. Empty weights: equal.
  explicit AnyEnsemble(std::vector<AnySurrogate> members, std::vector<double> weights = {});

  void fit(std::span<const Observation> o);
  void update(std::span<const Observation> o);
  [[nodiscard]] std::vector<Forecast> predict(std::span<const Candidate> c) const;
  [[nodiscard]] std::string kind() const { return "ensemble"; }
  void save(ArchiveWriter& w) const;
  // Members are rebuilt by kind through the registry (surrogate/registry.hpp).
  static AnyEnsemble load(ArchiveReader& r);
  [[nodiscard]] const std::vector<AnySurrogate>& members() const noexcept { return m_members; }
  [[nodiscard]] const std::vector<double>& weights() const noexcept { return m_weights; }

 private:
  std::vector<AnySurrogate> m_members;
  std::vector<double> m_weights;  // normalised, one per member
};

static_assert(Surrogate<AnyEnsemble>);
static_assert(PersistentSurrogate<AnyEnsemble>);

}  // namespace gpuforecast
