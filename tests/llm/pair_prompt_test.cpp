// The prompt of a pair: shared context first (so servers reuse it), the two configurations
// last, letters A-H for bins 1-8.
#include <catch2/catch.hpp>

#include "gpuforecast/core/error.hpp"
#include "llm/pair_prompt.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {
Candidate candidate(int bx) {
  Candidate c;
  c.kernel = "convolution_milo";
  c.problem_size = {4096, 4096};
  auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"block_size_x", "use_shmem"});
  c.config = Config(names, {bx, 1});
  auto d = std::make_shared<Device>();
  d->name = "A100-PCIE-40GB";
  d->vendor = "NVIDIA";
  d->sm_count = 108;
  c.device = d;
  return c;
}
}  // namespace

TEST_CASE("pair prompts share everything but their last line") {
  const std::vector<PairExample> shots{{candidate(16).config, candidate(32).config, 5}};
  const auto a = pair_prompt(candidate(16), candidate(64), shots);
  const auto b = pair_prompt(candidate(32), candidate(128), shots);
  const auto prefix = a.substr(0, a.rfind('\n') + 1);
  CHECK(b.compare(0, prefix.size(), prefix) == 0);
  CHECK_THAT(a, Contains("convolution_milo") && Contains("108 SMs") && Contains("H: s >= 4"));
  CHECK_THAT(a, Contains("answer E"));  // the example's measured bin 5
  CHECK_THAT(a.substr(prefix.size()), Contains("block_size_x=16") && Contains("block_size_x=64"));
  CHECK(bin_letter(1) == 'A');
  CHECK(bin_letter(8) == 'H');
  CHECK_THROWS_AS(bin_letter(9), invalid_argument_error);
  auto other = candidate(16);
  other.kernel = "gemm";
  CHECK_THROWS_WITH(pair_prompt(candidate(16), other), Contains("one kernel"));
}

TEST_CASE("pair prompts carry the static features the candidates hold, or say they are unavailable") {
  CHECK_THAT(pair_prompt(candidate(16), candidate(64)), Contains("instruction mix): unavailable"));
  auto ref = candidate(16), cand = candidate(64);
  ref.features = {{"registers", 32}, {"spill_stores_bytes", 0}, {"static_shared_memory_bytes", 4096}, {"ptx_fma_f32", 64},
                  {"ptx_ld_global", 12}, {"ptx_mma", 0}};
  cand.features = {{"registers", 96}, {"spill_stores_bytes", 24}, {"ptx_fma_f32", 256}};
  const auto p = pair_prompt(ref, cand);
  CHECK_THAT(p, !Contains("unavailable") && Contains("from NVRTC"));
  const auto last = p.substr(p.rfind('\n') + 1);
  CHECK_THAT(last, Contains("block_size_x=16") &&
                       Contains("(registers 32, spill stores 0 B, shared memory 4096 B, instructions: fma_f32 64, ld_global 12)"));
  CHECK_THAT(last, Contains("(registers 96, spill stores 24 B, instructions: fma_f32 256) ; answer:"));
  CHECK_THAT(last, !Contains("mma"));  // zero counts are left out
}
