#pragma once
// Candidate -> tokens, without libtorch (so it compiles fast and is unit-testable).
// Every token is (type, name id, category id, numeric features); the model embeds it as
// type_emb + name_emb + cat_emb + MLP(numeric). Names and string values are hashed.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuforecast/core/candidate.hpp"

namespace gpuforecast::detail::transformer {

enum TokenType : std::int64_t {
  token_pad = 0,
  token_cls,
  token_device,
  token_kernel,
  token_problem,
  token_parameter,
  token_geometry,
  token_feature,
  token_source,
  token_type_count
};

inline constexpr int numeric_width = 16;
inline constexpr std::int64_t name_vocab = 4096;
inline constexpr std::int64_t category_vocab = 1024;

struct Token {
  std::int64_t type = token_pad;
  std::int64_t name = 0;
  std::int64_t category = 0;
  std::array<float, numeric_width> numeric{};
};

static_assert(sizeof(Token) == 3 * sizeof(std::int64_t) + numeric_width * sizeof(float), "Token has no padding bytes");

// Distinct tokens of many sequences. Scoring a space repeats a handful of values per parameter,
// so inference embeds each distinct token (and its first-layer projections) once and gathers.
// Tokens are equal when their bytes are (so -0.0 and 0.0 differ: harmless, only less sharing).
class TokenTable {
 public:
  [[nodiscard]] std::int64_t add(const Token& t);  // row of t, appended when new
  [[nodiscard]] const std::vector<Token>& tokens() const noexcept { return m_tokens; }
  [[nodiscard]] std::size_t size() const noexcept { return m_tokens.size(); }

 private:
  struct Hash {
    std::size_t operator()(const Token& t) const noexcept;
  };
  struct Equal {
    bool operator()(const Token& a, const Token& b) const noexcept;
  };
  std::vector<Token> m_tokens;
  std::unordered_map<Token, std::int64_t, Hash, Equal> m_rows;
};

// FNV-1a, stable across platforms and runs (vocabularies are saved implicitly through it).
[[nodiscard]] std::uint64_t stable_hash(std::string_view s) noexcept;
[[nodiscard]] std::int64_t name_id(std::string_view s) noexcept;      // in [1, name_vocab)
[[nodiscard]] std::int64_t category_id(std::string_view s) noexcept;  // in [1, category_vocab)

// Numeric features of one number: presence, signed log2 magnitude, zero/negative flags, a
// squashed raw value, and sin/cos of log2|v| at several periods (so 16 and 32 differ smoothly
// while 24 sits between them, and non-powers of two are recognisable).
[[nodiscard]] std::array<float, numeric_width> numeric_features(double v) noexcept;

// Identity of the group whose log-times share a normaliser: kernel, problem size, device.
[[nodiscard]] std::string normaliser_key(const Candidate& c);
// normaliser_key without the device (fallback for unseen devices).
[[nodiscard]] std::string kernel_problem_key(const Candidate& c);
// Candidates with equal context keys share context tokens and the per-candidate token layout.
[[nodiscard]] std::string context_key(const Candidate& c, bool source_tokens);

// A tiny CUDA lexer: identifiers/keywords, numbers, and punctuation runs; comments and
// preprocessor line continuations skipped. Truncated to `max_tokens`.
[[nodiscard]] std::vector<std::string> lex_cuda(std::string_view source, std::size_t max_tokens);

// Shared by all candidates of one context: device numbers, kernel identity, problem size,
// optional source tokens.
[[nodiscard]] std::vector<Token> context_tokens(const Candidate& c, bool source_tokens, int max_source_tokens);

// Per-candidate tokens: [CLS] first, then parameters, launch geometry (from c.spec when its
// expressions evaluate), static compiler features. Compiled geometry is cached per spec.
class CandidateEncoder {
 public:
  void encode(const Candidate& c, std::vector<Token>& out);

 private:
  struct Geometry;
  std::map<const KernelSpec*, std::shared_ptr<Geometry>> m_geometry;
  // Scoring a space repeats the same names and values millions of times: hash and featurise once.
  const std::vector<std::string>* m_names_key = nullptr;
  std::vector<std::int64_t> m_name_ids;
  std::unordered_map<double, std::array<float, numeric_width>> m_numeric;
};

}  // namespace gpuforecast::detail::transformer
