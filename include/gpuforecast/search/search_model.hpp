#pragma once
// The selective model the surrogate-filtered search builds for itself: the project's
// SelectiveForecaster (surrogate + SelectiveCalibrator), updated after every round. Without a
// pre-trained surrogate, one of kind `online_kind` is trained from the search's own
// measurements; with one (trained on other devices or kernels), it ranks from the first round
// and a small online model of `online_kind` learns the ratio measured / forecast on the target;
// a second one, trained on the target's measurements alone, joins after 10 ok measurements,
// each part weighted by how well it ranked the target's measurements before learning them.
// The calibrator is refitted each round on prequential residuals (forecasts made before the
// surrogate saw the point), with adaptive conformal updates in between.
#include <cstdint>
#include <optional>
#include <string>

#include "gpuforecast/calibration/selective_calibrator.hpp"
#include "gpuforecast/search/selective_model.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"

namespace gpuforecast {

// online_kind: "default" (a random forest, "forest"), "xgboost", "knn", "ridge", "ensemble"
// (XGBoost + knn), or any other name of the surrogate registry
[[nodiscard]] SelectiveModel make_search_model(const std::string& online_kind = "default", std::uint64_t seed = 0);
[[nodiscard]] SelectiveModel make_search_model(AnySurrogate pretrained, const std::string& online_kind = "default",
                                               std::uint64_t seed = 0,
                                               std::optional<SelectiveCalibrator> calibrator = std::nullopt);

}  // namespace gpuforecast
