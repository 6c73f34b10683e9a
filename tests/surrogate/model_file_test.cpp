#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "synthetic.hpp"

using namespace gpuforecast;

namespace {
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gpuforecast_model_file_test_" + name)).string();
}
ModelFile sample() {
  ModelFile f;
  f.set("alpha", "first payload");
  f.set("beta", std::string("\0binary\xff", 8));
  return f;
}
}  // namespace

TEST_CASE("archive: round trip and bounds-checked reads") {
  ArchiveWriter w;
  w.u32(7);
  w.u64(1ull << 40);
  w.i64(-5);
  w.f64(0.25);
  w.f32s({1.5f, -2.0f});
  w.f64s({3.0});
  w.str("name");
  w.bytes(std::string("\0\1", 2));
  ArchiveReader r(w.data(), "mem");
  CHECK(r.u32() == 7);
  CHECK(r.u64() == (1ull << 40));
  CHECK(r.i64() == -5);
  CHECK(r.f64() == 0.25);
  CHECK(r.f32s() == std::vector<float>{1.5f, -2.0f});
  CHECK(r.f64s() == std::vector<double>{3.0});
  CHECK(r.str() == "name");
  CHECK(r.bytes() == std::string("\0\1", 2));
  CHECK(r.at_end());
  CHECK_THROWS_WITH(r.u32(), Catch::Contains("mem") && Catch::Contains("truncated"));
  // A length prefix larger than the data is caught before allocating.
  ArchiveWriter huge;
  huge.u64(1ull << 60);
  ArchiveReader h(huge.data(), "huge.gfm");
  CHECK_THROWS_AS(h.f64s(), model_file_error);
}

TEST_CASE("archive: named values and moving the bytes out (compile cache, worker messages)") {
  ArchiveWriter w;
  w.f64_map({{"registers", 32}, {"shared_bytes", 4096.5}, {"", -1}});
  w.u64(9);
  const std::string bytes = w.release();
  CHECK(w.data().empty());
  ArchiveReader r(bytes, "worker message");
  CHECK(r.f64_map() == std::map<std::string, double>{{"", -1}, {"registers", 32}, {"shared_bytes", 4096.5}});
  CHECK(r.u64() == 9);
  CHECK(r.at_end());
  // A count that cannot fit in what is left is refused before any entry is read.
  ArchiveWriter bad;
  bad.u64(1000);
  bad.str("x");
  ArchiveReader b(bad.data(), "job message");
  CHECK_THROWS_WITH(b.f64_map(), Catch::Contains("job message") && Catch::Contains("map of 1000 entries"));
}

TEST_CASE("model file: sections round trip through a file") {
  const auto path = temp_path("roundtrip.gfm");
  write_model_file(path, sample());
  const auto back = read_model_file(path);
  REQUIRE(back.sections.size() == 2);
  REQUIRE(back.find("beta"));
  CHECK(*back.find("beta") == std::string("\0binary\xff", 8));
  CHECK(back.find("gamma") == nullptr);
  std::filesystem::remove(path);
}

TEST_CASE("model file: truncated, corrupted, future-version and foreign files fail clearly") {
  const std::string good = encode_model_file(sample());
  SECTION("truncated at every length") {
    for (std::size_t n = 0; n < good.size(); ++n) {
      INFO("length " << n);
      CHECK_THROWS_AS(decode_model_file(std::string_view(good).substr(0, n), "cut.gfm"), model_file_error);
    }
    CHECK_THROWS_WITH(decode_model_file(std::string_view(good).substr(0, good.size() - 3), "cut.gfm"),
                      Catch::Contains("cut.gfm") && Catch::Contains("truncated"));
  }
  SECTION("a flipped byte anywhere in the payload fails the checksum") {
    for (std::size_t i = 20; i + 4 < good.size(); ++i) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ 0x40);
      CHECK_THROWS_WITH(decode_model_file(bad, "bad.gfm"), Catch::Contains("checksum"));
    }
  }
  SECTION("future version") {
    std::string future = good;
    future[8] = 2;  // version field follows the 8-byte magic
    CHECK_THROWS_WITH(decode_model_file(future, "new.gfm"), Catch::Contains("newer") && Catch::Contains("version 2"));
  }
  SECTION("not a model file") {
    CHECK_THROWS_WITH(decode_model_file("{\"json\": true}", "x.json"), Catch::Contains("magic"));
    CHECK_THROWS_WITH(read_model_file(temp_path("does-not-exist.gfm")), Catch::Contains("cannot open"));
  }
  SECTION("a truncated file on disk") {
    const auto path = temp_path("short.gfm");
    std::ofstream(path, std::ios::binary).write(good.data(), static_cast<std::streamsize>(good.size() / 2));
    CHECK_THROWS_WITH(read_model_file(path), Catch::Contains(path) && Catch::Contains("truncated"));
    std::filesystem::remove(path);
  }
  SECTION("trailing bytes") {
    CHECK_THROWS_WITH(decode_model_file(good + "x", "long.gfm"), Catch::Contains("unexpected bytes"));
  }
}

TEST_CASE("model file: a surrogate section cut short names the file and the section") {
  auto model = make_surrogate("ridge");
  model.fit(test::synthetic_space(test::synthetic_device("GPU-A", 1.0), 1.0));
  ModelFile file;
  set_surrogate_section(file, model);
  const std::string whole = *file.find("surrogate");
  for (const std::size_t n : {std::size_t{2}, whole.size() / 2}) {
    INFO("section cut to " << n << " bytes");
    file.set("surrogate", whole.substr(0, n));
    CHECK_THROWS_WITH(surrogate_from(file, "m.gfm"),
                      Catch::Contains("m.gfm [surrogate section]") && Catch::Contains("truncated"));
  }
}

TEST_CASE("model file: save_surrogate/load_surrogate with training summary") {
  const auto obs = test::synthetic_space(test::synthetic_device("GPU-A", 1.0), 1.0);
  auto model = make_surrogate("ridge");
  model.fit(obs);
  const auto path = temp_path("ridge.gfm");
  save_surrogate(path, model, TrainingSummary::of(obs));
  const auto file = read_model_file(path);
  const auto summary = training_summary_from(file, path);
  CHECK(summary.kernels == std::vector<std::string>{"synthetic"});
  CHECK(summary.devices == std::vector<std::string>{"GPU-A"});
  CHECK(summary.observations == obs.size());
  CHECK(summary.failed == 18);
  const auto back = load_surrogate(path);
  CHECK(back.kind() == "ridge");
  const auto c = test::candidates_of(obs);
  CHECK(back.predict(c)[5].median_ms == Approx(model.predict(c)[5].median_ms));

  // Other parts add their own sections; the surrogate still loads.
  auto with_extra = file;
  with_extra.set("calibration", "opaque");
  write_model_file(path, with_extra);
  CHECK(load_surrogate(path).kind() == "ridge");
  CHECK(*read_model_file(path).find("calibration") == "opaque");

  // A model file without a surrogate.
  write_model_file(path, sample());
  CHECK_THROWS_WITH(load_surrogate(path), Catch::Contains("no \"surrogate\" section"));
  std::filesystem::remove(path);
}
