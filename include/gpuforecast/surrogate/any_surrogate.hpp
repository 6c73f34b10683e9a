#pragma once
// Type-erased surrogate for the CLI, model files and bindings. Generic code should template on
// the Surrogate concept instead; this wrapper is for when the type is chosen at run time.
#include <concepts>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// What every surrogate of this library provides beyond the Surrogate concept:
//   void fit(std::span<const Observation>)        train from scratch (failed observations
//                                                  teach p_fail; ok ones the runtime)
//   std::string kind() const                      "ridge", "knn", "xgboost", "transformer", ...
//   void save(ArchiveWriter&) const                weights and hyper-parameters
//   static S load(ArchiveReader&)                  inverse of save
template <class S>
concept PersistentSurrogate = Surrogate<S> && requires(S s, const S cs, std::span<const Observation> o,
                                                       ArchiveWriter& w, ArchiveReader& r) {
  s.fit(o);
  { cs.kind() } -> std::convertible_to<std::string>;
  cs.save(w);
  { S::load(r) } -> std::same_as<S>;
};

// One readable message per PersistentSurrogate requirement a type misses (core/concepts.hpp).
template <class S>
constexpr bool check_persistent_surrogate() {
  check_surrogate<S>();
  static_assert(requires(S s, std::span<const Observation> o) { s.fit(o); },
                "PersistentSurrogate: the type needs a member fit(std::span<const Observation>) that trains "
                "from scratch");
  static_assert(requires(const S s) { { s.kind() } -> std::convertible_to<std::string>; },
                "PersistentSurrogate: the type needs a const member kind() returning its name as a string");
  static_assert(requires(const S s, ArchiveWriter& w) { s.save(w); },
                "PersistentSurrogate: the type needs a const member save(ArchiveWriter&)");
  static_assert(requires(ArchiveReader& r) { { S::load(r) } -> std::same_as<S>; },
                "PersistentSurrogate: the type needs a static member load(ArchiveReader&) returning the type");
  return PersistentSurrogate<S>;
}

class AnySurrogate {
 public:
  AnySurrogate() = default;
  template <PersistentSurrogate S>
  AnySurrogate(S s) : m_self(std::make_shared<Model<S>>(std::move(s))) {}  // NOLINT: implicit
  // Any other type stops here with one message per missing member, instead of a list of
  // unsatisfied constraints. Explicit, so it never takes part in implicit conversions.
  template <class S>
    requires(!PersistentSurrogate<S> && !std::same_as<S, AnySurrogate>)
  explicit AnySurrogate(S) {
    check_persistent_surrogate<S>();
  }

  [[nodiscard]] bool empty() const noexcept { return !m_self; }
  // predict() is const and safe to call from many threads at once; fit/update are not.
  [[nodiscard]] std::vector<Forecast> predict(std::span<const Candidate> c) const { return self().predict(c); }
  void update(std::span<const Observation> o) { mut().update(o); }
  void fit(std::span<const Observation> o) { mut().fit(o); }
  [[nodiscard]] std::string kind() const { return self().kind(); }
  void save(ArchiveWriter& w) const { self().save(w); }
  // Typed access (nullptr if the held type differs).
  template <class S>
  [[nodiscard]] const S* get() const noexcept {
    auto* m = dynamic_cast<const Model<S>*>(m_self.get());
    return m ? &m->value : nullptr;
  }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual std::vector<Forecast> predict(std::span<const Candidate>) const = 0;
    virtual void update(std::span<const Observation>) = 0;
    virtual void fit(std::span<const Observation>) = 0;
    virtual std::string kind() const = 0;
    virtual void save(ArchiveWriter&) const = 0;
    virtual std::shared_ptr<Concept> clone() const = 0;
  };
  template <class S>
  struct Model final : Concept {
    explicit Model(S s) : value(std::move(s)) {}
    // Surrogates keep caches internally, so predict may need a mutable object; const_cast is
    // confined here and each surrogate documents its predict as thread-safe.
    std::vector<Forecast> predict(std::span<const Candidate> c) const override {
      return const_cast<S&>(value).predict(c);
    }
    void update(std::span<const Observation> o) override { value.update(o); }
    void fit(std::span<const Observation> o) override { value.fit(o); }
    std::string kind() const override { return value.kind(); }
    void save(ArchiveWriter& w) const override { value.save(w); }
    std::shared_ptr<Concept> clone() const override { return std::make_shared<Model<S>>(value); }
    S value;
  };
  const Concept& self() const;
  Concept& mut();  // copy-on-write: a shared model is cloned before it is changed
  std::shared_ptr<Concept> m_self;
};

}  // namespace gpuforecast
