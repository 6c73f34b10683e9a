#include "llm/pair_prompt.hpp"

#include <fmt/core.h>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

char bin_letter(int bin) {
  if (bin < 1 || bin > speedup_bin_count) throw invalid_argument_error(fmt::format("speedup bin must be 1..8, got {}", bin));
  return static_cast<char>('A' + bin - 1);
}

namespace {

bool has_static_features(const Candidate& c) {
  for (const auto& [name, v] : c.features)
    if (name == "registers" || name.starts_with("ptx_")) return true;
  return false;
}

// "(registers 40, spill stores 0 B, ..., instructions: ld_global 12, fma_f32 64)": the
// resource report first, then the non-zero static PTX instruction counts.
std::string static_features_text(const Candidate& c) {
  static const std::pair<const char*, const char*> resources[] = {
      {"registers", "registers {:.0f}"},
      {"spill_stores_bytes", "spill stores {:.0f} B"},
      {"spill_loads_bytes", "spill loads {:.0f} B"},
      {"local_memory_bytes", "local memory {:.0f} B"},
      {"static_shared_memory_bytes", "shared memory {:.0f} B"}};
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  for (const auto& [name, format] : resources)
    if (auto it = c.features.find(name); it != c.features.end()) add(fmt::format(fmt::runtime(format), it->second));
  std::string mix;
  for (const auto& [name, v] : c.features)
    if (name.starts_with("ptx_") && v != 0) mix += fmt::format("{}{} {:.0f}", mix.empty() ? "" : ", ", name.substr(4), v);
  if (!mix.empty()) add("instructions: " + mix);
  return out.empty() ? std::string() : " (" + out + ")";
}

}  // namespace

std::string pair_prompt(const Candidate& ref, const Candidate& cand, std::span<const PairExample> examples,
                        const PairPromptOptions& o) {
  if (ref.kernel != cand.kernel)
    throw invalid_argument_error(fmt::format("a pair must be of one kernel, got {} and {}", ref.kernel, cand.kernel));
  if (ref.device && cand.device && ref.device->name != cand.device->name)
    throw invalid_argument_error(
        fmt::format("a pair must be on one device, got {} and {}", ref.device->name, cand.device->name));
  std::string p = fmt::format("GPU kernel \"{}\"", ref.kernel);
  if (!ref.problem_size.empty()) {
    p += ", problem size";
    for (auto v : ref.problem_size) p += fmt::format(" {}", v);
  }
  p += ".\n";
  if (const Device* d = ref.device.get())
    p += fmt::format("Device: {} {} ({}), {} SMs, {:.0f} MHz, {:.0f} GB/s, {:.0f} MiB L2, {:.0f} KiB shared memory per SM, "
                     "{:.1f} TFLOP/s fp32.\n",
                     d->vendor, d->name, d->architecture, d->sm_count, d->core_clock_mhz, d->memory_bandwidth_gbs,
                     d->l2_cache_mib, d->shared_memory_per_sm_kib, d->peak_fp32_tflops);
  if (ref.spec && !ref.spec->source.empty()) {
    const auto& s = ref.spec->source;
    p += fmt::format("Source:\n{}\n", s.substr(0, o.max_source_chars));
    if (s.size() > o.max_source_chars) p += fmt::format("[source cut at {} of {} characters]\n", o.max_source_chars, s.size());
  }
  const bool features = has_static_features(ref) || has_static_features(cand);
  p += features ? "Static features of each configuration's compiled code are given in parentheses (from NVRTC; "
                  "instruction counts are static, not executed).\n"
                : "Static features of the compiled code (registers, spills, shared memory, instruction mix): "
                  "unavailable.\n";
  p += "Speedup s = time(reference) / time(candidate). Answer with one letter: A: s < 0.5, B: 0.5-0.71, C: 0.71-1, "
       "D: 1-1.41, E: 1.41-2, F: 2-2.83, G: 2.83-4, H: s >= 4.\n";
  for (const auto& e : examples)
    p += fmt::format("Example: reference {} ; candidate {} ; answer {}\n", e.reference.to_string(),
                     e.candidate.to_string(), bin_letter(e.bin));
  p += fmt::format("Reference {}{} ; candidate {}{} ; answer:", ref.config.to_string(), static_features_text(ref),
                   cand.config.to_string(), static_features_text(cand));
  return p;
}

}  // namespace gpuforecast
