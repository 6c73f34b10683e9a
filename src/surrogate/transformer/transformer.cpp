// The only translation unit that includes libtorch (30+ s to compile): model, training,
// inference, persistence and the reinforcement-learning stage of the transformer surrogate.
#include "gpuforecast/surrogate/transformer.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <numbers>
#include <numeric>
#include <random>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "surrogate/transformer/encoding.hpp"
#include "surrogate/transformer/inference_path.hpp"

namespace gpuforecast {

static_assert(PersistentSurrogate<TransformerSurrogate>);

namespace {

namespace tr = detail::transformer;
using torch::Tensor;
constexpr std::uint32_t format_version = 1;
constexpr double ln2 = std::numbers::ln2;

// detail::transformer::set_module_path: run torch::nn::TransformerEncoder's own forward (the
// reference) instead of the re-implementations below, in training and in inference.
// GPUFORECAST_TRANSFORMER_MODULE_PATH=1 in the environment (read at the first use) does the same.
std::atomic<bool> g_module_path{false};
bool module_path() {
  static const bool from_env = [] {
    const char* e = std::getenv("GPUFORECAST_TRANSFORMER_MODULE_PATH");
    return e != nullptr && *e != '\0' && std::string_view(e) != "0";
  }();
  return from_env || g_module_path.load(std::memory_order_relaxed);
}

// One post-norm GELU encoder layer, batch-first on x [B, L, d] with torch ops (differentiable):
// TransformerEncoderLayerImpl::forward without dropout. libtorch 1.13's MultiheadAttention does
// its two products as bmm over B * heads tiny matrices, which the CPU backend runs as one GEMM
// call per matrix; here scores and weighted values are broadcast products summed over one axis.
Tensor encoder_layer_autograd(torch::nn::TransformerEncoderLayerImpl& layer, const Tensor& x, const Tensor& pad) {
  auto& sa = *layer.self_attn;
  const auto b = x.size(0), l = x.size(1), d = x.size(2), heads = sa.options.num_heads(), dh = d / heads;
  const Tensor qkv = torch::linear(x, sa.in_proj_weight, sa.in_proj_bias);  // [B, L, 3d]
  const Tensor q = qkv.narrow(2, 0, d).reshape({b, l, heads, dh}).transpose(1, 2) *
                   (1.0 / std::sqrt(static_cast<double>(dh)));                      // [B, H, L, dh]
  const Tensor k = qkv.narrow(2, d, d).reshape({b, l, heads, dh}).transpose(1, 2);  // [B, H, L, dh]
  const Tensor v = qkv.narrow(2, 2 * d, d).reshape({b, l, heads, dh}).transpose(1, 2);
  Tensor scores = (q.unsqueeze(3) * k.unsqueeze(2)).sum(-1);  // [B, H, Lq, Lk]
  if (pad.defined()) scores = scores.masked_fill(pad.view({b, 1, 1, l}), -std::numeric_limits<float>::infinity());
  const Tensor w = torch::softmax(scores, -1);
  const Tensor att = (w.unsqueeze(-1) * v.unsqueeze(2)).sum(3).transpose(1, 2).reshape({b, l, d});
  Tensor y = torch::layer_norm(x + torch::linear(att, sa.out_proj->weight, sa.out_proj->bias), {d}, layer.norm1->weight,
                               layer.norm1->bias, layer.norm1->options.eps());
  const Tensor f = torch::linear(torch::gelu(torch::linear(y, layer.linear1->weight, layer.linear1->bias)),
                                 layer.linear2->weight, layer.linear2->bias);
  return torch::layer_norm(y + f, {d}, layer.norm2->weight, layer.norm2->bias, layer.norm2->options.eps());
}

// ---------------------------------------------------------------------------------------------
// Model

struct NetImpl : torch::nn::Cloneable<NetImpl> {
  explicit NetImpl(const TransformerOptions& o) : opt(o) { reset(); }

