#include "calibration/view_stacking.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {

bool positive(double x) { return x > 0 && std::isfinite(x); }

// Non-negative least squares, min |y - X w|^2 with w >= 0, by cyclic coordinate descent: the
// problem is convex and has a handful of columns, so exact coordinate steps converge; a fixed
// number of sweeps and a fixed order make it deterministic. X is column-major, already centred.
std::vector<double> nonnegative_least_squares(const std::vector<std::vector<double>>& x, const std::vector<double>& y) {
  const std::size_t columns = x.size();
  std::vector<double> w(columns, 0.0), norm(columns, 0.0), residual = y;
  for (std::size_t v = 0; v < columns; ++v)
    norm[v] = std::inner_product(x[v].begin(), x[v].end(), x[v].begin(), 0.0);
  for (int sweep = 0; sweep < 1000; ++sweep) {
    double largest_step = 0;
    for (std::size_t v = 0; v < columns; ++v) {
      if (norm[v] <= 1e-12) continue;  // a view that does not vary over the K points says nothing
      const double gradient = std::inner_product(x[v].begin(), x[v].end(), residual.begin(), 0.0);
      const double updated = std::max(0.0, w[v] + gradient / norm[v]);
      const double step = updated - w[v];
      if (step == 0) continue;
      for (std::size_t i = 0; i < residual.size(); ++i) residual[i] -= step * x[v][i];
      w[v] = updated;
      largest_step = std::max(largest_step, std::abs(step));
    }
    if (largest_step < 1e-12) break;
  }
  return w;
}

void check_point(const ViewForecasts& views, std::size_t expected_views, double ms, std::size_t i) {
  if (views.size() != expected_views)
    throw invalid_argument_error(
        fmt::format("view stacking: point {} has {} views, the first has {}", i, views.size(), expected_views));
  for (std::size_t v = 0; v < views.size(); ++v)
    if (!positive(views[v].median_ms))
      throw invalid_argument_error(
          fmt::format("view stacking: point {}'s forecast in view {} is {} ms: need a positive finite time", i, v,
                      views[v].median_ms));
  if (!positive(ms))
    throw invalid_argument_error(
        fmt::format("view stacking: point {}'s measured runtime is {} ms: need a positive finite time", i, ms));
}

}  // namespace

std::string ViewStacking::describe(std::span<const std::string> view_devices) const {
  if (view_devices.size() != weights.size())
    throw invalid_argument_error(fmt::format("view stacking: {} names for {} weights", view_devices.size(), weights.size()));
  std::string s = fmt::format("{:.3f}", intercept);
  for (std::size_t v = 0; v < weights.size(); ++v) s += fmt::format(" + {:.3f} log t_{}", weights[v], view_devices[v]);
  return s;
}

Forecast ViewStacking::apply(const ViewForecasts& views) const {
  if (views.size() != weights.size())
    throw invalid_argument_error(
        fmt::format("view stacking: {} views given to a stacking of {}", views.size(), weights.size()));
  // A view without a quantile (a point forecaster's 0) lends its median there.
  auto stacked = [&](double Forecast::*field) {
    double log_ms = intercept;
    for (std::size_t v = 0; v < views.size(); ++v)
      if (weights[v] > 0)
        log_ms += weights[v] * std::log(positive(views[v].*field) ? views[v].*field : views[v].median_ms);
    return std::exp(log_ms);
  };
  Forecast f;
  f.median_ms = stacked(&Forecast::median_ms);
  f.lower_ms = stacked(&Forecast::lower_ms);
  f.upper_ms = stacked(&Forecast::upper_ms);
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  for (std::size_t v = 0; v < views.size(); ++v) {
    f.spread += weights[v] * views[v].spread;
    f.p_fail += (total > 0 ? weights[v] / total : 1.0 / static_cast<double>(views.size())) * views[v].p_fail;
  }
  return f;
}

std::vector<Forecast> ViewStacking::apply(std::span<const ViewForecasts> configurations) const {
  std::vector<Forecast> out;
  out.reserve(configurations.size());
  for (const auto& v : configurations) out.push_back(apply(v));
  return out;
}

ViewStacking fit_view_stacking(std::span<const ViewForecasts> views, std::span<const double> observed_ms) {
  if (views.size() != observed_ms.size())
    throw invalid_argument_error(fmt::format("view stacking needs one runtime per point; got {} points and {} runtimes",
                                             views.size(), observed_ms.size()));
  if (views.size() < 3)
    throw invalid_argument_error(fmt::format("view stacking needs at least 3 points, got {}", views.size()));
  const std::size_t n = views.size(), columns = views.front().size();
  if (columns == 0) throw invalid_argument_error("view stacking needs at least one view");
  for (std::size_t i = 0; i < n; ++i) check_point(views[i], columns, observed_ms[i], i);

  // Centred, the intercept drops out of the non-negative fit and is the means' difference after it.
  std::vector<double> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = std::log(observed_ms[i]);
  const double mean_y = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(n);
  for (auto& v : y) v -= mean_y;
  std::vector<std::vector<double>> x(columns, std::vector<double>(n));
  std::vector<double> mean_x(columns, 0.0);
  for (std::size_t v = 0; v < columns; ++v) {
    for (std::size_t i = 0; i < n; ++i) x[v][i] = std::log(views[i][v].median_ms);
    mean_x[v] = std::accumulate(x[v].begin(), x[v].end(), 0.0) / static_cast<double>(n);
    for (auto& e : x[v]) e -= mean_x[v];
  }
  ViewStacking s;
  s.weights = nonnegative_least_squares(x, y);
  s.intercept = mean_y;
  for (std::size_t v = 0; v < columns; ++v) s.intercept -= s.weights[v] * mean_x[v];
  return s;
}

std::vector<Forecast> stack_leaving_each_out(std::span<const ViewForecasts> views, std::span<const double> observed_ms) {
  if (views.size() != observed_ms.size() || views.size() < 4)
    throw invalid_argument_error(fmt::format(
        "view stacking leaving each point out needs at least 4 points with one runtime each; got {} and {}",
        views.size(), observed_ms.size()));
  std::vector<Forecast> out;
  out.reserve(views.size());
  std::vector<ViewForecasts> others;
  std::vector<double> others_ms;
  for (std::size_t j = 0; j < views.size(); ++j) {
    others.clear();
    others_ms.clear();
    for (std::size_t i = 0; i < views.size(); ++i)
      if (i != j) {
        others.push_back(views[i]);
        others_ms.push_back(observed_ms[i]);
      }
    out.push_back(fit_view_stacking(others, others_ms).apply(views[j]));
  }
  return out;
}

}  // namespace gpuforecast
