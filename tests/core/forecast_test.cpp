#include <catch2/catch.hpp>

#include <cmath>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/forecast.hpp"

using namespace gpuforecast;

TEST_CASE("half-octave speedup bins (GPU Forecasters)") {
  CHECK(speedup_bin(1.0, 1.0) == 4);            // speedup 1: floor(0)+4
  CHECK(speedup_bin(1.0, 1.0 / 1.5) == 5);      // speedup 1.5: 2*log2(1.5)=1.17
  CHECK(speedup_bin(1.0, 0.5) == 6);            // speedup 2
  CHECK(speedup_bin(1.0, 1.0 / 3.0) == 7);      // 2*log2 3 = 3.17
  CHECK(speedup_bin(1.0, 0.01) == 8);           // clamped
  CHECK(speedup_bin(1.0, 1.1) == 3);            // slowdown: floor(-0.275) = -1
  CHECK(speedup_bin(1.0, 2.0) == 2);            // -2 + 4
  CHECK(speedup_bin(1.0, 100.0) == 1);          // clamped
  CHECK_THROWS_AS(speedup_bin(0.0, 1.0), invalid_argument_error);
  CHECK_THROWS_AS(speedup_bin(1.0, std::nan("")), invalid_argument_error);
}
