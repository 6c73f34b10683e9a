#pragma once
// A small synthetic tuning space with a known runtime law, for tests that must not depend on
// the shared datasets: two devices (one twice as fast), three numeric parameters and a string
// one; configurations with bx * tile > 512 fail.
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "gpuforecast/core/observation.hpp"

namespace gpuforecast::test {

inline std::shared_ptr<const Device> synthetic_device(const std::string& name, double speed) {
  auto d = std::make_shared<Device>();
  d->name = name;
  d->vendor = "NVIDIA";
  d->compute_capability_major = 8;
  d->sm_count = static_cast<int>(54 * speed);
  d->core_clock_mhz = 1400;
  d->memory_bandwidth_gbs = 800 * speed;
  d->memory_gib = 40;
  d->l2_cache_mib = 20;
  d->shared_memory_per_sm_kib = 164;
  d->registers_per_sm = 65536;
  d->peak_fp32_tflops = 10 * speed;
  return d;
}

inline double synthetic_time(double bx, double tile, double unroll, const std::string& mode, double speed) {
  const double lb = std::log2(bx);
  double t = 1.0 + 0.3 * (lb - 6) * (lb - 6) + 0.5 * std::log2(tile) - 0.2 * unroll + (mode == "fast" ? -0.3 : 0.0);
  t += 0.1 * (lb - 6) * std::log2(tile);
  return std::exp(t * 0.7) / speed;
}

// Every configuration of the space on one device (failures included), in a fixed order.
inline std::vector<Observation> synthetic_space(const std::shared_ptr<const Device>& device, double speed,
                                                double noise = 0.02, std::uint64_t seed = 1) {
  auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"bx", "tile", "unroll", "mode"});
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> eps(0.0, noise);
  std::vector<Observation> out;
  for (int bx : {16, 32, 64, 128, 256, 512, 1024})
    for (int tile : {1, 2, 4, 8})
      for (int unroll : {0, 1, 2})
        for (const char* mode : {"fast", "slow"}) {
          Observation o;
          o.candidate.kernel = "synthetic";
          o.candidate.problem_size = {4096, 4096};
          o.candidate.device = device;
          o.candidate.config = Config(names, {Value(bx), Value(tile), Value(unroll), Value(std::string(mode))});
          o.source = "synthetic";
          if (bx * tile > 2048) {
            o.measurement.status = Status::runtime_failed;
            o.measurement.reason = "RuntimeFailedConfig";
          } else {
            o.measurement.status = Status::ok;
            o.measurement.median_ms = synthetic_time(bx, tile, unroll, mode, speed) * std::exp(eps(rng));
          }
          out.push_back(std::move(o));
        }
  return out;
}

inline std::vector<Candidate> candidates_of(const std::vector<Observation>& obs, bool ok_only = true) {
  std::vector<Candidate> c;
  for (const auto& o : obs)
    if (!ok_only || o.measurement.ok()) c.push_back(o.candidate);
  return c;
}

inline std::vector<double> times_of(const std::vector<Observation>& obs) {
  std::vector<double> t;
  for (const auto& o : obs)
    if (o.measurement.ok()) t.push_back(o.measurement.median_ms);
  return t;
}

// A seeded half of the observations (phase 0) or the other half (phase 1): failures in both.
inline std::vector<Observation> every_other(const std::vector<Observation>& obs, int phase = 0) {
  std::vector<std::size_t> idx(obs.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::mt19937_64 rng(11);
  std::shuffle(idx.begin(), idx.end(), rng);
  std::vector<Observation> out;
  for (std::size_t i = static_cast<std::size_t>(phase); i < idx.size(); i += 2) out.push_back(obs[idx[i]]);
  return out;
}

}  // namespace gpuforecast::test
