#pragma once
// For tests and diagnostics: TransformerSurrogate's inference (predict, predict_bins, reinforce's
// embeddings) normally runs a faster re-implementation of the model's forward pass (distinct
// tokens embedded once, batch-first encoder with a hand-written attention). With module
// inference on, it runs the torch::nn modules that training uses instead; both must agree to
// float rounding. Process-wide; not meant to be switched while another thread predicts.
namespace gpuforecast::detail::transformer {

void set_module_inference(bool on) noexcept;

}  // namespace gpuforecast::detail::transformer
