// The GPU's health, read through NVML: what changes between two readings becomes one typed
// event each (a throttle reason newly active, the temperature limit reached, new uncorrected ECC
// errors, each Xid), what is no fault of the device is not reported, and a machine without
// NVML gets a reason instead of a crash.
#include "runtime/device_health.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {
GpuSample steady() {
  GpuSample s;
  s.sm_clock_mhz = 1980;
  s.memory_clock_mhz = 2619;
  s.temperature_c = 45;
  s.power_w = 300;
  return s;
}
}  // namespace

TEST_CASE("throttle reasons are named by NVML's bits, unknown ones by value") {
  CHECK(throttle_reason_names(0).empty());
  CHECK(throttle_reason_names(throttle::sw_power_cap | throttle::hw_thermal) == "sw_power_cap,hw_thermal");
  CHECK(throttle_reason_names(0x1000) == "0x1000");
  CHECK(throttle_reason_names(throttle::gpu_idle | 0x2000) == "gpu_idle,0x2000");
}

TEST_CASE("a steady GPU raises nothing; each change is one typed event, once") {
  const GpuSample a = steady();
  CHECK(health_events({}, a).empty());
  CHECK(health_events(a, a).empty());

  GpuSample hot = a;
  hot.temperature_c = 87;
  hot.throttle_reasons = throttle::sw_thermal | throttle::gpu_idle;  // idle is no fault: not named
  hot.sm_clock_mhz = 1410;
  const auto e = health_events(a, hot);
  REQUIRE(e.size() == 2);
  CHECK(e[0].kind == "gpu_throttle");
  CHECK_THAT(e[0].detail, Contains("sw_thermal") && Contains("1410 MHz") && !Contains("gpu_idle"));
  CHECK(e[1].kind == "gpu_hot");
  CHECK(e[1].value == 87);
  // Still throttled and still hot at the next reading: nothing new to say.
  CHECK(health_events(hot, hot).empty());
  // A second reason joins the first: named, alone.
  GpuSample worse = hot;
  worse.throttle_reasons |= throttle::hw_slowdown;
  const auto w = health_events(hot, worse);
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0].detail, Contains("hw_slowdown") && !Contains("sw_thermal"));

  GpuSample broken = a;
  broken.ecc_uncorrected = 3;
  broken.xids = {79, 48};
  const auto b = health_events(a, broken);
  REQUIRE(b.size() == 3);
  CHECK(b[0].kind == "gpu_ecc");
  CHECK(b[0].value == 3);
  CHECK(b[1].kind == "gpu_xid");
  CHECK(b[1].value == 79);
  CHECK(b[2].value == 48);
  CHECK_THAT(b[1].detail, Contains("Xid 79"));

  // A user-set application clock is no anomaly; the options say what is ignored.
  GpuSample pinned = a;
  pinned.throttle_reasons = throttle::applications_clocks;
  CHECK(health_events(a, pinned).empty());
  DeviceHealthOptions strict;
  strict.ignored_throttle = 0;
  CHECK(health_events(a, pinned, strict).size() == 1);
  // A quantity NVML could not read (NaN) raises nothing.
  GpuSample unknown = a;
  unknown.temperature_c = std::nan("");
  CHECK(health_events(a, unknown).empty());
}

TEST_CASE("without NVML, or without the GPU asked for, opening says why") {
  std::string why;
  const auto device = NvmlDevice::open(0, &why);
  if (device) {
    // A machine with a GPU: the reading is real.
    auto d = NvmlDevice::open(0, &why);
    REQUIRE(d);
    const GpuSample s = d->sample();
    CHECK((std::isnan(s.sm_clock_mhz) || s.sm_clock_mhz > 0));
    CHECK_FALSE(NvmlDevice::open(4096, &why));
    CHECK_THAT(why, Contains("no GPU 4096"));
  } else {
    CHECK_THAT(why, Contains("libnvidia-ml.so.1") || Contains("NVML"));
  }
}
