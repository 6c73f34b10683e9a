#pragma once
// Forecasts from two sources: the one a candidate is best served by (a GPU's stacked views) where
// it gives one, the other (the model's surrogate) for the rest, asked once for all of them and
// put back in the candidates' order. A Model forecasts its calibrated device this way, and the
// search's model the run's own GPU.
#include <optional>
#include <span>
#include <vector>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/forecast.hpp"

namespace gpuforecast::detail::compose {

// `first[i]` where it holds a forecast, `rest` asked for every other candidate. `rest` must
// return one forecast per candidate it is given.
template <class Rest>
[[nodiscard]] std::vector<Forecast> complete_forecasts(std::span<const Candidate> c,
                                                       std::vector<std::optional<Forecast>> first, Rest&& rest) {
  std::vector<Forecast> out(c.size());
  std::vector<std::size_t> rest_rows;
  std::vector<Candidate> rest_candidates;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (first[i]) {
      out[i] = std::move(*first[i]);
    } else {
      rest_rows.push_back(i);
      rest_candidates.push_back(c[i]);
    }
  }
  if (!rest_candidates.empty()) {
    const std::vector<Forecast> g = rest(std::span<const Candidate>(rest_candidates));
    for (std::size_t j = 0; j < rest_rows.size(); ++j) out[rest_rows[j]] = g[j];
  }
  return out;
}

}  // namespace gpuforecast::detail::compose
