#include "search/progress_bar.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace gpuforecast {

ProgressBar::ProgressBar(std::string label) : m_label(std::move(label)), m_draw(isatty(fileno(stderr)) != 0) {}

ProgressBar::ProgressBar(ProgressBar&& other) noexcept
    : m_label(std::move(other.m_label)), m_budget(other.m_budget), m_draw(other.m_draw), m_open(other.m_open) {
  other.m_open = false;
}

ProgressBar::~ProgressBar() {
  if (m_open) std::fputc('\n', stderr);
}

void ProgressBar::on_begin(const SearchBegin& e) { m_budget = e.budget; }

void ProgressBar::on_measured(const SearchMeasured& e) { draw(e.trace, false); }

void ProgressBar::on_end(const SearchEnd& e) {
  if (m_open || !e.trace.empty()) draw(e.trace, true);
}

void ProgressBar::draw(const Trace& trace, bool final) {
  if (!m_draw) return;
  const std::size_t n = trace.size();
  double fraction = 0;
  std::string of;
  if (m_budget.max_measurements > 0) {
    fraction = static_cast<double>(n) / static_cast<double>(m_budget.max_measurements);
    of = fmt::format("{}/{}", n, m_budget.max_measurements);
  } else if (m_budget.max_seconds > 0) {
    fraction = trace.total_cost_s() / m_budget.max_seconds;
    of = fmt::format("{:.0f}/{:.0f} s", trace.total_cost_s(), m_budget.max_seconds);
  } else {
    of = fmt::format("{}", n);
  }
  fraction = std::clamp(fraction, 0.0, 1.0);
  constexpr int width = 30;
  const int filled = static_cast<int>(fraction * width + 0.5);
  const auto* b = trace.best();
  std::string best = b ? fmt::format("best {:.4g} ms", b->best_ms) : "no valid result yet";
  fmt::print(stderr, "\r{}{}[{}{}] {} {}\x1b[K", m_label, m_label.empty() ? "" : " ",
             std::string(static_cast<std::size_t>(filled), '#'), std::string(static_cast<std::size_t>(width - filled), ' '),
             of, best);
  if (final) fmt::print(stderr, "\n");
  std::fflush(stderr);
  m_open = !final;
}

}  // namespace gpuforecast
