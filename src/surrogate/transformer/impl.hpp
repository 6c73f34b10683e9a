#pragma once
// TransformerSurrogate::Impl, the state behind the pimpl, shared by the files that implement it:
// transformer.cpp (facade, normalisers), trainer.cpp (fit, fine_tune, update), inference.cpp
// (predict, predict_bins), rl_stage.cpp (reinforce), persistence.cpp (save, load).
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <numbers>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "surrogate/transformer.hpp"
#include "surrogate/transformer/encoding.hpp"
#include "surrogate/transformer/net.hpp"

namespace gpuforecast {

namespace detail::transformer {
inline constexpr double ln2 = std::numbers::ln2;

// log(ms) of one (kernel, problem, device) group is standardised with these.
struct Normaliser {
  double mu = 0;
  double sigma = 1;
};

struct TrainGroup;  // trainer.cpp
}  // namespace detail::transformer

struct TransformerSurrogate::Impl {
  using Normaliser = detail::transformer::Normaliser;
  using TrainGroup = detail::transformer::TrainGroup;
  using Tensor = torch::Tensor;

  explicit Impl(TransformerOptions o);
  Impl(const Impl& o);

  TransformerOptions opt;
  detail::transformer::Net net{nullptr};
  std::map<std::string, Normaliser> norms;     // normaliser_key -> stats
  std::map<std::string, Normaliser> kp_norms;  // kernel_problem_key -> mean of its groups
  Normaliser global;
  std::optional<Candidate> reference;
  std::deque<Observation> buffer;
  TransformerTrainReport report;
  std::uint64_t updates = 0;

  // Normalisers (transformer.cpp, trainer.cpp).
  [[nodiscard]] Normaliser normaliser(const Candidate& c) const;
  void rebuild_fallbacks();
  // Adds normalisers for groups of `obs` not known yet (all groups when `replace`).
  void fit_normalisers(std::span<const Observation> obs, bool replace);

  // Training (trainer.cpp).
  std::vector<TrainGroup> make_groups(std::span<const Observation> obs, double val_fraction, std::mt19937_64& rng);
  // The optimisation loop shared by fit, fine_tune and update.
  TransformerTrainReport train(std::vector<TrainGroup>& groups, int steps, double lr, bool schedule,
                               std::mt19937_64& rng);
  double validation_loss(std::vector<TrainGroup>& groups);
  void fit(std::span<const Observation> obs);
  void fine_tune(std::span<const Observation> obs, int steps);
  void update(std::span<const Observation> obs);

  // Inference (inference.cpp).
  template <class F>
  void forward_rows(std::span<const Candidate> cands, const std::vector<std::size_t>& rows,
                    detail::transformer::CandidateEncoder& enc, F&& f);
  std::vector<Forecast> predict(std::span<const Candidate> cands);
  // CLS embeddings and predicted log times for a list of candidates, in order.
  std::pair<Tensor, std::vector<double>> embed_all(std::span<const Candidate> cands);
  std::vector<std::array<double, 8>> predict_bins(std::span<const Candidate> refs, std::span<const Candidate> cands);

  // The reinforcement-learning stage (rl_stage.cpp).
  TransformerRlReport reinforce(std::span<const Observation> obs, const TransformerRlOptions& ro);

  // Persistence (persistence.cpp).
  void save(ArchiveWriter& w) const;
  static std::unique_ptr<Impl> load(ArchiveReader& r);
};

}  // namespace gpuforecast