  void reset() override {
    const std::int64_t d = opt.width;
    type_emb = register_module("type_emb", torch::nn::Embedding(tr::token_type_count, d));
    name_emb = register_module("name_emb", torch::nn::Embedding(tr::name_vocab, d));
    cat_emb = register_module("cat_emb", torch::nn::Embedding(tr::category_vocab, d));
    num_proj = register_module("num_proj", torch::nn::Sequential(torch::nn::Linear(tr::numeric_width, d),
                                                                 torch::nn::GELU(), torch::nn::Linear(d, d)));
    auto layer = torch::nn::TransformerEncoderLayerOptions(d, opt.heads)
                     .dim_feedforward(static_cast<std::int64_t>(opt.ffn_multiplier) * d)
                     .dropout(opt.dropout)
                     .activation(torch::kGELU);
    encoder = register_module("encoder", torch::nn::TransformerEncoder(
                                             torch::nn::TransformerEncoderOptions(layer, opt.depth)));
    ctx_proj = register_module("ctx_proj", torch::nn::Linear(d, d));
    final_norm = register_module("final_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
    quant_head = register_module("quant_head", torch::nn::Sequential(torch::nn::Linear(d, d), torch::nn::GELU(),
                                                                     torch::nn::Linear(d, 3)));
    fail_head = register_module("fail_head", torch::nn::Linear(d, 1));
    bin_head = register_module("bin_head", torch::nn::Sequential(torch::nn::Linear(3 * d + 1, d), torch::nn::GELU(),
                                                                 torch::nn::Linear(d, speedup_bin_count)));
    // The value projection is modulated per name (a cheap form of FT-Transformer's per-feature
    // embedding): without it, block_size_x=16 and tile_size_x=16 embed almost identically and
    // small models often fail to start learning.
    name_in = register_module("name_in", torch::nn::Embedding(tr::name_vocab, tr::numeric_width));
    name_out = register_module("name_out", torch::nn::Embedding(tr::name_vocab, d));
    torch::NoGradGuard ng;
    name_in->weight.normal_(0.0, 0.3);
    name_out->weight.normal_(0.0, 0.3);
  }

  Tensor embed(const Tensor& type, const Tensor& name, const Tensor& cat, const Tensor& num) {
    const Tensor value = num_proj->forward(num * (1.0 + name_in(name))) * (1.0 + name_out(name));
    return type_emb(type) + name_emb(name) + cat_emb(cat) + value;
  }

  // [CLS] output: [B, d]. The context (device, kernel, problem, source tokens) is encoded once
  // as its own sequence and mean-pooled into ONE token that every candidate sequence shares, so
  // a candidate's sequence is [CLS] + its parameters + geometry + features + that token.
  Tensor cls(const Tensor& ctx, const Tensor& type, const Tensor& name, const Tensor& cat, const Tensor& num,
             const Tensor& pad) {
    if (opt.dropout == 0.0 && !module_path())
      return cls_batch_first(ctx, type, name, cat, num, pad);
    const auto b = type.size(0);
    Tensor x = embed(type, name, cat, num).transpose(0, 1);  // [Lp, B, d]
    Tensor mask = pad;
    if (ctx.defined() && ctx.size(0) > 0) {
      const Tensor summary = ctx_proj(encoder->forward(ctx.unsqueeze(1)).mean(0));  // [1, d]
      x = torch::cat({x, summary.unsqueeze(0).expand({1, b, summary.size(1)})}, 0);
      if (pad.defined()) mask = torch::cat({pad, torch::zeros({b, 1}, torch::kBool)}, 1);
    }
    Tensor y = encoder->forward(x, {}, mask);
    // [CLS] plus the mean of all outputs: pooling gives every token a direct gradient path.
    return final_norm(y[0] + y.mean(0));
  }

  // The same as cls() with the encoder layers run batch-first by encoder_layer_autograd (no
  // dropout): what training uses.
  Tensor encode_batch_first(Tensor x, const Tensor& pad) {
    for (std::size_t i = 0; i < encoder->layers->size(); ++i)
      x = encoder_layer_autograd(*encoder->layers->ptr<torch::nn::TransformerEncoderLayerImpl>(i), x, pad);
    return x;
  }
  Tensor cls_batch_first(const Tensor& ctx, const Tensor& type, const Tensor& name, const Tensor& cat,
                         const Tensor& num, const Tensor& pad) {
    const auto b = type.size(0);
    Tensor x = embed(type, name, cat, num);  // [B, Lp, d]
    Tensor mask = pad;
    if (ctx.defined() && ctx.size(0) > 0) {
      const Tensor summary = ctx_proj(encode_batch_first(ctx.unsqueeze(0), {}).mean(1));  // [1, d]
      x = torch::cat({x, summary.unsqueeze(1).expand({b, 1, summary.size(1)})}, 1);
      if (pad.defined()) mask = torch::cat({pad, torch::zeros({b, 1}, torch::kBool)}, 1);
    }
    const Tensor y = encode_batch_first(x, mask);
    return final_norm(y.select(1, 0) + y.mean(1));
  }

  // Ordered quantiles q05 <= q50 <= q95 in normalised log-time units: [B, 3].
  Tensor quantiles(const Tensor& h) {
    Tensor o = quant_head->forward(h);
    Tensor mid = o.select(1, 0);
    Tensor lo = mid - torch::nn::functional::softplus(o.select(1, 1)) - 1e-3;
    Tensor hi = mid + torch::nn::functional::softplus(o.select(1, 2)) + 1e-3;
    return torch::stack({lo, mid, hi}, 1);
  }
  Tensor fail_logit(const Tensor& h) { return fail_head(h).squeeze(1); }
  // dq: predicted log2(t_ref / t_cand) from the quantile head, [B].
  Tensor bin_logits(const Tensor& href, const Tensor& hcand, const Tensor& dq) {
    return bin_head->forward(torch::cat({href, hcand, href - hcand, dq.unsqueeze(1)}, 1));
  }

  TransformerOptions opt;
  torch::nn::Embedding type_emb{nullptr}, name_emb{nullptr}, cat_emb{nullptr}, name_in{nullptr}, name_out{nullptr};
  torch::nn::Sequential num_proj{nullptr};
  torch::nn::TransformerEncoder encoder{nullptr};
  torch::nn::Linear ctx_proj{nullptr};
  torch::nn::LayerNorm final_norm{nullptr};
  torch::nn::Sequential quant_head{nullptr};
  torch::nn::Linear fail_head{nullptr};
  torch::nn::Sequential bin_head{nullptr};
};
TORCH_MODULE(Net);

// ---------------------------------------------------------------------------------------------
// Encoding into tensors

struct Block {  // candidates sharing a context
  Tensor ctx_type, ctx_name, ctx_cat, ctx_num;  // [Lc], [Lc, F]
  Tensor type, name, cat, num;                  // [N, Lp], [N, Lp, F]
  Tensor pad;                                   // [N, Lp] bool, undefined when all lengths agree
  Tensor ctx(NetImpl& net) const {
    if (ctx_type.size(0) == 0) return {};
    return net.embed(ctx_type, ctx_name, ctx_cat, ctx_num);
  }
  Tensor cls(NetImpl& net, const Tensor& idx) const {
    const Tensor c = ctx(net);
    if (!idx.defined()) return net.cls(c, type, name, cat, num, pad);
    return net.cls(c, type.index_select(0, idx), name.index_select(0, idx), cat.index_select(0, idx),
                   num.index_select(0, idx), pad.defined() ? pad.index_select(0, idx) : Tensor{});
  }
};

void tokens_to_tensors(const std::vector<tr::Token>& toks, Tensor& type, Tensor& name, Tensor& cat, Tensor& num) {
  const auto n = static_cast<std::int64_t>(toks.size());
  type = torch::empty({n}, torch::kLong);
  name = torch::empty({n}, torch::kLong);
  cat = torch::empty({n}, torch::kLong);
  num = torch::empty({n, tr::numeric_width}, torch::kFloat);
  auto* t = type.data_ptr<std::int64_t>();
  auto* m = name.data_ptr<std::int64_t>();
  auto* c = cat.data_ptr<std::int64_t>();
  auto* f = num.data_ptr<float>();
  for (std::int64_t i = 0; i < n; ++i) {
    const auto& k = toks[static_cast<std::size_t>(i)];
    t[i] = k.type;
    m[i] = k.name;
    c[i] = k.category;
    std::copy(k.numeric.begin(), k.numeric.end(), f + i * tr::numeric_width);
  }
}

Block encode_block(const std::vector<const Candidate*>& cands, const TransformerOptions& opt,
                   tr::CandidateEncoder& encoder) {
  Block b;
  tokens_to_tensors(tr::context_tokens(*cands.front(), opt.source_tokens, opt.max_source_tokens), b.ctx_type,
                    b.ctx_name, b.ctx_cat, b.ctx_num);
  std::vector<std::vector<tr::Token>> per(cands.size());
  std::size_t lp = 0, lmin = SIZE_MAX;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    encoder.encode(*cands[i], per[i]);
    lp = std::max(lp, per[i].size());
    lmin = std::min(lmin, per[i].size());
  }
  const auto n = static_cast<std::int64_t>(cands.size());
  const auto l = static_cast<std::int64_t>(lp);
  b.type = torch::zeros({n, l}, torch::kLong);
  b.name = torch::zeros({n, l}, torch::kLong);
  b.cat = torch::zeros({n, l}, torch::kLong);
  b.num = torch::zeros({n, l, tr::numeric_width}, torch::kFloat);
  if (lmin != lp) b.pad = torch::zeros({n, l}, torch::kBool);
  auto* t = b.type.data_ptr<std::int64_t>();
  auto* m = b.name.data_ptr<std::int64_t>();
  auto* c = b.cat.data_ptr<std::int64_t>();
  auto* f = b.num.data_ptr<float>();
  bool* p = b.pad.defined() ? b.pad.data_ptr<bool>() : nullptr;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto& toks = per[static_cast<std::size_t>(i)];
    for (std::int64_t j = 0; j < l; ++j) {
      const auto o = i * l + j;
      if (j < static_cast<std::int64_t>(toks.size())) {
        const auto& k = toks[static_cast<std::size_t>(j)];
        t[o] = k.type;
        m[o] = k.name;
        c[o] = k.category;
        std::copy(k.numeric.begin(), k.numeric.end(), f + o * tr::numeric_width);
      } else if (p) {
        p[o] = true;
      }
    }
  }
  return b;
}

// ---------------------------------------------------------------------------------------------
// Inference path. The same function as NetImpl::cls (up to float rounding), computed faster:
// - each distinct token of a group is embedded once, with its first-layer q/k/v projection,
//   and gathered (a space has a handful of values per parameter);
// - the encoder runs batch-first on [n * l, d] rows with a hand-written attention: libtorch
//   1.13's MultiheadAttention does one bmm per (candidate, head), i.e. thousands of tiny GEMMs
//   with their dispatch overhead per batch;
// - the shared context is encoded once per group, not once per batch.
// Training keeps the module path (autograd); a test checks both paths agree.

// Eight floats (GCC vector extension: one AVX register, or two SSE ones in the default clone).
// The helpers below pass them by value; they are internal and inlined, so the psABI note about
// 32-byte vector arguments without AVX does not concern any interface. (GCC emits the note at
// the end of the translation unit, so it stays silenced for the rest of this file.)
#pragma GCC diagnostic ignored "-Wpsabi"
using v8sf = float __attribute__((vector_size(32)));
using v8si = std::int32_t __attribute__((vector_size(32)));
[[gnu::always_inline]] inline v8sf load8(const float* p) {
  v8sf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store8(float* p, v8sf v) { std::memcpy(p, &v, sizeof v); }

// exp(x) for x <= 0 (softmax after subtracting the maximum): 2^n * p(r) with x = n ln2 + r,
// |r| <= ln2 / 2, a degree-6 Taylor polynomial (relative error < 3e-7); x < -87 gives ~1e-38
// instead of 0 (negligible next to the maximum's 1).
[[gnu::always_inline]] inline v8sf exp_nonpositive(v8sf x) {
  x = x < -87.0F ? v8sf{} - 87.0F : x;
  const float magic = 12582912.0F;  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  const v8sf n = (x * 1.44269504088896341F + magic) - magic;
  const v8sf r = x - n * 0.693359375F + n * 2.12194440e-4F;  // ln2 in two parts (Cephes)
  v8sf p = v8sf{} + 1.0F / 720;
  p = p * r + 1.0F / 120;
  p = p * r + 1.0F / 24;
  p = p * r + 1.0F / 6;
  p = p * r + 0.5F;
  p = p * r + 1.0F;
  p = p * r + 1.0F;
  const v8si bits = (__builtin_convertvector(n, v8si) + 127) << 23;
  return p * std::bit_cast<v8sf>(bits);
}

// softmax(q k^T / sqrt(dh)) v for candidates [b0, b1) and every head, over [n * l, 3d] rows of
// q|k|v. `pad` ([n, l], true = padding) masks keys. Scores of one (candidate, head) are a tiny
// [l, dh] x [dh, l] product: k is transposed into a scratch buffer padded to l8 (a multiple of
// 8) keys, so scores, exponentials and (for heads of 8 or 16 channels) the weighted sum of
// values run on 8-float vectors. An AVX2 clone is picked at run time.
__attribute__((target_clones("avx2", "default"))) void attention_rows(
    const float* __restrict qkv, const bool* __restrict pad, float* __restrict out, std::int64_t b0, std::int64_t b1,
    std::int64_t l, std::int64_t d, std::int64_t heads, float* __restrict scratch) {
  const std::int64_t dh = d / heads;
  const float scale = 1.0F / std::sqrt(static_cast<float>(dh));
  const std::int64_t stride = 3 * d;
  const std::int64_t l8 = (l + 7) / 8 * 8;
  float* __restrict kt = scratch;      // [dh, l8]
  float* __restrict s = kt + dh * l8;  // [l8] scores, then weights, of one query
  float* __restrict keep = s + l8;     // [l8] 1 for keys, 0 for padding
  for (std::int64_t j = l; j < l8; ++j) keep[j] = 0.0F;
  for (std::int64_t c = 0; c < dh; ++c)
    for (std::int64_t j = l; j < l8; ++j) kt[c * l8 + j] = 0.0F;
  for (std::int64_t b = b0; b < b1; ++b) {
    const float* base = qkv + b * l * stride;
    for (std::int64_t j = 0; j < l; ++j) keep[j] = (pad && pad[b * l + j]) ? 0.0F : 1.0F;
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t qo = h * dh, ko = d + h * dh, vo = 2 * d + h * dh;
      for (std::int64_t j = 0; j < l; ++j)
        for (std::int64_t c = 0; c < dh; ++c) kt[c * l8 + j] = base[j * stride + ko + c];
      for (std::int64_t i = 0; i < l; ++i) {
        const float* q = base + i * stride + qo;
        for (std::int64_t j0 = 0; j0 < l8; j0 += 8) {
          v8sf acc{};
          for (std::int64_t c = 0; c < dh; ++c) acc += (q[c] * scale) * load8(kt + c * l8 + j0);
          store8(s + j0, acc);
        }
        float mx = -std::numeric_limits<float>::infinity();
        for (std::int64_t j = 0; j < l; ++j)
          if (keep[j] > 0.0F) mx = std::max(mx, s[j]);
        for (std::int64_t j0 = 0; j0 < l8; j0 += 8)
          store8(s + j0, exp_nonpositive(load8(s + j0) - mx) * load8(keep + j0));
        float sum = 0;
        for (std::int64_t j = 0; j < l; ++j) sum += s[j];
        const float inv = 1.0F / sum;
        float* o = out + (b * l + i) * d + qo;
        if (dh == 8 || dh == 16) {
          v8sf a0{}, a1{};
          for (std::int64_t j = 0; j < l; ++j) {
            const float p = s[j] * inv;
            const float* v = base + j * stride + vo;
            a0 += p * load8(v);
            if (dh == 16) a1 += p * load8(v + 8);
          }
          store8(o, a0);
          if (dh == 16) store8(o + 8, a1);
        } else {
          for (std::int64_t c = 0; c < dh; ++c) o[c] = 0.0F;
          for (std::int64_t j = 0; j < l; ++j) {
            const float p = s[j] * inv;
            const float* v = base + j * stride + vo;
            for (std::int64_t c = 0; c < dh; ++c) o[c] += p * v[c];
          }
        }
      }
    }
  }
}

void attention(const float* qkv, const bool* pad, float* out, std::int64_t n, std::int64_t l, std::int64_t d,
               std::int64_t heads) {
  const std::int64_t dh = d / heads;
  const std::int64_t l8 = (l + 7) / 8 * 8;
  const std::int64_t grain = std::max<std::int64_t>(1, 8192 / std::max<std::int64_t>(1, l * l * d));
  const auto rows = [&](std::int64_t b0, std::int64_t b1) {
    std::vector<float> scratch(static_cast<std::size_t>(dh * l8 + 2 * l8));
    attention_rows(qkv, pad, out, b0, b1, l, d, heads, scratch.data());
  };
  // A few sequences (one candidate, a group's context) stay on this thread: waking passive
  // OpenMP threads costs more than they would save.
  if (n <= 4 * grain) rows(0, n);
  else at::parallel_for(0, n, grain, rows);
}

// One post-norm GELU encoder layer (TransformerEncoderLayerImpl::forward without dropout) on
// x: [n * l, d]. `qkv` may hold the layer's input projection of x already.
Tensor encoder_layer(torch::nn::TransformerEncoderLayerImpl& layer, const Tensor& x, Tensor qkv, std::int64_t n,
                     std::int64_t l, const bool* pad) {
  const auto d = x.size(1);
  auto& sa = *layer.self_attn;
  if (!qkv.defined()) qkv = torch::linear(x, sa.in_proj_weight, sa.in_proj_bias);
  qkv = qkv.contiguous();
  Tensor att = torch::empty({n * l, d});
  attention(qkv.data_ptr<float>(), pad, att.data_ptr<float>(), n, l, d, sa.options.num_heads());
  Tensor y = torch::linear(att, sa.out_proj->weight, sa.out_proj->bias);
  y.add_(x);
  y = torch::layer_norm(y, {d}, layer.norm1->weight, layer.norm1->bias, layer.norm1->options.eps());
  Tensor f = torch::linear(torch::gelu(torch::linear(y, layer.linear1->weight, layer.linear1->bias)),
                           layer.linear2->weight, layer.linear2->bias);
  f.add_(y);
  return torch::layer_norm(f, {d}, layer.norm2->weight, layer.norm2->bias, layer.norm2->options.eps());
}

torch::nn::TransformerEncoderLayerImpl& layer_at(NetImpl& net, std::size_t i) {
  return *net.encoder->layers->ptr<torch::nn::TransformerEncoderLayerImpl>(i);
}

// The encoder on n sequences of l tokens: x [n * l, d] -> [n * l, d].
Tensor encode_rows(NetImpl& net, Tensor x, Tensor qkv0, std::int64_t n, std::int64_t l, const bool* pad) {
  const auto depth = net.encoder->layers->size();
  for (std::size_t i = 0; i < depth; ++i) x = encoder_layer(layer_at(net, i), x, i == 0 ? qkv0 : Tensor{}, n, l, pad);
  return x;
}

// Candidates of one context, tokenised into rows of a table of distinct tokens whose embeddings
// (and first-layer q/k/v) are computed once.
class PreparedGroup {
 public:
  PreparedGroup(NetImpl& net, const std::vector<const Candidate*>& cands, const TransformerOptions& opt,
                tr::CandidateEncoder& encoder)
      : m_net(net) {
    tr::TokenTable table;
    std::vector<tr::Token> toks;
    m_offsets.reserve(cands.size() + 1);
    m_offsets.push_back(0);
    for (const auto* c : cands) {
      encoder.encode(*c, toks);
      for (const auto& t : toks) m_ids.push_back(table.add(t));
      m_offsets.push_back(static_cast<std::int64_t>(m_ids.size()));
    }
    m_pad = table.add(tr::Token{});
    Tensor type, name, cat, num;
    tokens_to_tensors(table.tokens(), type, name, cat, num);
    m_x = net.embed(type, name, cat, num);  // [U, d]
    const auto ctx = tr::context_tokens(*cands.front(), opt.source_tokens, opt.max_source_tokens);
    if (!ctx.empty()) {
      tokens_to_tensors(ctx, type, name, cat, num);
      const auto lc = static_cast<std::int64_t>(ctx.size());
      const Tensor y = encode_rows(net, net.embed(type, name, cat, num), {}, 1, lc, nullptr);
      const Tensor summary = net.ctx_proj(y.mean(0, true));  // [1, d]
      m_summary = m_x.size(0);
      m_x = torch::cat({m_x, summary}, 0);
    }
    auto& sa = *layer_at(net, 0).self_attn;
    m_qkv = torch::linear(m_x, sa.in_proj_weight, sa.in_proj_bias);
  }

