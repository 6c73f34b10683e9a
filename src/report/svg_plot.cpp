#include "gpuforecast/report/svg_plot.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "gpuforecast/core/error.hpp"
#include "common/write_text_file.hpp"

namespace gpuforecast {

namespace {
// Okabe-Ito: distinguishable with the common colour-vision deficiencies.
constexpr const char* palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string tick_label(double v, double step) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1e5 || a < 1e-3) return fmt::format("{:.2g}", v);
  int decimals = 0;
  if (step < 1) decimals = std::min(6, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
  if (decimals > 0 && std::abs(step * std::pow(10, decimals) - std::round(step * std::pow(10, decimals))) > 1e-6)
    ++decimals;  // a step such as 0.25 needs one more digit
  return fmt::format("{:.{}f}", v, decimals);
}
}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) throw invalid_argument_error("nice_ticks: non-finite range");
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    const double d = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= d;
    hi += d;
  }
  const double raw = (hi - lo) / std::max(1, target - 1);
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> t;
  const double first = std::floor(lo / step + 1e-9) * step;
  for (double v = first; v <= hi + step * 1e-9; v += step) t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  if (t.back() < hi - step * 1e-9) t.push_back(t.back() + step);
  return t;
}

SvgPlot::SvgPlot(std::string title, std::string x_label, std::string y_label)
    : m_title(std::move(title)), m_x_label(std::move(x_label)), m_y_label(std::move(y_label)) {}

SvgPlot& SvgPlot::size(int w, int h) {
  if (w < 200 || h < 150) throw invalid_argument_error(fmt::format("plot size {}x{} is too small (min 200x150)", w, h));
  m_width = w;
  m_height = h;
  return *this;
}
SvgPlot& SvgPlot::x_range(double lo, double hi) {
  if (!(hi > lo)) throw invalid_argument_error(fmt::format("x range [{}, {}] is empty", lo, hi));
  m_fixed_x = true;
  m_x_lo = lo;
  m_x_hi = hi;
  return *this;
}
SvgPlot& SvgPlot::y_range(double lo, double hi) {
  if (!(hi > lo)) throw invalid_argument_error(fmt::format("y range [{}, {}] is empty", lo, hi));
  m_fixed_y = true;
  m_y_lo = lo;
  m_y_hi = hi;
  return *this;
}
SvgPlot& SvgPlot::log_x(bool on) {
  m_log_x = on;
  return *this;
}
SvgPlot& SvgPlot::log_y(bool on) {
  m_log_y = on;
  return *this;
}
SvgPlot& SvgPlot::add(PlotSeries s) {
  if (s.x.size() != s.y.size())
    throw invalid_argument_error(
        fmt::format("plot series \"{}\" has {} x values and {} y values", s.label, s.x.size(), s.y.size()));
  m_series.push_back(std::move(s));
  return *this;
}
SvgPlot& SvgPlot::line(std::string label, std::vector<double> x, std::vector<double> y, std::string color, bool dashed) {
  return add({std::move(label), std::move(x), std::move(y), SeriesKind::line, std::move(color), dashed, 0});
}
SvgPlot& SvgPlot::points(std::string label, std::vector<double> x, std::vector<double> y, std::string color) {
  return add({std::move(label), std::move(x), std::move(y), SeriesKind::points, std::move(color), false, 0});
}
SvgPlot& SvgPlot::bars(std::string label, std::vector<double> x, std::vector<double> y, std::string color, double w) {
  return add({std::move(label), std::move(x), std::move(y), SeriesKind::bars, std::move(color), false, w});
}
SvgPlot& SvgPlot::note(double x, double y, std::string text) {
  m_notes.push_back({x, y, std::move(text)});
  return *this;
}

