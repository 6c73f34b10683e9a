#pragma once
// A SelectivePredictor as the surrogate-filtered search uses it, chosen at run time: decide()
// plus two optional hooks found by requires-expressions (STYLE 5.5):
//   void update(std::span<const Observation>)  learn from the round's new measurements
//   bool ready() const                          false while it cannot forecast yet (an online
//                                               model that has seen too little); default true
#include <concepts>
#include <memory>
#include <span>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class SelectiveModel {
 public:
  SelectiveModel() = default;
  template <SelectivePredictor P>
  SelectiveModel(P predictor) : m_self(std::make_shared<Model<P>>(std::move(predictor))) {}  // NOLINT: implicit
  // Any other type stops here with a readable message (core/concepts.hpp). Explicit, so it
  // never takes part in implicit conversions.
  template <class P>
    requires(!SelectivePredictor<P> && !std::same_as<P, SelectiveModel>)
  explicit SelectiveModel(P) {
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
  struct Model final : Concept {
    explicit Model(P p) : value(std::move(p)) {}
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

static_assert(SelectivePredictor<SelectiveModel>);

}  // namespace gpuforecast
