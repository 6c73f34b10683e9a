#pragma once
// TransformerOptions (public header) as the model sees it: validation, thread count, and the
// field order its persistence writes.
#include <cstdint>

#include "surrogate/transformer.hpp"

namespace gpuforecast::detail::transformer {

// Throws invalid_argument_error naming the offending options.
void check_options(const TransformerOptions& o);
// `threads`, or every hardware thread when it is 0.
[[nodiscard]] int resolved_threads(int threads);

// Every field in the order a model file stores them: adding one is a new format version.
template <class F>
void visit_options(TransformerOptions& o, F&& f) {
  f(o.width), f(o.depth), f(o.heads), f(o.ffn_multiplier), f(o.dropout), f(o.epochs), f(o.min_steps),
      f(o.max_steps), f(o.lr), f(o.weight_decay), f(o.warmup_fraction), f(o.batch_size), f(o.validation_fraction),
      f(o.patience), f(o.seed), f(o.threads), f(o.quantile_weight), f(o.rank_weight), f(o.fail_weight),
      f(o.bin_weight), f(o.source_tokens), f(o.max_source_tokens), f(o.inference_batch), f(o.update_steps),
      f(o.update_lr), f(o.update_buffer);
}

}  // namespace gpuforecast::detail::transformer