std::string SvgPlot::to_svg() const {
  // Data ranges (in axis space: log10 for log axes), ignoring non-finite values.
  auto tx = [&](double v) { return m_log_x ? std::log10(v) : v; };
  auto ty = [&](double v) { return m_log_y ? std::log10(v) : v; };
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  for (const auto& s : m_series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if ((m_log_x && !(s.x[i] > 0)) || (m_log_y && !(s.y[i] > 0) && s.kind != SeriesKind::bars))
        throw invalid_argument_error(fmt::format("plot series \"{}\" has a non-positive value on a log axis", s.label));
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      xlo = std::min(xlo, tx(s.x[i]));
      xhi = std::max(xhi, tx(s.x[i]));
      ylo = std::min(ylo, ty(s.y[i]));
      yhi = std::max(yhi, ty(s.y[i]));
      if (s.kind == SeriesKind::bars && !m_log_y) ylo = std::min(ylo, 0.0);
    }
  if (!std::isfinite(xlo)) xlo = 0, xhi = 1;
  if (!std::isfinite(ylo)) ylo = 0, yhi = 1;
  if (m_fixed_x) xlo = tx(m_x_lo), xhi = tx(m_x_hi);
  if (m_fixed_y) ylo = ty(m_y_lo), yhi = ty(m_y_hi);
  auto xt = nice_ticks(xlo, xhi, 6);
  auto yt = nice_ticks(ylo, yhi, 6);
  if (m_log_x) xt = nice_ticks(std::floor(xlo), std::ceil(xhi), std::min(8, static_cast<int>(std::ceil(xhi) - std::floor(xlo)) + 1));
  if (m_log_y) yt = nice_ticks(std::floor(ylo), std::ceil(yhi), std::min(8, static_cast<int>(std::ceil(yhi) - std::floor(ylo)) + 1));
  if (!m_fixed_x) xlo = xt.front(), xhi = xt.back();
  if (!m_fixed_y) ylo = yt.front(), yhi = yt.back();
  if (xhi == xlo) xhi = xlo + 1;
  if (yhi == ylo) yhi = ylo + 1;

  const double W = m_width, H = m_height;
  const double left = 78, right = 24, top = 48, bottom = 62;
  const double pw = W - left - right, ph = H - top - bottom;
  auto px = [&](double v) { return left + (tx(v) - xlo) / (xhi - xlo) * pw; };
  auto py = [&](double v) { return top + ph - (ty(v) - ylo) / (yhi - ylo) * ph; };
  auto pxa = [&](double a) { return left + (a - xlo) / (xhi - xlo) * pw; };  // axis-space value
  auto pya = [&](double a) { return top + ph - (a - ylo) / (yhi - ylo) * ph; };

  std::string o;
  o += fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                   R"(font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="13">)"
                   "\n",
                   m_width, m_height);
  o += fmt::format(R"(<rect x="0" y="0" width="{}" height="{}" fill="white"/>)"
                   "\n",
                   m_width, m_height);
  o += fmt::format(R"(<text x="{:.1f}" y="28" text-anchor="middle" font-size="16" font-weight="bold">{}</text>)"
                   "\n",
                   left + pw / 2, escape(m_title));
  // grid and ticks
  auto step_of = [](const std::vector<double>& t) { return t.size() > 1 ? t[1] - t[0] : 1.0; };
  for (double v : xt) {
    if (v < xlo - 1e-12 || v > xhi + 1e-12) continue;
    const double x = pxa(v);
    o += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="#e5e5e5"/>)"
                     "\n",
                     x, top, top + ph);
    o += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="black"/>)"
                     "\n",
                     x, top + ph, top + ph + 5);
    const std::string lab = m_log_x ? fmt::format("{:g}", std::pow(10, v)) : tick_label(v, step_of(xt));
    o += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)"
                     "\n",
                     x, top + ph + 20, escape(lab));
  }
  for (double v : yt) {
    if (v < ylo - 1e-12 || v > yhi + 1e-12) continue;
    const double y = pya(v);
    o += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" stroke="#e5e5e5"/>)"
                     "\n",
                     left, y, left + pw);
    o += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" stroke="black"/>)"
                     "\n",
                     left - 5, y, left);
    const std::string lab = m_log_y ? fmt::format("{:g}", std::pow(10, v)) : tick_label(v, step_of(yt));
    o += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)"
                     "\n",
                     left - 8, y + 4.5, escape(lab));
  }
  o += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="none" stroke="black"/>)"
                   "\n",
                   left, top, pw, ph);
  o += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="14">{}</text>)"
                   "\n",
                   left + pw / 2, H - 16, escape(m_x_label));
  o += fmt::format(
      R"svg(<text x="18" y="{0:.1f}" text-anchor="middle" font-size="14" transform="rotate(-90 18 {0:.1f})">{1}</text>)svg"
      "\n",
      top + ph / 2, escape(m_y_label));

  // series, clipped to the plot area
  o += fmt::format(R"(<clipPath id="plot"><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/></clipPath>)"
                   "\n<g clip-path=\"url(#plot)\">\n",
                   left, top, pw, ph);
  std::size_t next_colour = 0;
  std::vector<std::string> colours;
  for (const auto& s : m_series) {
    const std::string col = s.color.empty() ? palette[next_colour++ % std::size(palette)] : s.color;
    colours.push_back(col);
    if (s.kind == SeriesKind::line) {
      std::string pts;
      for (std::size_t i = 0; i < s.x.size(); ++i) {
        if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
        pts += fmt::format("{:.1f},{:.1f} ", px(s.x[i]), py(s.y[i]));
      }
      o += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{}/>)"
                       "\n",
                       pts, col, s.dashed ? R"( stroke-dasharray="6,4")" : "");
    } else if (s.kind == SeriesKind::points) {
      for (std::size_t i = 0; i < s.x.size(); ++i) {
        if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
        o += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3.5" fill="{}"/>)"
                         "\n",
                         px(s.x[i]), py(s.y[i]), col);
      }
    } else {
      double w = s.bar_width;
      if (w <= 0) {
        std::vector<double> xs = s.x;
        std::sort(xs.begin(), xs.end());
        double gap = std::numeric_limits<double>::infinity();
        for (std::size_t i = 1; i < xs.size(); ++i)
          if (xs[i] > xs[i - 1]) gap = std::min(gap, xs[i] - xs[i - 1]);
        w = 0.8 * (std::isfinite(gap) ? gap : (xhi - xlo) / 10);
      }
      const double base = py(m_log_y ? std::pow(10, ylo) : std::max(0.0, ylo));
      for (std::size_t i = 0; i < s.x.size(); ++i) {
        if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
        const double x0 = px(s.x[i] - w / 2), x1 = px(s.x[i] + w / 2), y1 = py(s.y[i]);
        o += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}" fill-opacity="0.75" stroke="{}"/>)"
                         "\n",
                         x0, std::min(y1, base), std::abs(x1 - x0), std::abs(base - y1), col, col);
      }
    }
  }
  for (const auto& n : m_notes)
    o += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="12">{}</text>)"
                     "\n",
                     px(n.x), py(n.y), escape(n.text));
  o += "</g>\n";

  // legend: inside the plot, in the corner that hides the fewest data points (curves that rise
  // from the bottom left, as convergence curves do, would otherwise run under it)
  std::size_t entries = 0;
  for (const auto& s : m_series) entries += s.label.empty() ? 0 : 1;
  if (entries > 0) {
    std::size_t longest = 0;
    for (const auto& s : m_series) longest = std::max(longest, s.label.size());
    const double lw = 44 + 7.2 * static_cast<double>(longest), lh = 8 + 20 * static_cast<double>(entries);
    auto hidden = [&](double x0, double y0) {
      std::size_t n = 0;
      for (const auto& s : m_series)
        for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
          if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
          if (m_log_x && s.x[i] <= 0) continue;
          if (m_log_y && s.y[i] <= 0) continue;
          const double x = px(s.x[i]), y = py(s.y[i]);
          n += (x >= x0 && x <= x0 + lw && y >= y0 && y <= y0 + lh) ? 1 : 0;
        }
      return n;
    };
    const double corners[4][2] = {{left + 10, top + 10},
                                  {left + pw - 10 - lw, top + 10},
                                  {left + pw - 10 - lw, top + ph - 10 - lh},
                                  {left + 10, top + ph - 10 - lh}};
    double lx = corners[0][0], ly = corners[0][1];
    std::size_t fewest = hidden(lx, ly);
    for (const auto& c : corners)
      if (const std::size_t n = hidden(c[0], c[1]); n < fewest) {
        fewest = n;
        lx = c[0];
        ly = c[1];
      }
    o += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="white" fill-opacity="0.9" stroke="#999"/>)"
                     "\n",
                     lx, ly, lw, lh);
    std::size_t row = 0;
    for (std::size_t i = 0; i < m_series.size(); ++i) {
      const auto& s = m_series[i];
      if (s.label.empty()) continue;
      const double y = ly + 16 + 20 * static_cast<double>(row++);
      if (s.kind == SeriesKind::line)
        o += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2"{}/>)"
                         "\n",
                         lx + 8, y - 4, lx + 32, y - 4, colours[i], s.dashed ? R"( stroke-dasharray="6,4")" : "");
      else if (s.kind == SeriesKind::points)
        o += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3.5" fill="{}"/>)"
                         "\n",
                         lx + 20, y - 4, colours[i]);
      else
        o += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="20" height="10" fill="{}" fill-opacity="0.75"/>)"
                         "\n",
                         lx + 10, y - 9, colours[i]);
      o += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)"
                       "\n",
                       lx + 38, y, escape(s.label));
    }
  }
  o += "</svg>\n";
  return o;
}

void SvgPlot::save(const std::string& path) const {
  detail::write_text_file(path, to_svg());
}

}  // namespace gpuforecast
