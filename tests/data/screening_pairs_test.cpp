// Screening rehearsal files: what is written reads back, a folder is every device's file, and a
// malformed file is refused with its name and line.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "data/screening_pairs.hpp"
#include "temp_dir.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {
std::string write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}
}  // namespace

TEST_CASE("screening pairs read back as written, gzip and plain, one file or a folder of them") {
  const test::TempDir dir;
  const std::vector<ScreeningPair> a{{1.5, 2.0, 1.75}, {3.0, 1.0, 1.75}};
  const std::vector<ScreeningPair> b{{0.5, 0.25, 0.75}};
  std::filesystem::create_directory(dir.path() / "rehearsal");
  write_screening_pairs(a, (dir.path() / "rehearsal" / "A100.csv").string());
  write_screening_pairs(b, (dir.path() / "rehearsal" / "A4000.csv.gz").string());
  write_file(dir.path() / "rehearsal" / "notes.txt", "not a pairs file");

  const auto one = read_screening_pairs((dir.path() / "rehearsal" / "A100.csv").string());
  REQUIRE(one.size() == 2);
  CHECK(one[1].forecast_ms == 3.0);
  CHECK(one[1].measured_ms == 1.0);
  CHECK(one[1].incumbent_ms == 1.75);
  const auto groups = read_screening_rehearsal((dir.path() / "rehearsal").string());
  REQUIRE(groups.size() == 2);  // A100's two, then A4000's one (name order); notes.txt is not read
  CHECK(groups[0].size() == 2);
  REQUIRE(groups[1].size() == 1);
  CHECK(groups[1][0].forecast_ms == 0.5);
  CHECK(read_screening_rehearsal((dir.path() / "rehearsal" / "A100.csv").string()).size() == 1);
}

TEST_CASE("screening pairs keep the incumbent's forecasts when every pair has one") {
  const test::TempDir dir;
  const std::vector<ScreeningPair> with{{1.5, 2.0, 1.75, 1.6}, {3.0, 1.0, 1.75, 1.9}};
  const auto path = (dir.path() / "with.csv").string();
  write_screening_pairs(with, path);
  const auto back = read_screening_pairs(path);
  REQUIRE(back.size() == 2);
  CHECK(back[0].incumbent_forecast_ms == 1.6);
  CHECK(back[1].incumbent_forecast_ms == 1.9);
  // One pair without: the column is left out rather than written with a placeholder.
  auto mixed = with;
  mixed[1].incumbent_forecast_ms = 0;
  write_screening_pairs(mixed, path);
  const auto three = read_screening_pairs(path);
  REQUIRE(three.size() == 2);
  CHECK(three[0].incumbent_forecast_ms == 0);
  // A four-column file holds four fields on every line, each a positive time.
  std::ofstream(path) << "forecast_ms,measured_ms,incumbent_ms,incumbent_forecast_ms\n1,2,3,4\n1,2,3\n";
  CHECK_THROWS_WITH(read_screening_pairs(path), Contains("with.csv") && Contains("line 3: expected 4 fields, found 3"));
  std::ofstream(path) << "forecast_ms,measured_ms,incumbent_ms,incumbent_forecast_ms\n1,2,3,-4\n";
  CHECK_THROWS_WITH(read_screening_pairs(path), Contains("line 2") && Contains("incumbent_forecast_ms -4"));
}

TEST_CASE("a malformed screening pairs file is refused with its name and line") {
  const test::TempDir dir;
  const auto refused = [&](const std::string& text, const std::string& expected) {
    const auto path = write_file(dir.path() / "bad.csv", text);
    INFO(text);
    CHECK_THROWS_AS(read_screening_pairs(path), input_error);
    CHECK_THROWS_WITH(read_screening_pairs(path), Contains("bad.csv") && Contains(expected));
  };
  const std::string header = "# rehearsal\nforecast_ms,measured_ms,incumbent_ms\n";
  refused("forecast,measured\n1,2\n", "line 1");
  refused(header + "1,2,3\n1,2\n", "line 4: expected 3 fields, found 2");
  refused(header + "1,nan,3\n", "line 3: measured_ms nan is not a positive finite number");
  refused(header + "1,2,-3\n", "incumbent_ms -3");
  refused(header + "1,2,0\n", "incumbent_ms 0");
  refused(header + "1,x,3\n", "measured_ms \"x\" is not a number");
  refused(header, "no screening pairs");
  const std::filesystem::path empty = dir.path() / "empty";
  std::filesystem::create_directory(empty);
  CHECK_THROWS_WITH(read_screening_rehearsal(empty.string()), Contains("no .csv or .csv.gz file"));
  CHECK_THROWS_AS(read_screening_pairs((dir.path() / "missing.csv").string()), input_error);
}
