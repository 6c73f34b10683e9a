#include "surrogate/transformer/encoding.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <numbers>
#include <string>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/space/expression.hpp"

namespace gpuforecast::detail::transformer {

std::uint64_t stable_hash(std::string_view s) noexcept {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  return h;
}

std::int64_t name_id(std::string_view s) noexcept {
  return 1 + static_cast<std::int64_t>(stable_hash(s) % static_cast<std::uint64_t>(name_vocab - 1));
}

std::int64_t category_id(std::string_view s) noexcept {
  return 1 + static_cast<std::int64_t>(stable_hash(s) % static_cast<std::uint64_t>(category_vocab - 1));
}

std::array<float, numeric_width> numeric_features(double v) noexcept {
  std::array<float, numeric_width> f{};
  if (!std::isfinite(v)) return f;  // all zero: "no number"
  const double a = std::abs(v);
  const double l = std::clamp(std::log2(std::max(a, 1e-6)), -20.0, 40.0);
  f[0] = 1.0F;
  f[1] = static_cast<float>(l / 10.0);
  f[2] = a < 1e-12 ? 1.0F : 0.0F;
  f[3] = v < 0 ? 1.0F : 0.0F;
  f[4] = static_cast<float>(v / (16.0 + a));
  f[5] = static_cast<float>(a / (1.0 + a));
  // Periods 1, 2, 4, 8, 16 octaves: period 1 flags non-powers of two, longer periods give a
  // smooth positional code of the magnitude.
  int k = 6;
  for (double period : {1.0, 2.0, 4.0, 8.0, 16.0}) {
    const double w = 2.0 * std::numbers::pi * l / period;
    f[static_cast<std::size_t>(k++)] = static_cast<float>(std::sin(w));
    f[static_cast<std::size_t>(k++)] = static_cast<float>(std::cos(w));
  }
  return f;
}

std::size_t TokenTable::Hash::operator()(const Token& t) const noexcept {
  std::array<std::uint64_t, sizeof(Token) / sizeof(std::uint64_t)> w{};
  std::memcpy(w.data(), &t, sizeof(Token));
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (auto x : w) {
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
  }
  return static_cast<std::size_t>(h ^ (h >> 33));
}

bool TokenTable::Equal::operator()(const Token& a, const Token& b) const noexcept {
  return std::memcmp(&a, &b, sizeof(Token)) == 0;
}

std::int64_t TokenTable::add(const Token& t) {
  auto [it, fresh] = m_rows.try_emplace(t, static_cast<std::int64_t>(m_tokens.size()));
  if (fresh) m_tokens.push_back(t);
  return it->second;
}

namespace {

std::string problem_string(const Candidate& c) {
  std::string s;
  for (auto p : c.problem_size) {
    s += std::to_string(p);
    s += 'x';
  }
  return s;
}

Token make_numeric(TokenType type, std::string_view name, double v) {
  Token t;
  t.type = type;
  t.name = name_id(name);
  t.numeric = numeric_features(v);
  return t;
}

Token make_category(TokenType type, std::string_view name, std::string_view value) {
  Token t;
  t.type = type;
  t.name = name_id(name);
  t.category = category_id(value);
  return t;
}

// Replaces ProblemSize[i] by its number so geometry expressions only use parameters.
std::string substitute_problem_size(std::string expr, const std::vector<std::int64_t>& problem) {
  for (std::size_t i = 0; i < problem.size(); ++i) {
    const std::string pat = "ProblemSize[" + std::to_string(i) + "]";
    for (auto pos = expr.find(pat); pos != std::string::npos; pos = expr.find(pat))
      expr.replace(pos, pat.size(), std::to_string(problem[i]));
  }
  return expr;
}

}  // namespace

std::string normaliser_key(const Candidate& c) {
  return c.kernel + "|" + problem_string(c) + "|" + (c.device ? c.device->name : std::string("?"));
}

std::string kernel_problem_key(const Candidate& c) { return c.kernel + "|" + problem_string(c); }

std::string context_key(const Candidate& c, bool source_tokens) {
  std::string k = normaliser_key(c);
  k += '|';
  for (const auto& n : c.config.names()) {
    k += n;
    k += ',';
  }
  k += '|';
  for (const auto& [n, v] : c.features) {
    k += n;
    k += ',';
  }
  if (c.spec) {
    // Geometry tokens exist only with a spec; the spec's identity matters for source tokens.
    k += "|spec:" + c.spec->benchmark_name + ":" + c.spec->kernel_name;
    if (source_tokens) k += ":" + std::to_string(stable_hash(c.spec->source));
  }
  return k;
}

std::vector<std::string> lex_cuda(std::string_view src, std::size_t max_tokens) {
  std::vector<std::string> out;
  std::size_t i = 0;
  const std::size_t n = src.size();
  auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  while (i < n && out.size() < max_tokens) {
    const char ch = src[i];
    if (std::isspace(static_cast<unsigned char>(ch)) || ch == '\\') {
      ++i;
    } else if (ch == '/' && i + 1 < n && src[i + 1] == '/') {
      while (i < n && src[i] != '\n') ++i;
    } else if (ch == '/' && i + 1 < n && src[i + 1] == '*') {
      const auto end = src.find("*/", i + 2);
      i = end == std::string_view::npos ? n : end + 2;
    } else if (ch == '"' || ch == '\'') {
      std::size_t j = i + 1;
      while (j < n && src[j] != ch) j += src[j] == '\\' ? 2 : 1;
      out.emplace_back(ch == '"' ? "<string>" : "<char>");
      i = std::min(n, j + 1);
    } else if (std::isdigit(static_cast<unsigned char>(ch)) ||
               (ch == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(src[i + 1])))) {
      std::size_t j = i;
      while (j < n && (ident(src[j]) || src[j] == '.')) ++j;
      out.emplace_back(src.substr(i, j - i));
      i = j;
    } else if (ident(ch) || ch == '#') {
      std::size_t j = i + 1;
      while (j < n && ident(src[j])) ++j;
      out.emplace_back(src.substr(i, j - i));
      i = j;
    } else {
      // Punctuation: two-character operators stay together (<<, +=, ->, ...).
      static constexpr std::string_view two[] = {"<<", ">>", "+=", "-=", "*=", "/=", "==", "!=", "<=",
                                                 ">=", "&&", "||", "++", "--", "->", "::"};
      std::size_t len = 1;
      if (i + 1 < n)
        for (auto t : two)
          if (src.substr(i, 2) == t) len = 2;
      out.emplace_back(src.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::vector<Token> context_tokens(const Candidate& c, bool source_tokens, int max_source_tokens) {
  std::vector<Token> out;
  if (c.device) {
    const auto values = c.device->numeric_features();
    const auto& names = Device::numeric_feature_names();
    for (std::size_t i = 0; i < values.size(); ++i)
      out.push_back(make_numeric(token_device, "device:" + (i < names.size() ? names[i] : std::to_string(i)), values[i]));
    out.push_back(make_category(token_device, "device:vendor", c.device->vendor));
    out.push_back(make_category(token_device, "device:architecture", c.device->architecture));
  }
  out.push_back(make_category(token_kernel, "kernel", c.kernel));
  for (std::size_t i = 0; i < c.problem_size.size(); ++i)
    out.push_back(make_numeric(token_problem, "problem:" + std::to_string(i), static_cast<double>(c.problem_size[i])));
  if (source_tokens && c.spec && !c.spec->source.empty()) {
    const auto lexemes = lex_cuda(c.spec->source, static_cast<std::size_t>(std::max(0, max_source_tokens)));
    for (std::size_t i = 0; i < lexemes.size(); ++i) {
      Token t = make_numeric(token_source, "source:" + lexemes[i], static_cast<double>(i + 1));
      out.push_back(t);
    }
  }
  return out;
}

struct CandidateEncoder::Geometry {
  bool valid = false;
  std::vector<std::string> names;  // parameter order the expressions were compiled for
  std::array<Expression, 3> local;
  std::array<Expression, 3> global;
  std::array<std::vector<Expression>, 3> div;
  bool cuda_global = true;
  double problem_elements = 1;
};

void CandidateEncoder::encode(const Candidate& c, std::vector<Token>& out) {
  out.clear();
  Token cls;
  cls.type = token_cls;
  out.push_back(cls);
  const auto& names = c.config.names();
  const auto& values = c.config.values();
  if (m_names_key != &names || m_name_ids.size() != names.size()) {
    m_names_key = &names;
    m_name_ids.clear();
    for (const auto& n : names) m_name_ids.push_back(name_id("param:" + n));
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    Token t;
    t.type = token_parameter;
    t.name = m_name_ids[i];
    if (values[i].is_number()) {
      const double v = values[i].as_double();
      auto it = m_numeric.find(v);
      if (it == m_numeric.end()) it = m_numeric.emplace(v, numeric_features(v)).first;
      t.numeric = it->second;
    } else {
      t.category = category_id(values[i].as_string());
    }
    out.push_back(t);
  }
  if (c.spec) {
    auto& g = m_geometry[c.spec.get()];
    if (!g || g->names != names) {
      g = std::make_shared<Geometry>();
      g->names = names;
      try {
        const auto& s = *c.spec;
        for (std::size_t d = 0; d < 3; ++d) {
          g->local[d] = Expression::compile(substitute_problem_size(s.local_size[d], c.problem_size), names);
          g->global[d] = Expression::compile(substitute_problem_size(s.global_size[d], c.problem_size), names);
          for (const auto& e : s.grid_div[d])
            g->div[d].push_back(Expression::compile(substitute_problem_size(e, c.problem_size), names));
        }
        g->cuda_global = s.global_size_type == "CUDA";
        for (auto p : c.problem_size) g->problem_elements *= static_cast<double>(std::max<std::int64_t>(p, 1));
        g->valid = true;
      } catch (const error&) {
        g->valid = false;  // geometry tokens are optional: a spec we cannot evaluate has none
      }
    }
    bool numeric = std::all_of(values.begin(), values.end(), [](const Value& v) { return v.is_number(); });
    if (g->valid && numeric) {
      std::vector<double> x(values.size());
      for (std::size_t i = 0; i < values.size(); ++i) x[i] = values[i].as_double();
      try {
        double threads = 1, blocks = 1;
        for (std::size_t d = 0; d < 3; ++d) {
          const double l = std::max(1.0, g->local[d].evaluate_number(x));
          const double gl = std::max(1.0, g->global[d].evaluate_number(x));
          double b = gl;
          if (!g->cuda_global) {
            double div = 1;
            for (const auto& e : g->div[d]) div *= std::max(1.0, e.evaluate_number(x));
            b = std::ceil(gl / (g->div[d].empty() ? l : div));
          }
          threads *= l;
          blocks *= std::max(1.0, b);
        }
        out.push_back(make_numeric(token_geometry, "geometry:threads_per_block", threads));
        out.push_back(make_numeric(token_geometry, "geometry:blocks", blocks));
        out.push_back(make_numeric(token_geometry, "geometry:work_per_thread", g->problem_elements / (threads * blocks)));
      } catch (const error&) {
        // Division by zero etc. for this config: no geometry tokens for it (padding handles it).
      }
    }
  }
  for (const auto& [n, v] : c.features) out.push_back(make_numeric(token_feature, "feature:" + n, v));
}

}  // namespace gpuforecast::detail::transformer
