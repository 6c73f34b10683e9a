// `gpuforecast search --cache F` killed with SIGKILL in the middle of a run, then `--resume`:
// the cache keeps every finished measurement (at most the one in flight is lost), and the
// resumed run ends exactly as an uninterrupted one. The program is run as a user runs it.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/data/community_formats.hpp"
#include "data/temp_dir.hpp"
#include "support/data.hpp"
#include "support/process.hpp"

using namespace gpuforecast;

namespace {

// Starts `gpuforecast search ARGS...`, output into `log`; returns its process id.
pid_t start_search(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> all{GPUFORECAST_CLI_PATH, "search"};
  all.insert(all.end(), args.begin(), args.end());
  return test::spawn_with_log(all, log);
}

using test::text_of;

// Runs it to the end; returns the exit status (output in `log`).
int run_search(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = start_search(args, log);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

std::size_t entries_now(const std::string& path) {
  if (!std::filesystem::exists(path)) return 0;
  try {
    return read_kernel_tuner_cache(path).entries.size();
  } catch (const std::exception&) {
    return 0;  // between the writer's temporary file and its rename
  }
}

}  // namespace

TEST_CASE("a search killed with SIGKILL keeps its measurements in its cache and resumes where it stopped",
          "[tools][search][resume]") {
  test::TempDir tmp;
  const std::string replay = test::cache_file("convolution_milo", "A4000").string();
  const std::vector<std::string> common{"--replay", replay, "--strategy", "surrogate", "--seeds", "1",
                                        "--budget", "60", "--no-progress"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> out = common;
    out.insert(out.end(), more.begin(), more.end());
    return out;
  };
  const std::string log = (tmp.path() / "log.txt").string();

  // The uninterrupted run.
  const std::string full_trace = (tmp.path() / "full.t4.json").string();
  const std::string full_cache = (tmp.path() / "full.json").string();
  REQUIRE(run_search(with({"--trace", full_trace, "--cache", full_cache}), log) == 0);
  const T4File full = read_t4(full_trace);
  REQUIRE(full.results.size() == 60);

  // The same run slowed down (each measurement holds for a tenth of its stored compile and
  // benchmark time), killed once its cache holds 10 measurements.
  const std::string cache = (tmp.path() / "run.json").string();
  const pid_t pid = start_search(with({"--cache", cache, "--time-scale", "0.1"}), log);
  std::size_t seen = 0;
  int status = 0;
  bool exited = false;
  while (seen < 10) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    seen = entries_now(cache);
  }
  INFO("the slowed-down run ended before it could be killed:\n" << text_of(log));
  REQUIRE_FALSE(exited);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status));

  // What the file holds: at least what was seen before the kill, each the same as the
  // uninterrupted run's measurement at the same place. Only the measurement in flight is lost.
  const CacheFile killed = read_kernel_tuner_cache(cache);
  const std::size_t k = killed.entries.size();
  CHECK(k >= seen);
  REQUIRE(k < 60);
  for (std::size_t i = 0; i < k; ++i) {
    INFO("measurement " << i + 1);
    CHECK(killed.entries[i].config == full.results[i].config);
    CHECK(killed.entries[i].measurement.status == full.results[i].measurement.status);
    CHECK(killed.entries[i].measurement.median_ms == full.results[i].measurement.median_ms);
  }

  // Resumed (at full speed): the same 60 measurements as the uninterrupted run, in order.
  const std::string resumed_trace = (tmp.path() / "resumed.t4.json").string();
  const std::string events = (tmp.path() / "resumed.jsonl").string();
  REQUIRE(run_search(with({"--trace", resumed_trace, "--cache", cache, "--resume", "--events", events}), log) == 0);
  {
    // Its event log says where it resumed from and which measurements the cache served.
    std::ifstream in(events);
    std::vector<nlohmann::json> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
    REQUIRE(lines.size() > 2);
    CHECK(lines[1]["event"] == "resumed");
    CHECK(lines[1]["from"] == cache);
    CHECK(lines[1]["configurations"] == k);
    std::size_t served = 0, measured = 0;
    for (const auto& l : lines)
      if (l["event"] == "measured") {
        ++measured;
        INFO("measured line " << measured << ": " << l.dump());
        CHECK(l.value("resumed", false) == (measured <= k));
        served += l.value("resumed", false) ? 1 : 0;
      }
    CHECK(served == k);
    CHECK(measured == 60);
  }
  const T4File resumed = read_t4(resumed_trace);
  REQUIRE(resumed.results.size() == full.results.size());
  for (std::size_t i = 0; i < full.results.size(); ++i) {
    INFO("measurement " << i + 1 << (i < k ? " (from the cache)" : " (measured after resuming)"));
    const auto& a = full.results[i];
    const auto& b = resumed.results[i];
    CHECK(a.config == b.config);
    CHECK(a.invalidity == b.invalidity);
    CHECK(a.measurement.samples_ms == b.measurement.samples_ms);
    CHECK(a.measurement.compile_ms == b.measurement.compile_ms);
    CHECK(a.measurement.benchmark_ms == b.measurement.benchmark_ms);
    CHECK(a.measurements == b.measurements);  // time, cost_s, best so far
  }
  // The continued cache is complete and closed, and holds what the uninterrupted run's holds.
  const CacheFile after = read_kernel_tuner_cache(cache);
  const CacheFile reference = read_kernel_tuner_cache(full_cache);
  CHECK(after.warnings.empty());
  REQUIRE(after.entries.size() == reference.entries.size());
  for (std::size_t i = 0; i < after.entries.size(); ++i) CHECK(after.entries[i].config == reference.entries[i].config);
  CHECK(text_of(cache).ends_with("}\n}\n"));
}

