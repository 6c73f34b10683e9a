#pragma once
// A GPU's forecaster made of the other GPUs' views (view_models.hpp) and its own measurements:
// the views stacked by those measurements (view_stacking.hpp), times a surrogate of what the
// stacking misses, learnt on the same measurements as the ratio measured / stacked
// (surrogate/ratio_correction.hpp). The stacking says which GPUs this one is like; the ratio model
// says where it is unlike them, in terms of the configuration. With a tenth of convolution_milo
// A4000 measured and the views of A100 and A6000, the direction of a measured parent's children
// is right for 0.83 of them where a model of the tenth alone gets 0.77 (docs/pairs.md).
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "calibration/view_models.hpp"
#include "calibration/view_stacking.hpp"
#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "internal_api.hpp"

namespace gpuforecast GPUFORECAST_INTERNAL_API {

class StackedViewsSurrogate {
 public:
  // `views` (at least one, outliving this) forecast as their own GPUs; `ratio` learns the rest.
  // Throws invalid_argument_error without views.
  StackedViewsSurrogate(std::vector<const ViewModel*> views, AnySurrogate ratio);
  // One fitted before, from its parts (a model file's): `stacking` one weight per view, `ratio`
  // fitted. update() refits on what it learns from then on only. Throws invalid_argument_error
  // for a number of weights other than the views'.
  [[nodiscard]] static StackedViewsSurrogate restored(std::vector<const ViewModel*> views, ViewStacking stacking,
                                                      AnySurrogate ratio);

  // Fits the stacking on the successful measurements (at least 3; throws invalid_argument_error
  // naming the count) and the ratio model on every measurement, failures included (p_fail).
  void fit(std::span<const Observation> o);
  // Learns `o` beside what it has: the stacking moves with every measurement and with it each
  // ratio, so both are fitted again on all of them.
  void update(std::span<const Observation> o);
  // Throws invalid_argument_error before fit.
  [[nodiscard]] std::vector<Forecast> predict(std::span<const Candidate> c) const;

  [[nodiscard]] const std::optional<ViewStacking>& stacking() const noexcept { return m_stacking; }
  [[nodiscard]] const std::vector<const ViewModel*>& views() const noexcept { return m_views; }
  [[nodiscard]] const AnySurrogate& ratio() const noexcept { return m_ratio; }
  [[nodiscard]] std::string kind() const;

 private:
  std::vector<const ViewModel*> m_views;
  AnySurrogate m_ratio;
  std::vector<Observation> m_seen;
  std::optional<ViewStacking> m_stacking;
};
static_assert(Surrogate<StackedViewsSurrogate>);

}  // namespace gpuforecast
