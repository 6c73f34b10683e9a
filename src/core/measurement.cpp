#include "gpuforecast/core/measurement.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

std::string_view to_string(Status s) noexcept {
  switch (s) {
    case Status::ok: return "ok";
    case Status::compile_failed: return "compile_failed";
    case Status::launch_failed: return "launch_failed";
    case Status::runtime_failed: return "runtime_failed";
    case Status::invalid: return "invalid";
    case Status::timeout: return "timeout";
  }
  return "unknown";
}

bool is_fault(Status s) noexcept {
  return s == Status::compile_failed || s == Status::launch_failed || s == Status::runtime_failed ||
         s == Status::timeout;
}

std::string_view fault_kind(Status s) noexcept {
  switch (s) {
    case Status::compile_failed: return "compile_error";
    case Status::launch_failed: return "launch_failure";
    case Status::runtime_failed: return "crash";
    case Status::timeout: return "hang";
    default: return "";
  }
}

std::string fault_detail(const Measurement& m) {
  std::string_view first;
  for (std::size_t from = 0; from < m.log.size();) {
    const std::size_t end = std::min(m.log.find('\n', from), m.log.size());
    std::string_view line(m.log.data() + from, end - from);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (!line.empty()) {
      if (line.find("error") != std::string_view::npos) return std::string(line);
      if (first.empty()) first = line;
    }
    from = end + 1;
  }
  return first.empty() ? m.reason : std::string(first);
}

Status parse_status(std::string_view s) {
  if (s == "ok" || s == "correct") return Status::ok;
  if (s == "compile_failed" || s == "CompilationFailedConfig" || s == "compile") return Status::compile_failed;
  if (s == "launch_failed") return Status::launch_failed;
  if (s == "runtime_failed" || s == "RuntimeFailedConfig" || s == "runtime") return Status::runtime_failed;
  if (s == "invalid" || s == "InvalidConfig" || s == "constraints") return Status::invalid;
  if (s == "timeout") return Status::timeout;
  throw invalid_argument_error(fmt::format("unknown measurement status \"{}\"", s));
}

namespace {
// Binomial(n, 1/2) CDF via a stable recurrence; n is small (samples of one measurement).
double binom_half_cdf(std::size_t k, std::size_t n) {
  double log_p = static_cast<double>(n) * std::log(0.5);
  double term = std::exp(log_p), sum = term;
  for (std::size_t i = 1; i <= k; ++i) {
    term *= static_cast<double>(n - i + 1) / static_cast<double>(i);
    sum += term;
  }
  return std::min(sum, 1.0);
}
}  // namespace

void summarise_samples(Measurement& m) {
  auto& s = m.samples_ms;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (!std::isfinite(s[i]) || s[i] < 0)
      throw invalid_argument_error(fmt::format("sample {} is {} ms: runtimes must be finite and non-negative", i, s[i]));
  if (s.empty()) {
    m.median_ms = m.ci_low_ms = m.ci_high_ms = 0;
    return;
  }
  std::vector<double> v = s;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  m.median_ms = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  // Distribution-free CI of the median: the largest k with P(Bin(n,1/2) <= k-1) <= 2.5% gives
  // [x_(k), x_(n-k+1)] with coverage >= 95%. Too few samples: the whole range.
  std::size_t k = 0;
  while (k + 1 <= n && binom_half_cdf(k, n) <= 0.025) ++k;
  if (k == 0) {
    m.ci_low_ms = v.front();
    m.ci_high_ms = v.back();
  } else {
    m.ci_low_ms = v[k - 1];
    m.ci_high_ms = v[n - k];
  }
}

}  // namespace gpuforecast
