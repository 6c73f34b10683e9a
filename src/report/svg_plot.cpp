#include "report/svg_plot.hpp"

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

namespace {

// Where the data goes: the ranges in axis space (log10 on a log axis), their ticks, and the map
// from data to pixels inside the margins.
struct Frame {
  bool log_x = false, log_y = false;
  double xlo = 0, xhi = 1, ylo = 0, yhi = 1;
  std::vector<double> xt, yt;
  double width = 0, height = 0;
  static constexpr double left = 78, right = 24, top = 48, bottom = 62;

  [[nodiscard]] double pw() const { return width - left - right; }
  [[nodiscard]] double ph() const { return height - top - bottom; }
  [[nodiscard]] double tx(double v) const { return log_x ? std::log10(v) : v; }
  [[nodiscard]] double ty(double v) const { return log_y ? std::log10(v) : v; }
  [[nodiscard]] double pxa(double a) const { return left + (a - xlo) / (xhi - xlo) * pw(); }  // axis-space value
  [[nodiscard]] double pya(double a) const { return top + ph() - (a - ylo) / (yhi - ylo) * ph(); }
  [[nodiscard]] double px(double v) const { return pxa(tx(v)); }
  [[nodiscard]] double py(double v) const { return pya(ty(v)); }
  [[nodiscard]] bool visible(const PlotSeries& s, std::size_t i) const {
    return std::isfinite(s.x[i]) && std::isfinite(s.y[i]);
  }
};

struct AxisRange {
  bool log = false;
  bool fixed = false;
  double lo = 0, hi = 0;  // data space, when fixed
};

// Ticks of an axis-space range: round numbers, or whole powers of ten on a log axis.
std::vector<double> ticks_of(double lo, double hi, bool log) {
  if (!log) return nice_ticks(lo, hi, 6);
  return nice_ticks(std::floor(lo), std::ceil(hi), std::min(8, static_cast<int>(std::ceil(hi) - std::floor(lo)) + 1));
}

// The data ranges (ignoring non-finite values, bars reaching down to 0 on a linear axis), widened
// to the outer ticks unless the range is fixed.
Frame frame_of(const std::vector<PlotSeries>& series, int width, int height, const AxisRange& x, const AxisRange& y) {
  Frame f;
  f.log_x = x.log;
  f.log_y = y.log;
  f.width = width;
  f.height = height;
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if ((x.log && !(s.x[i] > 0)) || (y.log && !(s.y[i] > 0) && s.kind != SeriesKind::bars))
        throw invalid_argument_error(fmt::format("plot series \"{}\" has a non-positive value on a log axis", s.label));
      if (!f.visible(s, i)) continue;
      xlo = std::min(xlo, f.tx(s.x[i]));
      xhi = std::max(xhi, f.tx(s.x[i]));
      ylo = std::min(ylo, f.ty(s.y[i]));
      yhi = std::max(yhi, f.ty(s.y[i]));
      if (s.kind == SeriesKind::bars && !y.log) ylo = std::min(ylo, 0.0);
    }
  if (!std::isfinite(xlo)) xlo = 0, xhi = 1;
  if (!std::isfinite(ylo)) ylo = 0, yhi = 1;
  if (x.fixed) xlo = f.tx(x.lo), xhi = f.tx(x.hi);
  if (y.fixed) ylo = f.ty(y.lo), yhi = f.ty(y.hi);
  f.xt = ticks_of(xlo, xhi, x.log);
  f.yt = ticks_of(ylo, yhi, y.log);
  if (!x.fixed) xlo = f.xt.front(), xhi = f.xt.back();
  if (!y.fixed) ylo = f.yt.front(), yhi = f.yt.back();
  if (xhi == xlo) xhi = xlo + 1;
  if (yhi == ylo) yhi = ylo + 1;
  f.xlo = xlo, f.xhi = xhi, f.ylo = ylo, f.yhi = yhi;
  return f;
}

std::string tick_text(double v, bool log, const std::vector<double>& ticks) {
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1.0;
  return escape(log ? fmt::format("{:g}", std::pow(10, v)) : tick_label(v, step));
}

// Background, title, grid, ticks and their labels, the frame and the axis labels.
void draw_axes(std::string& o, const Frame& f, const std::string& title, const std::string& x_label,
               const std::string& y_label) {
  const double left = Frame::left, top = Frame::top, pw = f.pw(), ph = f.ph();
  o += fmt::format(R"(<rect x="0" y="0" width="{}" height="{}" fill="white"/>)"
                   "\n",
                   f.width, f.height);
  o += fmt::format(R"(<text x="{:.1f}" y="28" text-anchor="middle" font-size="16" font-weight="bold">{}</text>)"
                   "\n",
                   left + pw / 2, escape(title));
  for (double v : f.xt) {
    if (v < f.xlo - 1e-12 || v > f.xhi + 1e-12) continue;
    const double x = f.pxa(v);
    o += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="#e5e5e5"/>)"
                     "\n",
                     x, top, top + ph);
    o += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="black"/>)"
                     "\n",
                     x, top + ph, top + ph + 5);
    o += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)"
                     "\n",
                     x, top + ph + 20, tick_text(v, f.log_x, f.xt));
  }
  for (double v : f.yt) {
    if (v < f.ylo - 1e-12 || v > f.yhi + 1e-12) continue;
    const double y = f.pya(v);
    o += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" stroke="#e5e5e5"/>)"
                     "\n",
                     left, y, left + pw);
    o += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" stroke="black"/>)"
                     "\n",
                     left - 5, y, left);
    o += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)"
                     "\n",
                     left - 8, y + 4.5, tick_text(v, f.log_y, f.yt));
  }
  o += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="none" stroke="black"/>)"
                   "\n",
                   left, top, pw, ph);
  o += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="14">{}</text>)"
                   "\n",
                   left + pw / 2, f.height - 16, escape(x_label));
  o += fmt::format(
      R"svg(<text x="18" y="{0:.1f}" text-anchor="middle" font-size="14" transform="rotate(-90 18 {0:.1f})">{1}</text>)svg"
      "\n",
      top + ph / 2, escape(y_label));
}

