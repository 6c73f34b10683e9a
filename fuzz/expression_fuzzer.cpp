// libFuzzer target: any byte string is compiled as an expression over a few names and, if it
// compiles, evaluated on numeric and string bindings. Only gpuforecast::error may escape the
// library; anything else (a crash, a sanitizer report, another exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/space/expression.hpp"

namespace {
const std::vector<std::string> kNames = {"block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "use_padding",
                                         "use_shmem",    "filter_width", "filter_height", "x", "s"};
const std::vector<gpuforecast::ListBinding> kLists = {
    {"ProblemSize", {gpuforecast::Value(4096), gpuforecast::Value(4096)}},
    {"Empty", {}},
    {"Mixed", {gpuforecast::Value(1), gpuforecast::Value(2.5), gpuforecast::Value("a")}}};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  gpuforecast::Expression e;
  try {
    e = gpuforecast::Expression::compile(source, kNames, kLists);
  } catch (const gpuforecast::error&) {
    return 0;
  }
  const std::vector<double> numbers = {16, 2, 3, 4, 0, 1, 15, 15, -7.5, 0};
  const std::vector<double> extremes = {9.2e18, -9.2e18, 0, -1, 1e308, -1e308, 0.5, -0.0, 1.0 / 0.0, 0.0 / 0.0};
  std::vector<gpuforecast::Value> values;
  for (double d : numbers) values.emplace_back(static_cast<std::int64_t>(d));
  values[8] = gpuforecast::Value(-7.5);
  values[9] = gpuforecast::Value("abc");
  try {
    (void)e.evaluate(values);
  } catch (const gpuforecast::error&) {
  }
  try {
    (void)e.evaluate_number(numbers);
  } catch (const gpuforecast::error&) {
  }
  try {
    (void)e.evaluate_number(extremes);
  } catch (const gpuforecast::error&) {
  }
  return 0;
}