  [[nodiscard]] std::int64_t length(std::size_t i) const { return m_offsets[i + 1] - m_offsets[i]; }

  // [CLS] outputs [rows, d] of candidates `rows`, their own tokens padded to `lp`.
  Tensor cls(std::span<const std::size_t> rows, std::int64_t lp) const {
    const auto n = static_cast<std::int64_t>(rows.size());
    const std::int64_t l = lp + (m_summary >= 0 ? 1 : 0);
    Tensor idx = torch::empty({n * l}, torch::kLong);
    auto* ix = idx.data_ptr<std::int64_t>();
    std::unique_ptr<bool[]> pad;  // [n, l], true = padding
    bool padded = false;
    for (std::int64_t r = 0; r < n; ++r) {
      const auto c = rows[static_cast<std::size_t>(r)];
      const auto len = length(c);
      padded = padded || len < lp;
      std::copy(m_ids.begin() + m_offsets[c], m_ids.begin() + m_offsets[c + 1], ix + r * l);
      std::fill(ix + r * l + len, ix + r * l + lp, m_pad);
      if (m_summary >= 0) ix[r * l + lp] = m_summary;
    }
    if (padded) {
      pad = std::make_unique<bool[]>(static_cast<std::size_t>(n * l));  // value-initialised: false
      for (std::int64_t r = 0; r < n; ++r)
        for (std::int64_t j = length(rows[static_cast<std::size_t>(r)]); j < lp; ++j) pad[static_cast<std::size_t>(r * l + j)] = true;
    }
    const Tensor x = m_x.index_select(0, idx);
    const Tensor qkv = m_qkv.index_select(0, idx);
    const Tensor y = encode_rows(m_net, x, qkv, n, l, pad.get())
                         .view({n, l, x.size(1)});
    return m_net.final_norm(y.select(1, 0) + y.mean(1));
  }

