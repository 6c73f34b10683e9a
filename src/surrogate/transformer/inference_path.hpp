#pragma once
// For tests and diagnostics. TransformerSurrogate normally runs re-implementations of its
// encoder's forward pass: in inference (predict, predict_bins, reinforce's embeddings) a fast
// one (distinct tokens embedded once, batch-first layers with a hand-written attention), in
// training a batch-first one from differentiable torch ops (no per-matrix bmm). With the module
// path on, both run torch::nn::TransformerEncoder's own forward instead; all must agree to float
// rounding. Process-wide; not meant to be switched while another thread uses a model. Setting
// GPUFORECAST_TRANSFORMER_MODULE_PATH=1 in the environment turns it on as well (benchmarks).
namespace gpuforecast::detail::transformer {

void set_module_path(bool on) noexcept;
// Whether the module path is on (set_module_path or the environment variable, read once).
[[nodiscard]] bool module_path() noexcept;

}  // namespace gpuforecast::detail::transformer
