// Persistence: options, normalisers and weights in the model file's archive, format version 1.
#include <cmath>
#include <string>
#include <type_traits>

#include "gpuforecast/core/error.hpp"
#include "surrogate/transformer/impl.hpp"
#include "surrogate/transformer/options.hpp"

namespace gpuforecast {

using namespace detail::transformer;  // this folder's internals
using torch::Tensor;

namespace {
constexpr std::uint32_t format_version = 1;
}  // namespace

void TransformerSurrogate::Impl::save(ArchiveWriter& w) const {
  w.u32(format_version);
  TransformerOptions o = opt;
  visit_options(o, [&](auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, double>) w.f64(v);
    else if constexpr (std::is_same_v<T, bool>) w.u32(v ? 1 : 0);
    else if constexpr (std::is_same_v<T, std::uint64_t>) w.u64(v);
    else w.i64(v);
  });
  w.u64(norms.size());
  for (const auto& [k, n] : norms) {
    w.str(k);
    w.f64(n.mu);
    w.f64(n.sigma);
  }
  w.u32(net ? 1 : 0);
  if (!net) return;
  const auto params = net->named_parameters();
  w.u64(params.size());
  for (const auto& p : params) {
    w.str(p.key());
    const Tensor t = p.value().detach().contiguous().to(torch::kFloat);
    w.u64(static_cast<std::uint64_t>(t.dim()));
    for (auto s : t.sizes()) w.i64(s);
    w.f32s(std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel()));
  }
}

std::unique_ptr<TransformerSurrogate::Impl> TransformerSurrogate::Impl::load(ArchiveReader& r) {
  const auto version = r.u32();
  if (version != format_version)
    r.fail("transformer surrogate format version " + std::to_string(version) + " (this build reads " +
           std::to_string(format_version) + ")");
  TransformerOptions o;
  visit_options(o, [&](auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, double>) v = r.f64();
    else if constexpr (std::is_same_v<T, bool>) v = r.u32() != 0;
    else if constexpr (std::is_same_v<T, std::uint64_t>) v = r.u64();
    else v = static_cast<T>(r.i64());
  });
  std::unique_ptr<Impl> impl;
  try {
    impl = std::make_unique<Impl>(o);
  } catch (const invalid_argument_error& e) {
    r.fail(std::string("transformer hyper-parameters: ") + e.what());
  }
  const auto n_norms = r.u64();
  if (n_norms > 1'000'000) r.fail("implausible normaliser count " + std::to_string(n_norms));
  for (std::uint64_t i = 0; i < n_norms; ++i) {
    auto key = r.str();
    Normaliser n;
    n.mu = r.f64();
    n.sigma = r.f64();
    if (!std::isfinite(n.mu) || !(n.sigma > 0)) r.fail("invalid normaliser for group " + key);
    impl->norms[key] = n;
  }
  impl->rebuild_fallbacks();
  if (r.u32() == 0) return impl;
  impl->net = Net(impl->opt);
  auto params = impl->net->named_parameters();
  const auto count = r.u64();
  if (count != params.size())
    r.fail("transformer has " + std::to_string(count) + " weight tensors, expected " + std::to_string(params.size()));
  torch::NoGradGuard ng;
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto name = r.str();
    auto* p = params.find(name);
    if (!p) r.fail("unknown weight tensor '" + name + "'");
    const auto dims = r.u64();
    if (dims != static_cast<std::uint64_t>(p->dim())) r.fail("weight '" + name + "' has the wrong rank");
    for (std::uint64_t k = 0; k < dims; ++k)
      if (r.i64() != p->size(static_cast<std::int64_t>(k))) r.fail("weight '" + name + "' has the wrong shape");
    const auto data = r.f32s();
    if (static_cast<std::int64_t>(data.size()) != p->numel()) r.fail("weight '" + name + "' has the wrong size");
    for (float x : data)
      if (!std::isfinite(x)) r.fail("weight '" + name + "' holds a non-finite value");
    p->copy_(torch::from_blob(const_cast<float*>(data.data()), p->sizes(), torch::kFloat));
  }
  impl->net->eval();
  return impl;
}

}  // namespace gpuforecast
