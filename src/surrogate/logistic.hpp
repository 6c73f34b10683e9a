#pragma once
// L2-regularised logistic regression by Newton's method (IRLS): the failure classifier of the
// ridge baseline. Not installed.
#include <vector>

#include "gpuforecast/core/archive.hpp"

namespace gpuforecast::detail {

struct Logistic {
  std::vector<double> w;  // bias last; empty: constant `rate`
  double rate = 0;        // failure rate used when there is no fitted model
  // x: rows x dim row-major (standardised), y: 1 = failed.
  void fit(const std::vector<double>& x, std::size_t dim, const std::vector<double>& y, double lambda);
  [[nodiscard]] double predict(const double* row, std::size_t dim) const;
  void save(ArchiveWriter& w) const;
  static Logistic load(ArchiveReader& r, std::size_t dim);
};

}  // namespace gpuforecast::detail
