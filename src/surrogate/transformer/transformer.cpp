// TransformerSurrogate's facade over its Impl (impl.hpp), and the normalisers every part reads.
// The parts live beside it: net (module), batch (tensors), fast_encoder + attention (inference
// kernels), fused_adamw (optimiser), trainer, inference, rl_stage, persistence.
#include "surrogate/transformer.hpp"

#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "surrogate/transformer/impl.hpp"
#include "surrogate/transformer/options.hpp"

namespace gpuforecast {

static_assert(PersistentSurrogate<TransformerSurrogate>);

using namespace detail::transformer;  // this folder's internals

TransformerSurrogate::Impl::Impl(TransformerOptions o) : opt(o) {
  check_options(opt);
  torch::set_num_threads(resolved_threads(opt.threads));
}

TransformerSurrogate::Impl::Impl(const Impl& o)
    : opt(o.opt), norms(o.norms), kp_norms(o.kp_norms), global(o.global), reference(o.reference), buffer(o.buffer),
      report(o.report), updates(o.updates) {
  if (o.net) {
    net = Net(std::dynamic_pointer_cast<NetImpl>(o.net->clone()));
    net->eval();
  }
}

Normaliser TransformerSurrogate::Impl::normaliser(const Candidate& c) const {
  if (auto it = norms.find(normaliser_key(c)); it != norms.end()) return it->second;
  if (auto it = kp_norms.find(kernel_problem_key(c)); it != kp_norms.end()) return it->second;
  return global;
}

void TransformerSurrogate::Impl::rebuild_fallbacks() {
  std::map<std::string, std::pair<Normaliser, int>> acc;
  Normaliser all{0, 0};
  for (const auto& [key, n] : norms) {
    const auto kp = key.substr(0, key.rfind('|'));
    auto& [s, count] = acc[kp];
    if (count == 0) s = Normaliser{0, 0};
    s.mu += n.mu;
    s.sigma += n.sigma;
    ++count;
    all.mu += n.mu;
    all.sigma += n.sigma;
  }
  kp_norms.clear();
  for (auto& [kp, sc] : acc) kp_norms[kp] = Normaliser{sc.first.mu / sc.second, sc.first.sigma / sc.second};
  if (!norms.empty()) global = Normaliser{all.mu / static_cast<double>(norms.size()), all.sigma / static_cast<double>(norms.size())};
}

TransformerSurrogate::TransformerSurrogate(TransformerOptions options) : m_impl(std::make_unique<Impl>(options)) {}
TransformerSurrogate::~TransformerSurrogate() = default;
TransformerSurrogate::TransformerSurrogate(const TransformerSurrogate& other)
    : m_impl(std::make_unique<Impl>(*other.m_impl)) {}
TransformerSurrogate& TransformerSurrogate::operator=(const TransformerSurrogate& other) {
  if (this != &other) m_impl = std::make_unique<Impl>(*other.m_impl);
  return *this;
}
TransformerSurrogate::TransformerSurrogate(TransformerSurrogate&&) noexcept = default;
TransformerSurrogate& TransformerSurrogate::operator=(TransformerSurrogate&&) noexcept = default;

void TransformerSurrogate::fit(std::span<const Observation> o) { m_impl->fit(o); }
void TransformerSurrogate::update(std::span<const Observation> o) { m_impl->update(o); }
void TransformerSurrogate::fine_tune(std::span<const Observation> o, int steps) { m_impl->fine_tune(o, steps); }
std::vector<Forecast> TransformerSurrogate::predict(std::span<const Candidate> c) const { return m_impl->predict(c); }
std::vector<std::array<double, 8>> TransformerSurrogate::predict_bins(std::span<const Candidate> r,
                                                                      std::span<const Candidate> c) const {
  return m_impl->predict_bins(r, c);
}
void TransformerSurrogate::set_reference(Candidate reference) { m_impl->reference = std::move(reference); }
void TransformerSurrogate::clear_reference() noexcept { m_impl->reference.reset(); }
TransformerRlReport TransformerSurrogate::reinforce(std::span<const Observation> o, const TransformerRlOptions& r) {
  return m_impl->reinforce(o, r);
}
bool TransformerSurrogate::trained() const noexcept { return static_cast<bool>(m_impl->net); }
const TransformerOptions& TransformerSurrogate::options() const noexcept { return m_impl->opt; }
const TransformerTrainReport& TransformerSurrogate::last_training() const noexcept { return m_impl->report; }
std::size_t TransformerSurrogate::parameter_count() const {
  if (!m_impl->net) return 0;
  std::size_t n = 0;
  for (const auto& p : m_impl->net->parameters()) n += static_cast<std::size_t>(p.numel());
  return n;
}
void TransformerSurrogate::save(ArchiveWriter& w) const { m_impl->save(w); }
TransformerSurrogate TransformerSurrogate::load(ArchiveReader& r) {
  TransformerSurrogate s;
  s.m_impl = Impl::load(r);
  return s;
}

}  // namespace gpuforecast
