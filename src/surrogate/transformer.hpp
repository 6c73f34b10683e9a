#pragma once
// The transformer surrogate (libtorch, hidden behind a pimpl: this header never includes torch).
// It lives in its own library, gpuforecast::transformer (libgpuforecast_transformer.so): link that
// to use this class directly. Through make_surrogate("transformer"), the default ensemble or a
// model file, gpuforecast::gpuforecast loads it at run time (docs/transformer.md).
//
// A candidate becomes a token sequence: [CLS]; shared context tokens (one numeric token per
// Device feature, a kernel identity token, one token per problem-size dimension, optional CUDA
// source tokens); per-candidate tokens (one per tunable parameter, launch geometry from the
// KernelSpec when present, static compiler features when present). Context tokens are embedded
// once per (kernel, device, problem) group and shared by every candidate of the group.
//
// Heads on the [CLS] output: log-runtime quantiles (5, 50, 95%) in per-group normalised units
// (pinball loss, plus a pairwise logistic ranking loss inside each group), p_fail (BCE), and for
// pairs (reference, candidate) of one group the eight half-octave speedup bins of GPU Forecasters.
//
// Normalisers: log(ms) is standardised per (kernel, problem, device) group of the training data.
// A group never seen in training (new device or kernel) uses the mean normaliser of the training
// groups with the same kernel and problem size, else of all groups; update()/fine_tune() with
// >= 3 ok points of a new group give it its own normaliser. Rankings never depend on normalisers.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct TransformerOptions {
  // Architecture. Defaults measured with benchmarks/transformer_tuning (see docs in that file).
  int width = 32;          // embedding width d
  int depth = 2;           // encoder layers
  int heads = 4;           // attention heads (width % heads == 0)
  int ffn_multiplier = 2;  // feed-forward width = ffn_multiplier * width
  double dropout = 0.0;
  // Optimisation: AdamW, linear warm-up then cosine decay to 0.
  int epochs = 200;          // passes over the training set ...
  int min_steps = 300;       // ... but never fewer optimiser steps than this (tiny data)
  int max_steps = 1500;      // ... nor more (large data: bounds training time)
  double lr = 3e-3;
  double weight_decay = 1e-2;
  double warmup_fraction = 0.05;  // of the total steps
  int batch_size = 64;            // candidates per step, all from one group
  double validation_fraction = 0.1;  // held out for early stopping (0: none)
  int patience = 20;                 // validation checks without improvement before stopping
  std::uint64_t seed = 0;
  int threads = 0;  // libtorch intra-op threads; 0: std::thread::hardware_concurrency()
  // Loss weights.
  double quantile_weight = 1.0;
  double rank_weight = 1.0;
  double fail_weight = 0.3;
  double bin_weight = 0.3;
  // Tokens.
  bool source_tokens = false;  // lex KernelSpec::source (no shared dataset has sources)
  int max_source_tokens = 64;
  // Inference and online updates.
  int inference_batch = 2048;
  int update_steps = 20;       // optimiser steps per update()
  double update_lr = 1e-3;
  int update_buffer = 512;     // most recent observations replayed by update()
};

// GRPO-style reinforcement learning on the bin head (see TransformerSurrogate::reinforce).
struct TransformerRlOptions {
  enum class Reward { correctness, correctness_brier, correctness_crps };
  Reward reward = Reward::correctness_crps;
  int steps = 150;
  int pairs_per_step = 64;  // prompts (reference, candidate) per step
  int group_size = 8;       // G sampled answers per pair
  double lr = 3e-4;
  double kl_weight = 0.05;  // KL(policy || supervised reference); 0: none
  double noise = 1.0;       // std of the Gaussian policy over stated bin logits
  std::uint64_t seed = 0;
};

struct TransformerRlReport {
  std::vector<double> mean_reward;  // per step
  double seconds = 0;
};

struct TransformerTrainReport {
  int steps = 0;
  int best_step = 0;
  double best_validation_loss = 0;
  double seconds = 0;
  bool stopped_early = false;
};

class TransformerSurrogate {
 public:
  explicit TransformerSurrogate(TransformerOptions options = {});
  ~TransformerSurrogate();
  // Deep copies (weights included): AnySurrogate clones before it changes a shared model.
  TransformerSurrogate(const TransformerSurrogate& other);
  TransformerSurrogate& operator=(const TransformerSurrogate& other);
  TransformerSurrogate(TransformerSurrogate&&) noexcept;
  TransformerSurrogate& operator=(TransformerSurrogate&&) noexcept;

  // Trains from scratch. Failed observations teach p_fail, ok ones the runtime.
  // Throws invalid_argument_error if there is no ok observation.
  void fit(std::span<const Observation> observations);
  // Online learning inside a search: adds to a replay buffer of recent observations and takes
  // `update_steps` optimiser steps on it (well under 1 s for 100 new points). Fits if untrained.
  void update(std::span<const Observation> observations);
  // Fine-tunes a (pre-)trained model on a few observations of a new device or kernel, at
  // `update_lr`, for `steps` steps. Gives new groups their own normaliser.
  void fine_tune(std::span<const Observation> observations, int steps);
  // Thread-safe (no state changes). Throws invalid_argument_error if untrained.
  [[nodiscard]] std::vector<Forecast> predict(std::span<const Candidate> candidates) const;

  // The GPU Forecasters formulation: P(bin 1..8) of each candidate against its reference.
  // `reference` has one element (used for all) or as many as `candidates`.
  [[nodiscard]] std::vector<std::array<double, 8>> predict_bins(std::span<const Candidate> reference,
                                                                std::span<const Candidate> candidates) const;
  // When set, predict() also fills Forecast::bin_probabilities against this reference.
  void set_reference(Candidate reference);
  void clear_reference() noexcept;

  // GRPO-style policy gradient on the bin head over random ok pairs of `observations`.
  TransformerRlReport reinforce(std::span<const Observation> observations, const TransformerRlOptions& options);

  [[nodiscard]] std::string kind() const { return "transformer"; }
  [[nodiscard]] bool trained() const noexcept;
  [[nodiscard]] const TransformerOptions& options() const noexcept;
  [[nodiscard]] const TransformerTrainReport& last_training() const noexcept;
  [[nodiscard]] std::size_t parameter_count() const;

  void save(ArchiveWriter& writer) const;
  static TransformerSurrogate load(ArchiveReader& reader);

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

static_assert(Surrogate<TransformerSurrogate>);

}  // namespace gpuforecast
