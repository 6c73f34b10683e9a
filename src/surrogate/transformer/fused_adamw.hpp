#pragma once
// torch::optim::AdamW's update (amsgrad off, betas 0.9 / 0.999, eps 1e-8) fused with
// clip_grad_norm_ into one pass over each parameter, instead of ~12 tensor operations per
// parameter (the dense gradients of the 4096-row name embeddings make those passes the bulk of
// a small model's step). Same arithmetic in float up to rounding. A parameter that once had a
// gradient keeps being updated with a zero gradient when a step gives it none, as with
// Optimizer::zero_grad(), which zeroes gradients rather than dropping them.
#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace gpuforecast::detail::transformer {

class FusedAdamW {
 public:
  FusedAdamW(std::vector<torch::Tensor> params, double lr, double weight_decay)
      : m_params(std::move(params)), m_state(m_params.size()), m_lr(lr), m_wd(weight_decay) {}

  void set_lr(double lr) { m_lr = lr; }

  // Drops gradients (backward then writes fresh ones instead of adding to zeros).
  void zero_grad();

  // Clips the gradients' total 2-norm to `max_norm`, then takes one AdamW step.
  void step(double max_norm);

 private:
  struct State {
    torch::Tensor m, v;
    std::int64_t step = 0;
  };

  std::vector<torch::Tensor> m_params;
  std::vector<State> m_state;
  double m_lr, m_wd;
};

}  // namespace gpuforecast::detail::transformer
