#pragma once
// A small SVG plot writer for reports (reliability diagrams, risk-coverage and convergence
// curves): axes with "nice" ticks, axis labels, a title, a legend, and line, point and bar
// series. No dependencies; output is a standalone .svg that browsers and rsvg-convert render.
#include <string>
#include <vector>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

enum class SeriesKind { line, points, bars };

struct PlotSeries {
  std::string label;  // shown in the legend (empty: not listed)
  std::vector<double> x, y;
  SeriesKind kind = SeriesKind::line;
  std::string color;    // CSS colour; empty picks the next of a colour-blind-safe palette
  bool dashed = false;  // lines only
  double bar_width = 0; // bars only, in x units; 0 = 80% of the smallest x gap
};

class SvgPlot {
 public:
  SvgPlot(std::string title, std::string x_label, std::string y_label);

  SvgPlot& size(int width_px, int height_px);
  // Fixed axis ranges; otherwise they are fitted to the data (with nice tick bounds).
  SvgPlot& x_range(double lo, double hi);
  SvgPlot& y_range(double lo, double hi);
  SvgPlot& log_x(bool on = true);  // log10 axis (data must be positive)
  SvgPlot& log_y(bool on = true);

  SvgPlot& add(PlotSeries s);
  SvgPlot& line(std::string label, std::vector<double> x, std::vector<double> y, std::string color = {},
                bool dashed = false);
  SvgPlot& points(std::string label, std::vector<double> x, std::vector<double> y, std::string color = {});
  SvgPlot& bars(std::string label, std::vector<double> x, std::vector<double> y, std::string color = {},
                double bar_width = 0);
  // Free text anchored at data coordinates (e.g. "ECE 0.04").
  SvgPlot& note(double x, double y, std::string text);

  // Throws invalid_argument_error for mismatched series sizes or non-positive data on a log axis.
  [[nodiscard]] std::string to_svg() const;
  // Throws gpuforecast::error naming the path when it cannot be written.
  void save(const std::string& path) const;

 private:
  struct Note {
    double x, y;
    std::string text;
  };
  std::string m_title, m_x_label, m_y_label;
  int m_width = 640, m_height = 440;
  bool m_fixed_x = false, m_fixed_y = false, m_log_x = false, m_log_y = false;
  double m_x_lo = 0, m_x_hi = 1, m_y_lo = 0, m_y_hi = 1;
  std::vector<PlotSeries> m_series;
  std::vector<Note> m_notes;
};

// About `target` round tick values (1, 2, 2.5, 5 x 10^k steps) covering [lo, hi].
[[nodiscard]] std::vector<double> nice_ticks(double lo, double hi, int target = 6);

}  // namespace gpuforecast