TEST_CASE("resuming from the cache of another search is refused, naming the file", "[tools][search][resume]") {
  test::TempDir tmp;
  const std::string a4000 = test::cache_file("convolution_milo", "A4000").string();
  const std::string a100 = test::cache_file("convolution_milo", "A100").string();
  const std::string cache = (tmp.path() / "a4000.json").string();
  const std::string log = (tmp.path() / "log.txt").string();
  REQUIRE(run_search({"--replay", a4000, "--strategy", "random", "--seeds", "1", "--budget", "5", "--cache", cache,
                      "--no-progress"},
                     log) == 0);
  const int rc = run_search({"--replay", a100, "--strategy", "random", "--seeds", "1", "--budget", "5", "--cache",
                             cache, "--resume", "--no-progress"},
                            log);
  const std::string out = text_of(log);
  INFO(out);
  CHECK(rc != 0);
  CHECK_THAT(out, Catch::Contains("a4000.json") && Catch::Contains("device_name") && Catch::Contains("another search"));
  CHECK_THAT(out, !Catch::Contains("unexpected error"));
}

TEST_CASE("the options --cache, --resume and --time-scale reject what they cannot do", "[tools][search]") {
  test::TempDir tmp;
  const std::string replay = test::cache_file("convolution_milo", "A4000").string();
  const std::string log = (tmp.path() / "log.txt").string();
  const std::vector<std::string> base{"--replay", replay, "--seeds", "1", "--budget", "5", "--no-progress"};
  auto fails_with = [&](std::vector<std::string> more, const std::string& words) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    const int rc = run_search(args, log);
    const std::string out = text_of(log);
    INFO(out);
    CHECK(rc != 0);
    CHECK_THAT(out, Catch::Contains(words));
  };
  fails_with({"--resume"}, "--cache");
  fails_with({"--time-scale", "-1"}, "--time-scale");
  fails_with({"--time-scale", "nan"}, "--time-scale");
  fails_with({"--cache", (tmp.path() / "c.json.gz").string()}, "without .gz");
}