 private:
  NetImpl& m_net;
  std::vector<std::int64_t> m_ids, m_offsets;
  std::int64_t m_pad = 0, m_summary = -1;
  Tensor m_x, m_qkv;  // [U (+ summary), d], [U (+ summary), 3d]
};

// Groups candidate indices by context key, keeping first-seen order.
template <class Get>
std::vector<std::vector<std::size_t>> group_by_context(std::size_t n, Get get, bool source_tokens) {
  std::unordered_map<std::string, std::size_t> where;
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < n; ++i) {
    auto key = tr::context_key(get(i), source_tokens);
    auto [it, fresh] = where.try_emplace(std::move(key), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

struct Normaliser {
  double mu = 0;
  double sigma = 1;
};

struct TrainGroup {
  Block block;
  Normaliser norm;
  Tensor z;   // [N] normalised log time (0 for failed)
  Tensor ok;  // [N] 1 ok, 0 failed
  std::vector<std::int64_t> train, val;
  std::vector<std::int64_t> ok_rows;  // rows with ok status (for pairs)
};

// Loss terms for rows `idx` of a group (mean over the batch).
struct Losses {
  Tensor quantile, rank, fail, bin;
};

Tensor pinball(const Tensor& q, const Tensor& z) {
  static const Tensor taus = torch::tensor({0.05F, 0.5F, 0.95F});
  const Tensor e = z.unsqueeze(1) - q;
  return torch::max(taus * e, (taus - 1.0F) * e).sum(1).mean();
}

Tensor pairwise_logistic(const Tensor& s, const Tensor& z) {
  const Tensor dz = z.unsqueeze(0) - z.unsqueeze(1);  // [i, j] = z_j - z_i
  const Tensor ds = s.unsqueeze(0) - s.unsqueeze(1);
  const Tensor w = (dz.abs() > 1e-3).to(torch::kFloat);
  return (torch::nn::functional::softplus(-torch::sign(dz) * ds) * w).sum() / w.sum().clamp_min(1.0);
}

Tensor bin_targets(const Tensor& log2_speedup) {
  return (torch::floor(2.0 * log2_speedup) + 4.0).clamp(1.0, 8.0).to(torch::kLong) - 1;
}

Losses compute_losses(NetImpl& net, const TrainGroup& g, const Tensor& idx, bool with_bins) {
  Losses l;
  const Tensor h = g.block.cls(net, idx);
  const Tensor ok = g.ok.index_select(0, idx);
  l.fail = torch::nn::functional::binary_cross_entropy_with_logits(net.fail_logit(h), 1.0F - ok);
  const Tensor okmask = ok > 0.5F;
  const auto n_ok = okmask.sum().item<std::int64_t>();
  if (n_ok == 0) {
    l.quantile = l.rank = l.bin = torch::zeros({});
    return l;
  }
  const Tensor hk = h.index({okmask});
  const Tensor zk = g.z.index_select(0, idx).index({okmask});
  const Tensor q = net.quantiles(hk);
  l.quantile = pinball(q, zk);
  const Tensor s = q.select(1, 1);
  l.rank = n_ok >= 2 ? pairwise_logistic(s, zk) : torch::zeros({});
  if (with_bins && n_ok >= 2) {
    const Tensor perm = torch::randperm(n_ok, torch::kLong);
    const double scale = g.norm.sigma / ln2;
    const Tensor target = bin_targets((zk - zk.index_select(0, perm)) * scale);
    const Tensor dq = (s - s.index_select(0, perm)) * scale;
    l.bin = torch::nn::functional::cross_entropy(net.bin_logits(hk, hk.index_select(0, perm), dq), target);
  } else {
    l.bin = torch::zeros({});
  }
  return l;
}

Tensor as_index(const std::vector<std::int64_t>& v) {
  return torch::from_blob(const_cast<std::int64_t*>(v.data()), {static_cast<std::int64_t>(v.size())}, torch::kLong)
      .clone();
}

// torch::optim::AdamW's update (amsgrad off, betas 0.9 / 0.999, eps 1e-8) fused with
// clip_grad_norm_ into one pass over each parameter, instead of ~12 tensor operations per
// parameter (the dense gradients of the 4096-row name embeddings make those passes the bulk of
// a small model's step). Same arithmetic in float up to rounding. A parameter that once had a
// gradient keeps being updated with a zero gradient when a step gives it none, as with
// Optimizer::zero_grad(), which zeroes gradients rather than dropping them.
class FusedAdamW {
 public:
  FusedAdamW(std::vector<Tensor> params, double lr, double weight_decay)
      : m_params(std::move(params)), m_state(m_params.size()), m_lr(lr), m_wd(weight_decay) {}

  void set_lr(double lr) { m_lr = lr; }

  // Drops gradients (backward then writes fresh ones instead of adding to zeros).
  void zero_grad() {
    for (auto& p : m_params) p.mutable_grad() = Tensor{};
  }

  // Clips the gradients' total 2-norm to `max_norm`, then takes one AdamW step.
  void step(double max_norm) {
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
      update(p.data_ptr<float>(), gz.data_ptr<float>(), st.m.data_ptr<float>(),
             st.v.data_ptr<float>(), p.numel(), coef, static_cast<float>(1 - m_lr * m_wd), static_cast<float>(beta1),
             static_cast<float>(1 - beta1), static_cast<float>(beta2), static_cast<float>(1 - beta2),
             static_cast<float>(std::sqrt(bc2)), static_cast<float>(eps), static_cast<float>(m_lr / bc1));
    }
  }

 private:
  struct State {
    Tensor m, v;
    std::int64_t step = 0;
  };

  // Sum of squares in 8 float lanes (vectorises), added up in double.
  __attribute__((target_clones("avx2", "default"))) static double squared_norm(const float* __restrict g,
                                                                               std::int64_t n) {
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
  __attribute__((target_clones("avx2", "default"))) static void update(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v,
                     std::int64_t n, float coef, float decay, float b1, float one_b1, float b2, float one_b2,
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

  std::vector<Tensor> m_params;
  std::vector<State> m_state;
  double m_lr, m_wd;
};

int resolved_threads(int t) {
  if (t > 0) return t;
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

template <class F>
void visit_options(TransformerOptions& o, F&& f) {
  f(o.width), f(o.depth), f(o.heads), f(o.ffn_multiplier), f(o.dropout), f(o.epochs), f(o.min_steps),
      f(o.max_steps), f(o.lr), f(o.weight_decay), f(o.warmup_fraction), f(o.batch_size), f(o.validation_fraction),
      f(o.patience), f(o.seed), f(o.threads), f(o.quantile_weight), f(o.rank_weight), f(o.fail_weight),
      f(o.bin_weight), f(o.source_tokens), f(o.max_source_tokens), f(o.inference_batch), f(o.update_steps),
      f(o.update_lr), f(o.update_buffer);
}

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

}  // namespace

// ---------------------------------------------------------------------------------------------

struct TransformerSurrogate::Impl {
  explicit Impl(TransformerOptions o) : opt(o) {
    check_options(opt);
    torch::set_num_threads(resolved_threads(opt.threads));
  }
  Impl(const Impl& o)
      : opt(o.opt), norms(o.norms), kp_norms(o.kp_norms), global(o.global), reference(o.reference),
        buffer(o.buffer), report(o.report), updates(o.updates) {
    if (o.net) {
      net = Net(std::dynamic_pointer_cast<NetImpl>(o.net->clone()));
      net->eval();
    }
  }

  TransformerOptions opt;
  Net net{nullptr};
  std::map<std::string, Normaliser> norms;     // normaliser_key -> stats
  std::map<std::string, Normaliser> kp_norms;  // kernel_problem_key -> mean of its groups
  Normaliser global;
  std::optional<Candidate> reference;
  std::deque<Observation> buffer;
  TransformerTrainReport report;
  std::uint64_t updates = 0;

  [[nodiscard]] Normaliser normaliser(const Candidate& c) const {
    if (auto it = norms.find(tr::normaliser_key(c)); it != norms.end()) return it->second;
    if (auto it = kp_norms.find(tr::kernel_problem_key(c)); it != kp_norms.end()) return it->second;
    return global;
  }

  void rebuild_fallbacks() {
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

  // Adds normalisers for groups of `obs` not known yet (all groups when `replace`).
  void fit_normalisers(std::span<const Observation> obs, bool replace) {
    if (replace) norms.clear();
    std::map<std::string, std::vector<double>> logs;
    for (const auto& o : obs)
      if (o.measurement.ok() && o.measurement.median_ms > 0)
        logs[tr::normaliser_key(o.candidate)].push_back(std::log(o.measurement.median_ms));
    std::map<std::string, std::vector<double>> small;
    for (auto& [key, v] : logs) {
      if (norms.count(key)) continue;
      double m = 0;
      for (double x : v) m += x;
      m /= static_cast<double>(v.size());
      double var = 0;
      for (double x : v) var += (x - m) * (x - m);
      const double sd = v.size() > 1 ? std::sqrt(var / static_cast<double>(v.size() - 1)) : 0.0;
      if (v.size() >= 10) {
        norms[key] = Normaliser{m, std::max(sd, 0.05)};
      } else {
        small[key] = {m, static_cast<double>(v.size())};
      }
    }
    rebuild_fallbacks();
    // Few points: their own location (>= 3 points), the pooled scale of the kernel's groups.
    for (auto& [key, mv] : small) {
      const auto kp = key.substr(0, key.rfind('|'));
      Normaliser pooled = kp_norms.count(kp) ? kp_norms[kp] : (norms.empty() ? Normaliser{mv[0], 1.0} : global);
      if (mv[1] >= 3) pooled.mu = mv[0];
      norms[key] = pooled;
    }
    rebuild_fallbacks();
  }

  std::vector<TrainGroup> make_groups(std::span<const Observation> obs, double val_fraction, std::mt19937_64& rng) {
    auto idx = group_by_context(obs.size(), [&](std::size_t i) -> const Candidate& { return obs[i].candidate; },
                                opt.source_tokens);
    std::vector<TrainGroup> out;
    tr::CandidateEncoder enc;
    for (auto& rows : idx) {
      std::vector<const Candidate*> cands;
      for (auto r : rows) cands.push_back(&obs[r].candidate);
      TrainGroup g;
      g.block = encode_block(cands, opt, enc);
      g.norm = normaliser(*cands.front());
      const auto n = static_cast<std::int64_t>(rows.size());
      g.z = torch::zeros({n});
      g.ok = torch::zeros({n});
      auto* z = g.z.data_ptr<float>();
      auto* ok = g.ok.data_ptr<float>();
      for (std::int64_t i = 0; i < n; ++i) {
        const auto& m = obs[rows[static_cast<std::size_t>(i)]].measurement;
        if (m.ok() && m.median_ms > 0 && std::isfinite(m.median_ms)) {
          ok[i] = 1;
          z[i] = static_cast<float>((std::log(m.median_ms) - g.norm.mu) / g.norm.sigma);
          g.ok_rows.push_back(i);
        }
      }
      std::vector<std::int64_t> all(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
      std::shuffle(all.begin(), all.end(), rng);
      // Early stopping on a handful of points is noise that also costs training data: small
      // groups train on everything for the fixed schedule.
      const auto n_val = (val_fraction > 0 && n >= 200) ? static_cast<std::size_t>(val_fraction * static_cast<double>(n)) : 0;
      g.val.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n_val));
      g.train.assign(all.begin() + static_cast<std::ptrdiff_t>(n_val), all.end());
      out.push_back(std::move(g));
    }
    return out;
  }

  // The optimisation loop shared by fit, fine_tune and update.
  TransformerTrainReport train(std::vector<TrainGroup>& groups, int steps, double lr, bool schedule, std::mt19937_64& rng) {
    const auto t0 = std::chrono::steady_clock::now();
    TransformerTrainReport rep;
    std::vector<double> weights;
    bool any_val = false;
    for (const auto& g : groups) {
      weights.push_back(static_cast<double>(g.train.size()));
      any_val = any_val || !g.val.empty();
    }
    std::discrete_distribution<std::size_t> pick(weights.begin(), weights.end());
    // torch::optim::AdamW and clip_grad_norm_ on the module path (the reference), else fused.
    const bool reference = module_path();
    torch::optim::AdamW optim(net->parameters(), torch::optim::AdamWOptions(lr).weight_decay(opt.weight_decay));
    FusedAdamW fused(net->parameters(), lr, opt.weight_decay);
    const int warm = schedule ? std::max(1, static_cast<int>(opt.warmup_fraction * steps)) : 0;
    const int check_every = std::max(10, steps / 40);
    double best = std::numeric_limits<double>::infinity();
    std::vector<Tensor> best_state;
    int since_best = 0;
    static const bool trace = std::getenv("GPUFORECAST_TRANSFORMER_TRACE") != nullptr;  // diagnostics
    net->train();
    for (int step = 0; step < steps; ++step) {
      double lr_now = lr;
      if (schedule) {
        lr_now = step < warm ? lr * (step + 1) / warm
                             : 0.5 * lr * (1.0 + std::cos(std::numbers::pi * (step - warm) / std::max(1, steps - warm)));
      }
      for (auto& pg : optim.param_groups()) static_cast<torch::optim::AdamWOptions&>(pg.options()).lr(lr_now);
      fused.set_lr(lr_now);
      auto& g = groups[pick(rng)];
      auto& rows = g.train;
      const auto bs = std::min(rows.size(), static_cast<std::size_t>(opt.batch_size));
      for (std::size_t i = 0; i < bs; ++i) {
        std::uniform_int_distribution<std::size_t> u(i, rows.size() - 1);
        std::swap(rows[i], rows[u(rng)]);
      }
      const Tensor idx = as_index(std::vector<std::int64_t>(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(bs)));
      const Losses l = compute_losses(*net, g, idx, opt.bin_weight > 0);
      const Tensor loss = opt.quantile_weight * l.quantile + opt.rank_weight * l.rank + opt.fail_weight * l.fail +
                          opt.bin_weight * l.bin;
      if (reference) {
        optim.zero_grad();
        loss.backward();
        torch::nn::utils::clip_grad_norm_(net->parameters(), 1.0);
        optim.step();
      } else {
        fused.zero_grad();
        loss.backward();
        fused.step(1.0);
      }
      rep.steps = step + 1;
      if (any_val && ((step + 1) % check_every == 0 || step + 1 == steps)) {
        const double v = validation_loss(groups);
        if (trace) std::fprintf(stderr, "step %d lr %.2e train %.4f val %.4f\n", step + 1, lr_now, loss.item<double>(), v);
        net->train();
        if (v < best) {
          best = v;
          rep.best_step = step + 1;
          since_best = 0;
          best_state.clear();
          for (const auto& p : net->parameters()) best_state.push_back(p.detach().clone());
        } else if (++since_best >= opt.patience) {
          rep.stopped_early = true;
          break;
        }
      }
    }
    if (!best_state.empty()) {
      torch::NoGradGuard ng;
      auto params = net->parameters();
      for (std::size_t i = 0; i < params.size(); ++i) params[i].copy_(best_state[i]);
    }
    net->eval();
    rep.best_validation_loss = any_val ? best : 0.0;
    if (!any_val) rep.best_step = rep.steps;
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return rep;
  }

  double validation_loss(std::vector<TrainGroup>& groups) {
    torch::NoGradGuard ng;
    net->eval();
    double total = 0, count = 0;
    for (auto& g : groups) {
      if (g.val.empty()) continue;
      const Losses l = compute_losses(*net, g, as_index(g.val), false);
      const double n = static_cast<double>(g.val.size());
      total += n * (opt.quantile_weight * l.quantile.item<double>() + opt.rank_weight * l.rank.item<double>());
      count += n;
    }
    return count > 0 ? total / count : 0.0;
  }

  void fit(std::span<const Observation> obs) {
    bool any_ok = std::any_of(obs.begin(), obs.end(), [](const Observation& o) { return o.measurement.ok(); });
    if (!any_ok) throw invalid_argument_error("TransformerSurrogate::fit: no observation with status ok");
    torch::set_num_threads(resolved_threads(opt.threads));
    torch::manual_seed(opt.seed);
    std::mt19937_64 rng(opt.seed);
    fit_normalisers(obs, true);
    net = Net(opt);
    auto groups = make_groups(obs, opt.validation_fraction, rng);
    std::size_t n_train = 0;
    for (const auto& g : groups) n_train += g.train.size();
    const auto per_epoch = static_cast<int>((n_train + static_cast<std::size_t>(opt.batch_size) - 1) /
                                            static_cast<std::size_t>(opt.batch_size));
    const int steps = std::clamp(opt.epochs * per_epoch, opt.min_steps, std::max(opt.min_steps, opt.max_steps));
    report = train(groups, steps, opt.lr, true, rng);
    buffer.clear();
  }

  void fine_tune(std::span<const Observation> obs, int steps) {
    if (!net) throw invalid_argument_error("TransformerSurrogate::fine_tune: the model is not trained (call fit)");
    if (obs.empty() || steps <= 0) return;
    fit_normalisers(obs, false);
    std::mt19937_64 rng(opt.seed + 0x9e3779b97f4a7c15ULL * (++updates));
    torch::manual_seed(opt.seed + updates);
    auto groups = make_groups(obs, 0.0, rng);
    report = train(groups, steps, opt.update_lr, false, rng);
  }

  void update(std::span<const Observation> obs) {
    for (const auto& o : obs) buffer.push_back(o);
    while (buffer.size() > static_cast<std::size_t>(std::max(1, opt.update_buffer))) buffer.pop_front();
    std::vector<Observation> all(buffer.begin(), buffer.end());
    if (!net) {
      fit(all);
      buffer.assign(all.begin(), all.end());
      return;
    }
    fine_tune(all, opt.update_steps);
  }

  // [CLS] outputs of the candidates `rows` of one context, in chunks: f(first, h) with h the
  // outputs of rows[first, first + h.size(0)). Batches of `inference_batch` are padded to their
  // longest candidate (as the module path does); the fast path runs them in sub-batches of at
  // most `fast_chunk` rows, which only bounds memory (same results).
  template <class F>
  void forward_rows(std::span<const Candidate> cands, const std::vector<std::size_t>& rows, tr::CandidateEncoder& enc,
                    F&& f) {
    const auto batch = static_cast<std::size_t>(opt.inference_batch);
    if (module_path()) {
      for (std::size_t start = 0; start < rows.size(); start += batch) {
        const auto end = std::min(rows.size(), start + batch);
        std::vector<const Candidate*> chunk;
        for (auto i = start; i < end; ++i) chunk.push_back(&cands[rows[i]]);
        f(start, encode_block(chunk, opt, enc).cls(*net, {}));
      }
      return;
    }
    std::vector<const Candidate*> all;
    all.reserve(rows.size());
    for (auto r : rows) all.push_back(&cands[r]);
    const PreparedGroup group(*net, all, opt, enc);
    std::vector<std::size_t> local(rows.size());
    std::iota(local.begin(), local.end(), std::size_t{0});
    constexpr std::size_t fast_chunk = 512;  // 256-512 measured best (cache-sized activations)
    for (std::size_t start = 0; start < rows.size(); start += batch) {
      const auto end = std::min(rows.size(), start + batch);
      std::int64_t lp = 0;
      for (auto i = start; i < end; ++i) lp = std::max(lp, group.length(i));
      for (auto s = start; s < end; s += fast_chunk) {
        const auto e = std::min(end, s + fast_chunk);
        f(s, group.cls(std::span<const std::size_t>(local).subspan(s, e - s), lp));
      }
    }
  }

  std::vector<Forecast> predict(std::span<const Candidate> cands) {
    if (!net) throw invalid_argument_error("TransformerSurrogate::predict: the model is not trained (call fit)");
    std::vector<Forecast> out(cands.size());
    if (cands.empty()) return out;
    c10::InferenceMode guard;
    tr::CandidateEncoder enc;
    Tensor href;
    double ref_log = 0;
    if (reference) {
      forward_rows(std::span<const Candidate>(&*reference, 1), {0}, enc, [&](std::size_t, const Tensor& h) {
        href = h;
        const auto rn = normaliser(*reference);
        ref_log = rn.mu + rn.sigma * net->quantiles(h)[0][1].item<double>();
      });
    }
    const auto groups = group_by_context(cands.size(), [&](std::size_t i) -> const Candidate& { return cands[i]; },
                                         opt.source_tokens);
    for (const auto& rows : groups) {
      const Normaliser nm = normaliser(cands[rows.front()]);
      forward_rows(cands, rows, enc, [&](std::size_t start, const Tensor& h) {
        const auto n = h.size(0);
        const Tensor q = net->quantiles(h).contiguous();
        const Tensor pf = torch::sigmoid(net->fail_logit(h)).contiguous();
        const auto* qa = q.data_ptr<float>();
        const auto* fa = pf.data_ptr<float>();
        Tensor bins;
        if (href.defined()) {
          const Tensor logt = nm.mu + nm.sigma * q.select(1, 1).to(torch::kDouble);
          const Tensor dq = ((ref_log - logt) / ln2).to(torch::kFloat);
          bins = torch::softmax(net->bin_logits(href.expand({n, href.size(1)}), h, dq), 1).contiguous();
        }
        for (std::int64_t k = 0; k < n; ++k) {
          auto& f = out[rows[start + static_cast<std::size_t>(k)]];
          const double lo = qa[3 * k], mid = qa[3 * k + 1], hi = qa[3 * k + 2];
          f.median_ms = std::exp(nm.mu + nm.sigma * mid);
          f.lower_ms = std::exp(nm.mu + nm.sigma * lo);
          f.upper_ms = std::exp(nm.mu + nm.sigma * hi);
          f.p_fail = fa[k];
          f.spread = nm.sigma * (hi - lo) / 3.29;  // a normal's 5-95% width is 3.29 std
          if (bins.defined()) {
            std::array<double, speedup_bin_count> p{};
            const auto* ba = bins.data_ptr<float>() + k * speedup_bin_count;
            for (int j = 0; j < speedup_bin_count; ++j) p[static_cast<std::size_t>(j)] = ba[j];
            f.bin_probabilities = p;
          }
        }
      });
    }
    return out;
  }

  // CLS embeddings and predicted log times for a list of candidates, in order.
  std::pair<Tensor, std::vector<double>> embed_all(std::span<const Candidate> cands) {
    const auto d = static_cast<std::int64_t>(opt.width);
    Tensor h = torch::zeros({static_cast<std::int64_t>(cands.size()), d});
    std::vector<double> logt(cands.size());
    tr::CandidateEncoder enc;
    const auto groups = group_by_context(cands.size(), [&](std::size_t i) -> const Candidate& { return cands[i]; },
                                         opt.source_tokens);
    for (const auto& rows : groups) {
      const Normaliser nm = normaliser(cands[rows.front()]);
      forward_rows(cands, rows, enc, [&](std::size_t start, const Tensor& hc) {
        const auto n = hc.size(0);
        std::vector<std::int64_t> where(static_cast<std::size_t>(n));
        for (std::int64_t k = 0; k < n; ++k)
          where[static_cast<std::size_t>(k)] = static_cast<std::int64_t>(rows[start + static_cast<std::size_t>(k)]);
        h.index_copy_(0, as_index(where), hc);
        const Tensor q = net->quantiles(hc).contiguous();
        const auto* qa = q.data_ptr<float>();
        for (std::int64_t k = 0; k < n; ++k)
          logt[static_cast<std::size_t>(where[static_cast<std::size_t>(k)])] = nm.mu + nm.sigma * qa[3 * k + 1];
      });
    }
    return {h, logt};
  }

  std::vector<std::array<double, 8>> predict_bins(std::span<const Candidate> refs, std::span<const Candidate> cands) {
    if (!net) throw invalid_argument_error("TransformerSurrogate::predict_bins: the model is not trained (call fit)");
    if (refs.size() != 1 && refs.size() != cands.size())
      throw invalid_argument_error("TransformerSurrogate::predict_bins: need one reference or one per candidate (got " +
                                   std::to_string(refs.size()) + " for " + std::to_string(cands.size()) + ")");
    std::vector<std::array<double, 8>> out(cands.size());
    if (cands.empty()) return out;
    c10::InferenceMode guard;
    auto [hr, lr] = embed_all(refs);
    auto [hc, lc] = embed_all(cands);
    const auto n = static_cast<std::int64_t>(cands.size());
    Tensor dq = torch::empty({n});
    for (std::int64_t i = 0; i < n; ++i)
      dq[i] = static_cast<float>((lr[refs.size() == 1 ? 0 : static_cast<std::size_t>(i)] - lc[static_cast<std::size_t>(i)]) / ln2);
    if (refs.size() == 1) hr = hr.expand({n, hr.size(1)});
    const Tensor p = torch::softmax(net->bin_logits(hr, hc, dq), 1).contiguous();
    const auto* pa = p.data_ptr<float>();
    for (std::int64_t i = 0; i < n; ++i)
      for (int j = 0; j < 8; ++j) out[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = pa[i * 8 + j];
    return out;
  }

  TransformerRlReport reinforce(std::span<const Observation> obs, const TransformerRlOptions& ro) {
    if (!net) throw invalid_argument_error("TransformerSurrogate::reinforce: the model is not trained (call fit)");
    if (ro.group_size < 2 || ro.pairs_per_step < 1 || !(ro.noise > 0))
      throw invalid_argument_error("TransformerRlOptions: group_size >= 2, pairs_per_step >= 1, noise > 0");
    const auto t0 = std::chrono::steady_clock::now();
    TransformerRlReport rep;
    torch::manual_seed(ro.seed);
    std::mt19937_64 rng(ro.seed);
    // The encoder is frozen: embeddings and runtime forecasts are computed once, the policy is
    // the bin head alone (the study fine-tunes the answer distribution, not the perception).
    struct Items {
      Tensor h;
      std::vector<double> logt_pred, logt_true;
    };
    std::map<std::string, std::vector<std::size_t>> by_group;
    for (std::size_t i = 0; i < obs.size(); ++i)
      if (obs[i].measurement.ok() && obs[i].measurement.median_ms > 0)
        by_group[tr::normaliser_key(obs[i].candidate)].push_back(i);
    std::vector<Items> items;
    std::vector<double> weights;
    {
      c10::InferenceMode guard;
      for (auto& [key, rows] : by_group) {
        if (rows.size() < 2) continue;
        std::vector<Candidate> cands;
        Items it;
        for (auto r : rows) {
          cands.push_back(obs[r].candidate);
          it.logt_true.push_back(std::log(obs[r].measurement.median_ms));
        }
        auto [h, lp] = embed_all(cands);
        it.h = h.clone();
        it.logt_pred = std::move(lp);
        weights.push_back(static_cast<double>(rows.size()));
        items.push_back(std::move(it));
      }
    }
    if (items.empty()) throw invalid_argument_error("TransformerSurrogate::reinforce: needs >= 2 ok observations of one group");
    // Plain tensors from here on (created outside inference mode so autograd may use them).
    for (auto& it : items) it.h = it.h.clone();
    std::discrete_distribution<std::size_t> pick(weights.begin(), weights.end());
    auto reference_head = std::dynamic_pointer_cast<torch::nn::SequentialImpl>(net->bin_head->clone());
    torch::optim::AdamW optim(net->bin_head->parameters(), torch::optim::AdamWOptions(ro.lr).weight_decay(0.0));
    const auto P = static_cast<std::int64_t>(ro.pairs_per_step);
    const auto G = static_cast<std::int64_t>(ro.group_size);
    const Tensor bins_idx = torch::arange(speedup_bin_count, torch::kLong);
    for (int step = 0; step < ro.steps; ++step) {
      std::vector<Tensor> hr, hc;
      Tensor dq = torch::empty({P});
      Tensor y = torch::empty({P}, torch::kLong);
      for (std::int64_t p = 0; p < P; ++p) {
        const auto& it = items[pick(rng)];
        std::uniform_int_distribution<std::size_t> u(0, it.logt_true.size() - 1);
        const auto a = u(rng);
        auto b = u(rng);
        while (b == a) b = u(rng);
        hr.push_back(it.h[static_cast<std::int64_t>(a)]);
        hc.push_back(it.h[static_cast<std::int64_t>(b)]);
        dq[p] = static_cast<float>((it.logt_pred[a] - it.logt_pred[b]) / ln2);
        y[p] = speedup_bin(std::exp(it.logt_true[a]), std::exp(it.logt_true[b])) - 1;
      }
      const Tensor href = torch::stack(hr), hcand = torch::stack(hc);
      const Tensor feats = torch::cat({href, hcand, href - hcand, dq.unsqueeze(1)}, 1);
      const Tensor logits = net->bin_head->forward(feats);  // [P, 8]
      // G answers per prompt: a stated distribution softmax(a) from a Gaussian policy around the
      // logits, and its mode as the answer bin.
      const Tensor a = logits.detach().unsqueeze(1) + ro.noise * torch::randn({P, G, speedup_bin_count});
      const Tensor q = torch::softmax(a, 2);
      const Tensor answer = a.argmax(2);
      const Tensor yy = y.unsqueeze(1);
      Tensor reward = (answer == yy).to(torch::kFloat);
      const Tensor onehot = (bins_idx.view({1, 1, speedup_bin_count}) == yy.unsqueeze(2)).to(torch::kFloat);
      if (ro.reward == TransformerRlOptions::Reward::correctness_brier) {
        reward = reward + 1.0F - 0.5F * (q - onehot).pow(2).sum(2);
      } else if (ro.reward == TransformerRlOptions::Reward::correctness_crps) {
        const Tensor fq = q.cumsum(2).narrow(2, 0, speedup_bin_count - 1);
        const Tensor fy = onehot.cumsum(2).narrow(2, 0, speedup_bin_count - 1);
        reward = reward + 1.0F - (fq - fy).pow(2).sum(2) / static_cast<float>(speedup_bin_count - 1);
      }
      const Tensor adv = (reward - reward.mean(1, true)) / (reward.std(1, true, true) + 1e-4F);
      const Tensor logp = -(a - logits.unsqueeze(1)).pow(2).sum(2) / (2.0 * ro.noise * ro.noise);
      Tensor loss = -(adv * logp).mean();
      if (ro.kl_weight > 0) {
        Tensor ref_logp;
        {
          torch::NoGradGuard ng;
          ref_logp = torch::log_softmax(reference_head->forward(feats), 1);
        }
        const Tensor lp = torch::log_softmax(logits, 1);
        loss = loss + ro.kl_weight * (lp.exp() * (lp - ref_logp)).sum(1).mean();
      }
      optim.zero_grad();
      loss.backward();
      torch::nn::utils::clip_grad_norm_(net->bin_head->parameters(), 1.0);
      optim.step();
      rep.mean_reward.push_back(reward.mean().item<double>());
    }
    net->eval();
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return rep;
  }

  void save(ArchiveWriter& w) const {
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

  static std::unique_ptr<Impl> load(ArchiveReader& r) {
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
};

// ---------------------------------------------------------------------------------------------

namespace detail::transformer {
void set_module_path(bool on) noexcept { g_module_path.store(on, std::memory_order_relaxed); }
}  // namespace detail::transformer

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
