#include "surrogate/transformer/options.hpp"

#include <algorithm>
#include <string>
#include <thread>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast::detail::transformer {

void check_options(const TransformerOptions& o) {
  if (o.width <= 0 || o.depth <= 0 || o.heads <= 0 || o.width % o.heads != 0)
    throw invalid_argument_error("TransformerOptions: width must be a positive multiple of heads, depth >= 1 (width " +
                                 std::to_string(o.width) + ", heads " + std::to_string(o.heads) + ", depth " +
                                 std::to_string(o.depth) + ")");
  if (o.batch_size < 2 || o.inference_batch < 1 || o.ffn_multiplier < 1)
    throw invalid_argument_error("TransformerOptions: batch_size >= 2, inference_batch >= 1, ffn_multiplier >= 1");
  if (!(o.lr > 0) || o.validation_fraction < 0 || o.validation_fraction >= 1 || o.dropout < 0 || o.dropout >= 1)
    throw invalid_argument_error("TransformerOptions: lr > 0, validation_fraction and dropout in [0, 1)");
}

int resolved_threads(int t) {
  if (t > 0) return t;
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}
}  // namespace gpuforecast::detail::transformer
