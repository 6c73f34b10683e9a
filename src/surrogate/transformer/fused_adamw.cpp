// The fused AdamW step (fused_adamw.hpp) and its vectorised loops.
#include "surrogate/transformer/fused_adamw.hpp"

#include <algorithm>
#include <cmath>

namespace gpuforecast::detail::transformer {

using torch::Tensor;

namespace {

// Sum of squares in 8 float lanes (vectorises), added up in double.
__attribute__((target_clones("avx2", "default"))) double squared_norm(const float* __restrict g, std::int64_t n) {
  float lanes[8] = {};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) lanes[k] += g[i + k] * g[i + k];
  double sq = 0;
  for (; i < n; ++i) sq += static_cast<double>(g[i]) * g[i];
  for (float x : lanes) sq += x;
  return sq;
}

// -fno-math-errno (CMakeLists.txt) lets the square root vectorise.
__attribute__((target_clones("avx2", "default"))) void adamw_update(float* __restrict p, const float* __restrict g,
                                                                   float* __restrict m, float* __restrict v, std::int64_t n,
                                                                   float coef, float decay, float b1, float one_b1,
                                                                   float b2, float one_b2,
                                                                   float sqrt_bc2, float eps, float step_size) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float gi = g[i] * coef;
    const float pi = p[i] * decay;
    const float mi = m[i] * b1 + gi * one_b1;
    const float vi = v[i] * b2 + gi * gi * one_b2;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi - step_size * (mi / (std::sqrt(vi) / sqrt_bc2 + eps));
  }
}

}  // namespace

void FusedAdamW::zero_grad() {
  for (auto& p : m_params) p.mutable_grad() = Tensor{};
}

void FusedAdamW::step(double max_norm) {
  torch::NoGradGuard ng;
  double sq = 0;
  for (auto& p : m_params) {
    const Tensor& g = p.grad();
    if (!g.defined()) continue;
    const Tensor gc = g.contiguous();
    sq += squared_norm(gc.data_ptr<float>(), gc.numel());
  }
  const auto coef = static_cast<float>(std::min(1.0, max_norm / (std::sqrt(sq) + 1e-6)));
  constexpr double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  for (std::size_t k = 0; k < m_params.size(); ++k) {
    Tensor& p = m_params[k];
    State& st = m_state[k];
    const Tensor g = p.grad().defined() ? p.grad().contiguous() : Tensor{};
    if (!g.defined() && !st.m.defined()) continue;
    if (!st.m.defined()) {
      st.m = torch::zeros_like(p);
      st.v = torch::zeros_like(p);
    }
    ++st.step;
    const double bc1 = 1 - std::pow(beta1, static_cast<double>(st.step));
    const double bc2 = 1 - std::pow(beta2, static_cast<double>(st.step));
    const Tensor gz = g.defined() ? g : torch::zeros_like(p);
    adamw_update(p.data_ptr<float>(), gz.data_ptr<float>(), st.m.data_ptr<float>(), st.v.data_ptr<float>(),
                 p.numel(), coef, static_cast<float>(1 - m_lr * m_wd), static_cast<float>(beta1),
                 static_cast<float>(1 - beta1), static_cast<float>(beta2), static_cast<float>(1 - beta2),
                 static_cast<float>(std::sqrt(bc2)), static_cast<float>(eps), static_cast<float>(m_lr / bc1));
  }
}

}  // namespace gpuforecast::detail::transformer
