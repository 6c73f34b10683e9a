#include "data/kernel_tuner_cache_appender.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "support/data.hpp"
#include "support/process.hpp"

using namespace gpuforecast;

namespace {

struct Temp {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("gpuforecast_appender_test_" + std::to_string(::getpid()));
  Temp() { std::filesystem::create_directories(dir); }
  ~Temp() { std::filesystem::remove_all(dir); }
};

using test::text_of;

// The real file's header with no entries, and its entries to append.
struct Source {
  CacheFile file = read_kernel_tuner_cache(test::cache_file("convolution_milo", "A4000").string());
  [[nodiscard]] CacheFile header() const {
    CacheFile h = file;
    h.entries.clear();
    return h;
  }
};

void check_entries(const CacheFile& read, const CacheFile& source, std::size_t n) {
  REQUIRE(read.entries.size() == n);
  for (std::size_t i = 0; i < n; ++i) {
    INFO("entry " << i);
    CHECK(read.entries[i].config == source.entries[i].config);
    CHECK(read.entries[i].measurement.status == source.entries[i].measurement.status);
    CHECK(read.entries[i].measurement.samples_ms == source.entries[i].measurement.samples_ms);
  }
}

}  // namespace

TEST_CASE("an appended cache reads back after every line, open or closed", "[data][cache]") {
  Temp tmp;
  const Source src;
  REQUIRE(src.file.entries.size() > 30);
  const std::string path = (tmp.dir / "run.json").string();
  KernelTunerCacheAppender out(path, src.header());
  CHECK(read_kernel_tuner_cache(path).entries.empty());
  for (std::size_t i = 0; i < 30; ++i) {
    out.append(src.file.entries[i]);
    // Flushed: another reader sees the line at once, the file still open.
    if (i % 7 == 0) check_entries(read_kernel_tuner_cache(path), src.file, i + 1);
  }
  CHECK(out.entries() == 30);
  out.close();
  const CacheFile closed = read_kernel_tuner_cache(path);
  check_entries(closed, src.file, 30);
  CHECK(closed.warnings.empty());
  CHECK(closed.device_name == src.file.device_name);
  CHECK(text_of(path).ends_with("}\n}\n"));
  CHECK_THROWS_WITH(out.append(src.file.entries[30]), Catch::Contains("closed"));
}

TEST_CASE("a torn last line is dropped with a warning naming the file and line", "[data][cache]") {
  Temp tmp;
  const Source src;
  const std::string path = (tmp.dir / "torn.json").string();
  {
    CacheFile start = src.header();
    start.entries.assign(src.file.entries.begin(), src.file.entries.begin() + 5);
    KernelTunerCacheAppender out(path, start);
  }
  const std::string complete = text_of(path);
  // The torn entry starts on the line after the last complete one.
  const auto lines = static_cast<std::size_t>(std::count(complete.begin(), complete.end(), '\n'));
  // The next entry cut at several places: inside a key, a number, a string, a list.
  {
    KernelTunerCacheAppender more(path, [&] {
      CacheFile f = src.header();
      f.entries.assign(src.file.entries.begin(), src.file.entries.begin() + 6);
      return f;
    }());
  }
  const std::string six = text_of(path);
  REQUIRE(six.starts_with(complete));
  const std::string line = six.substr(complete.size());  // ",\n\"key\": {...}"
  for (std::size_t cut : {std::size_t{3}, std::size_t{10}, line.size() / 2, line.find("times") + 9, line.size() - 1}) {
    INFO("cut after " << cut << " bytes of " << line);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << complete << line.substr(0, cut);
    const CacheFile read = read_kernel_tuner_cache(path);
    check_entries(read, src.file, 5);
    REQUIRE(read.warnings.size() == 1);
    CHECK_THAT(read.warnings.front(), Catch::Contains(path) && Catch::Contains("line " + std::to_string(lines + 2)));
  }
  // A complete line without its closing braces is an open file, not a torn one.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << six;
  const CacheFile open = read_kernel_tuner_cache(path);
  check_entries(open, src.file, 6);
  CHECK(open.warnings.empty());
}

TEST_CASE("damage that is not a torn last line is still an error", "[data][cache]") {
  Temp tmp;
  const Source src;
  const std::string path = (tmp.dir / "bad.json").string();
  {
    CacheFile start = src.header();
    start.entries.assign(src.file.entries.begin(), src.file.entries.begin() + 3);
    KernelTunerCacheAppender out(path, start);
  }
  std::string text = text_of(path);
  // The middle entry broken, the last one intact.
  const auto second = text.find("\"time\"", text.find("\"cache\""));
  const auto middle = text.find("\"time\"", second + 1);
  text.replace(middle, 6, "\"ti");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  CHECK_THROWS_WITH(read_kernel_tuner_cache(path), Catch::Contains(path));
  // A header cut short is a truncated file.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text.substr(0, 40);
  CHECK_THROWS_WITH(read_kernel_tuner_cache(path), Catch::Contains("truncated"));
}

TEST_CASE("an append-only cache is plain JSON", "[data][cache]") {
  Temp tmp;
  const Source src;
  CHECK_THROWS_WITH(KernelTunerCacheAppender((tmp.dir / "run.json.gz").string(), src.header()),
                    Catch::Contains("run.json.gz") && Catch::Contains("without .gz"));
}
