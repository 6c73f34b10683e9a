// benchmarks/common/sha256.hpp: the FIPS 180-4 examples, a message that fills a block's padding
// exactly, and a shared data file against the digest the peers' record names for it.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/sha256.hpp"
#include "gpuforecast/core/error.hpp"

using gpuforecast::bench::sha256_hex;
using gpuforecast::bench::sha256_of_file;

TEST_CASE("sha256 of the FIPS 180-4 example messages") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256 of a message whose length falls on the padding boundary") {
  // 55 bytes pad within one block, 56 need a second: both sides of the boundary.
  CHECK(sha256_hex(std::string(55, 'a')) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  CHECK(sha256_hex(std::string(56, 'a')) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
}

TEST_CASE("sha256 of a shared data file matches the peers' record") {
  const char* env = std::getenv("GPUFORECAST_DATA");
  REQUIRE(env != nullptr);
  const std::filesystem::path file = std::filesystem::path(env) / "benchmark_hub/cachefiles/gemm/RTX_3090.json.gz";
  INFO(file.string());
  CHECK(sha256_of_file(file).substr(0, 16) == "a829d92217a8fc04");
  CHECK_THROWS_AS(sha256_of_file(file.string() + ".missing"), gpuforecast::input_error);
}