// Bars are 80% of the smallest gap between their x values unless the series gives a width.
double bar_width(const PlotSeries& s, const Frame& f) {
  if (s.bar_width > 0) return s.bar_width;
  std::vector<double> xs = s.x;
  std::sort(xs.begin(), xs.end());
  double gap = std::numeric_limits<double>::infinity();
  for (std::size_t i = 1; i < xs.size(); ++i)
    if (xs[i] > xs[i - 1]) gap = std::min(gap, xs[i] - xs[i - 1]);
  return 0.8 * (std::isfinite(gap) ? gap : (f.xhi - f.xlo) / 10);
}

void draw_one_series(std::string& o, const Frame& f, const PlotSeries& s, const std::string& col) {
  if (s.kind == SeriesKind::line) {
    std::string pts;
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (f.visible(s, i)) pts += fmt::format("{:.1f},{:.1f} ", f.px(s.x[i]), f.py(s.y[i]));
    o += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{}/>)"
                     "\n",
                     pts, col, s.dashed ? R"( stroke-dasharray="6,4")" : "");
  } else if (s.kind == SeriesKind::points) {
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (f.visible(s, i))
        o += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3.5" fill="{}"/>)"
                         "\n",
                         f.px(s.x[i]), f.py(s.y[i]), col);
  } else {
    const double w = bar_width(s, f);
    const double base = f.py(f.log_y ? std::pow(10, f.ylo) : std::max(0.0, f.ylo));
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!f.visible(s, i)) continue;
      const double x0 = f.px(s.x[i] - w / 2), x1 = f.px(s.x[i] + w / 2), y1 = f.py(s.y[i]);
      o += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}" fill-opacity="0.75" stroke="{}"/>)"
                       "\n",
                       x0, std::min(y1, base), std::abs(x1 - x0), std::abs(base - y1), col, col);
    }
  }
}

// Every series and note, clipped to the plot area; returns each series' colour (its own, or the
// next of the palette).
template <class Notes>  // SvgPlot's own notes (x, y, text)
std::vector<std::string> draw_series(std::string& o, const Frame& f, const std::vector<PlotSeries>& series,
                                     const Notes& notes) {
  o += fmt::format(R"(<clipPath id="plot"><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/></clipPath>)"
                   "\n<g clip-path=\"url(#plot)\">\n",
                   Frame::left, Frame::top, f.pw(), f.ph());
  std::size_t next_colour = 0;
  std::vector<std::string> colours;
  for (const auto& s : series) {
    colours.push_back(s.color.empty() ? palette[next_colour++ % std::size(palette)] : s.color);
    draw_one_series(o, f, s, colours.back());
  }
  for (const auto& n : notes)
    o += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="12">{}</text>)"
                     "\n",
                     f.px(n.x), f.py(n.y), escape(n.text));
  o += "</g>\n";
  return colours;
}

// The legend goes inside the plot, in the corner that hides the fewest data points: curves that
// rise from the bottom left, as convergence curves do, would otherwise run under it.
void draw_legend(std::string& o, const Frame& f, const std::vector<PlotSeries>& series,
                 const std::vector<std::string>& colours) {
  std::size_t entries = 0, longest = 0;
  for (const auto& s : series) {
    entries += s.label.empty() ? 0 : 1;
    longest = std::max(longest, s.label.size());
  }
  if (entries == 0) return;
  const double lw = 44 + 7.2 * static_cast<double>(longest), lh = 8 + 20 * static_cast<double>(entries);
  auto hidden = [&](double x0, double y0) {
    std::size_t n = 0;
    for (const auto& s : series)
      for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
        if (!f.visible(s, i) || (f.log_x && s.x[i] <= 0) || (f.log_y && s.y[i] <= 0)) continue;
        const double x = f.px(s.x[i]), y = f.py(s.y[i]);
        n += (x >= x0 && x <= x0 + lw && y >= y0 && y <= y0 + lh) ? 1 : 0;
      }
    return n;
  };
  const double left = Frame::left, top = Frame::top, pw = f.pw(), ph = f.ph();
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
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
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

}  // namespace

std::string SvgPlot::to_svg() const {
  const Frame f = frame_of(m_series, m_width, m_height, {m_log_x, m_fixed_x, m_x_lo, m_x_hi},
                           {m_log_y, m_fixed_y, m_y_lo, m_y_hi});
  std::string o = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                              R"(font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="13">)"
                              "\n",
                              m_width, m_height);
  draw_axes(o, f, m_title, m_x_label, m_y_label);
  const std::vector<std::string> colours = draw_series(o, f, m_series, m_notes);
  draw_legend(o, f, m_series, colours);
  o += "</svg>\n";
  return o;
}

void SvgPlot::save(const std::string& path) const {
  detail::write_text_file(path, to_svg());
}

}  // namespace gpuforecast
