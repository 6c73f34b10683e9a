#pragma once
// The question put to a language model about one (reference, candidate) pair: the kernel (its
// source when the spec holds it), the device's numbers, the tuning parameters, optionally K
// measured pairs of the same space as worked examples, the bin definition, then the two
// configurations with their static features (registers, spills, shared memory, instruction mix)
// when the candidates carry them in Candidate::features (the NVRTC compiler fills them where it
// runs; this area has no CUDA dependency of its own), else a line saying they are unavailable.
// Everything shared by the pairs of one space comes first, so a server that
// caches prompt prefixes (llama.cpp does) reads only the last lines anew for each pair.
// The answer asked for is one letter: A-H are speedup bins 1-8,
// bin = clamp(floor(2 log2(t_ref / t_candidate)) + 4, 1, 8).
#include <span>
#include <string>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct PairExample {
  Config reference;
  Config candidate;
  int bin = 4;  // measured, 1..8
};

struct PairPromptOptions {
  std::size_t max_source_chars = 6000;  // longer sources are cut (with a note saying so)
};

// The letter of a bin (1 -> 'A', ..., 8 -> 'H'); throws invalid_argument_error outside 1..8.
[[nodiscard]] char bin_letter(int bin);

// Throws invalid_argument_error when the two candidates are of different kernels or devices.
[[nodiscard]] std::string pair_prompt(const Candidate& reference, const Candidate& candidate,
                                      std::span<const PairExample> examples = {},
                                      const PairPromptOptions& options = {});

}  // namespace gpuforecast
