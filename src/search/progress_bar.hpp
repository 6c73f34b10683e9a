#pragma once
// A search observer that draws a progress bar on stderr, with the best result so far; drawn
// only when stderr is a terminal. SearchContextOptions::progress adds one.
#include <cstddef>
#include <string>

#include "gpuforecast/search/budget.hpp"
#include "gpuforecast/search/observer.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label = {});
  ProgressBar(ProgressBar&& other) noexcept;
  ProgressBar& operator=(ProgressBar&&) = delete;
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar();  // ends an unfinished bar's line, so that what follows starts on its own

  void on_begin(const SearchBegin& e);
  void on_measured(const SearchMeasured& e);
  void on_end(const SearchEnd& e);

 private:
  void draw(const Trace& trace, bool final);

  std::string m_label;
  Budget m_budget;
  bool m_draw = false;
  bool m_open = false;  // a line is drawn and not ended
};

}  // namespace gpuforecast
