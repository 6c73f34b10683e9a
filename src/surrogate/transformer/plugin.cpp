// The entry point through which the core registers the "transformer" kind when it loads this
// library (src/surrogate/transformer_plugin.hpp): the core passes its own register function, so
// the kind lands in the table of the copy of the core that asked.
#include <cstdint>

#include "gpuforecast/surrogate/registry.hpp"
#include "surrogate/transformer.hpp"

extern "C" __attribute__((visibility("default"))) void gpuforecast_transformer_register(
    void (*register_kind)(gpuforecast::SurrogateKind)) {
  using namespace gpuforecast;
  register_kind(SurrogateKind{
      "transformer",
      [](std::uint64_t seed) -> AnySurrogate {
        TransformerOptions o;
        o.seed = seed;
        return TransformerSurrogate(o);
      },
      [](ArchiveReader& r) -> AnySurrogate { return TransformerSurrogate::load(r); }});
}
