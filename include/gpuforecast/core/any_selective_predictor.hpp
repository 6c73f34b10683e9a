#pragma once
// Any SelectivePredictor, chosen at run time, as a search uses it (a Model, a Model learning
// online, a language model, a type of your own): decide() plus two optional hooks found by
// requires-expressions (STYLE 5.5):
//   void update(std::span<const Observation>)  learn from the round's new measurements
//   bool ready() const                          false while it cannot forecast yet (an online
//                                               model that has seen too little); default true
// and, by name, the search-model kinds that are predictors of their own rather than a surrogate
// learned online: the LLM registers "llm"; users register theirs the same way.
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class AnySelectivePredictor {
 public:
  AnySelectivePredictor() = default;
  template <SelectivePredictor P>
  AnySelectivePredictor(P predictor) : m_self(std::make_shared<Holder<P>>(std::move(predictor))) {}  // NOLINT: implicit
  // Any other type stops here with a readable message (core/concepts.hpp). Explicit, so it
  // never takes part in implicit conversions.
  template <class P>
    requires(!SelectivePredictor<P> && !std::same_as<P, AnySelectivePredictor>)
  explicit AnySelectivePredictor(P) {
    check_selective_predictor<P>();
  }

  [[nodiscard]] bool empty() const noexcept { return !m_self; }
  [[nodiscard]] std::vector<Decision> decide(std::span<const Candidate> c) { return m_self->decide(c); }
  void update(std::span<const Observation> o) { m_self->update(o); }
  [[nodiscard]] bool ready() const { return m_self && m_self->ready(); }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual std::vector<Decision> decide(std::span<const Candidate>) = 0;
    virtual void update(std::span<const Observation>) = 0;
    virtual bool ready() const = 0;
  };
  template <class P>
  struct Holder final : Concept {
    explicit Holder(P p) : value(std::move(p)) {}
    std::vector<Decision> decide(std::span<const Candidate> c) override { return value.decide(c); }
    void update(std::span<const Observation> o) override {
      if constexpr (requires { value.update(o); }) value.update(o);
    }
    bool ready() const override {
      if constexpr (requires { { value.ready() } -> std::convertible_to<bool>; }) return value.ready();
      else return true;
    }
    P value;
  };
  std::shared_ptr<Concept> m_self;  // a search owns its model: copies share it
};

static_assert(SelectivePredictor<AnySelectivePredictor>);

// A search-model kind: a fresh predictor for one search, every random choice seeded.
using SearchModelFactory = std::function<AnySelectivePredictor(std::uint64_t seed)>;

// Thread-safe. Throws invalid_argument_error (naming the kind) for an empty name, a name taken
// already, or an empty factory. A search asks for a kind by the name it was registered with
// (search --surrogate NAME, Plan's model settings).
void register_search_model_kind(std::string name, SearchModelFactory make);
// The factory registered as `name`, nullptr when none is.
[[nodiscard]] const SearchModelFactory* find_search_model_kind(std::string_view name);

}  // namespace gpuforecast
