#pragma once
// Every numeric option of every subcommand is checked before it is converted: CLI11 would wrap
// "--budget -5" into a huge unsigned number and accept "nan" for a double. Options bound to
// unsigned integers take whole numbers >= 0, floating-point ones finite numbers >= 0 (no option
// of this program means anything by a negative value); commands add narrower ranges of their own.
#include <CLI/CLI.hpp>

namespace gpuforecast::cli {

// Adds the checks to every numeric option of `app` and its subcommands (call once all are added).
void check_numeric_options(CLI::App& app);

// A finite number in [lo, hi] (for options with a narrower natural range, e.g. a probability).
[[nodiscard]] CLI::Validator number_in(double lo, double hi);

}  // namespace gpuforecast::cli
