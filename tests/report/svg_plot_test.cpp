#include <catch2/catch.hpp>

#include <cmath>

#include "gpuforecast/core/error.hpp"
#include "report/svg_plot.hpp"

using namespace gpuforecast;

TEST_CASE("nice ticks are round and cover the range") {
  const auto t = nice_ticks(0, 1, 6);
  REQUIRE(t.size() == 6);
  CHECK(t.front() == 0);
  CHECK(t.back() == Approx(1.0));
  CHECK(t[1] == Approx(0.2));
  const auto u = nice_ticks(3.2, 97.5, 6);
  CHECK(u.front() <= 3.2);
  CHECK(u.back() >= 97.5);
  CHECK(u[1] - u[0] == Approx(20));
  const auto single = nice_ticks(5, 5);
  CHECK(single.front() < 5);
  CHECK(single.back() > 5);
}

TEST_CASE("an SVG with axes, labels, legend and every series kind") {
  SvgPlot p("Risk & coverage", "coverage", "risk <among accepted>");
  p.line("rule", {0, 0.5, 1}, {0, 0.05, 0.2}).points("calibration", {0.2, 0.4}, {0.01, 0.02}).bars("count", {0.1, 0.3},
                                                                                                   {0.1, 0.15});
  p.line("alpha", {0, 1}, {0.1, 0.1}, "#777", true);
  p.note(0.6, 0.15, "AURC 0.05");
  const std::string svg = p.to_svg();
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find("Risk &amp; coverage") != std::string::npos);  // escaped
  CHECK(svg.find("risk &lt;among accepted&gt;") != std::string::npos);
  CHECK(svg.find("polyline") != std::string::npos);
  CHECK(svg.find("<circle") != std::string::npos);
  CHECK(svg.find("stroke-dasharray") != std::string::npos);
  CHECK(svg.find(">calibration<") != std::string::npos);  // legend entry
  CHECK(svg.find(">0.2<") != std::string::npos);          // a tick label
  CHECK(svg.find("AURC 0.05") != std::string::npos);
}

TEST_CASE("plot input errors") {
  SvgPlot p("t", "x", "y");
  CHECK_THROWS_AS(p.line("bad", {1, 2}, {1}), invalid_argument_error);
  p.log_y().line("neg", {1, 2}, {1, -1});
  CHECK_THROWS_AS(p.to_svg(), invalid_argument_error);
  CHECK_THROWS_AS(SvgPlot("t", "x", "y").save("/nonexistent-dir/x.svg"), error);
  CHECK_THROWS_AS(SvgPlot("t", "x", "y").y_range(1, 0), invalid_argument_error);
}

TEST_CASE("log axes label powers of ten") {
  SvgPlot p("t", "x", "y");
  p.log_y().line("a", {1, 2, 3}, {0.01, 1, 100});
  const auto svg = p.to_svg();
  CHECK(svg.find(">100<") != std::string::npos);
  CHECK(svg.find(">0.01<") != std::string::npos);
}

TEST_CASE("the legend goes to the corner that hides the fewest points") {
  auto legend_x = [](const std::string& svg) {
    const auto box = svg.find(R"(fill="white" fill-opacity="0.9")");
    REQUIRE(box != std::string::npos);
    const auto x = svg.rfind("<rect x=\"", box);
    REQUIRE(x != std::string::npos);
    return std::stod(svg.substr(x + 9));
  };
  // A curve that rises steeply on the left and stays near the top: the top left is taken.
  std::vector<double> x, y;
  for (int i = 0; i <= 100; ++i) {
    x.push_back(i);
    y.push_back(1.0 - std::exp(-i / 3.0));
  }
  SvgPlot rising("convergence", "measurements", "fraction of optimum");
  rising.size(640, 440).y_range(0, 1).line("search", x, y);
  CHECK(legend_x(rising.to_svg()) > 320);  // moved to the right half

  // Data only at the bottom right: the legend stays top left.
  SvgPlot low("low", "x", "y");
  low.size(640, 440).x_range(0, 1).y_range(0, 1).points("p", {0.9, 0.95}, {0.05, 0.1});
  CHECK(legend_x(low.to_svg()) < 320);
}
