#include "gpuforecast/surrogate/any_surrogate.hpp"

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

const AnySurrogate::Concept& AnySurrogate::self() const {
  if (!m_self) throw invalid_argument_error("AnySurrogate is empty: construct it from a surrogate or load a model");
  return *m_self;
}

AnySurrogate::Concept& AnySurrogate::mut() {
  if (!m_self) throw invalid_argument_error("AnySurrogate is empty: construct it from a surrogate or load a model");
  if (m_self.use_count() > 1) m_self = m_self->clone();
  return *m_self;
}

}  // namespace gpuforecast
