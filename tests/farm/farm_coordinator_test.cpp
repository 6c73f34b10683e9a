// `mpirun -np 4 gpuforecast search --replay ... --mpi`: rank 0 searches, ranks 1-3 replay. The
// farm gives the result a single worker gives; a rank that hangs is dropped and the search
// ends with the others; a rank that is killed ends the job (Open MPI aborts it), and every
// measurement that landed is in the cache, from which --resume finishes the search.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/data/community_formats.hpp"
#include "data/temp_dir.hpp"
#include "support/data.hpp"
#include "support/process.hpp"

using namespace gpuforecast;

namespace {

using test::text_of;

// Runs `mpirun -np RANKS gpuforecast search ARGS... --mpi` to its end (two minutes at most),
// output into `log`; returns the exit status (128 + signal when mpirun itself was killed).
int run_farm(int ranks, const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> all{GPUFORECAST_MPIEXEC, "-np", std::to_string(ranks), "--oversubscribe"};
  if (::geteuid() == 0) all.emplace_back("--allow-run-as-root");
  all.insert(all.end(), {GPUFORECAST_CLI_PATH, "search"});
  all.insert(all.end(), args.begin(), args.end());
  all.emplace_back("--mpi");
  const pid_t pid = test::spawn_with_log(all, log);
  // A run takes seconds. Once in a while Open MPI's launcher was seen to wait forever on ranks
  // that had all ended (zombies it never reaped): killed after two minutes, the run's results
  // are still checked, and a test that wants mpirun's success fails naming the hang.
  return test::wait_with_deadline(pid, 120, "mpirun -np " + std::to_string(ranks));
}

std::vector<std::string> search_args(std::vector<std::string> more) {
  std::vector<std::string> out{"--replay", test::cache_file("convolution_milo", "A4000").string(), "--strategy",
                               "random", "--budget", "30", "--first-seed", "7", "--time-scale", "0.005",
                               "--heartbeat-timeout", "2"};
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

// An event log's lines, once tests/monitor/check_events.py has found the file in the schema.
std::vector<nlohmann::json> checked_event_log(const std::string& path) {
  CHECK(std::system(("python3 " GPUFORECAST_CHECK_EVENTS " " + path).c_str()) == 0);
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// The same configurations with the same results. Several ranks record results in the order
// they land, which depends on timing, so the order is not compared.
void same_measurements(const T4File& a, const T4File& b) {
  REQUIRE(a.results.size() == b.results.size());
  std::map<std::string, const T4Result*> by_key;
  for (const auto& r : a.results) by_key[r.config.key()] = &r;
  for (const auto& r : b.results) {
    INFO(r.config.to_string());
    const auto it = by_key.find(r.config.key());
    REQUIRE(it != by_key.end());
    CHECK(it->second->measurement.status == r.measurement.status);
    CHECK(it->second->measurement.median_ms == r.measurement.median_ms);
  }
}

}  // namespace

TEST_CASE("three replay ranks measure what one does and share the work", "[farm][mpi]") {
  test::TempDir tmp;
  const std::string log = (tmp.path() / "log.txt").string();
  const std::string one = (tmp.path() / "one.t4.json").string(), three = (tmp.path() / "three.t4.json").string();
  // A random search draws its 30 configurations at once; the farm hands each rank one per call.
  REQUIRE(run_farm(2, search_args({"--trace", one, "--option", "batch=3"}), log) == 0);
  REQUIRE(run_farm(4, search_args({"--trace", three, "--json"}), log) == 0);
  const std::string out = text_of(log);
  INFO(out);
  same_measurements(read_t4(one), read_t4(three));
  const auto report = nlohmann::json::parse(out);
  REQUIRE(report.at("ranks").size() == 3);
  std::size_t measured = 0;
  for (const auto& rank : report.at("ranks")) {
    CHECK(rank.at("measured").get<std::size_t>() > 0);
    CHECK_FALSE(rank.at("lost").get<bool>());
    measured += rank.at("measured").get<std::size_t>();
  }
  CHECK(measured == 30);
}

TEST_CASE("a rank that stops answering is dropped and the search ends on the others without losing a measurement",
          "[farm][mpi]") {
  test::TempDir tmp;
  const std::string log = (tmp.path() / "log.txt").string();
  const std::string full = (tmp.path() / "full.t4.json").string(), hung = (tmp.path() / "hung.t4.json").string();
  const std::string cache = (tmp.path() / "hung.json").string();
  const std::string events = (tmp.path() / "hung.jsonl").string();
  REQUIRE(run_farm(4, search_args({"--trace", full}), log) == 0);
  // Rank 2 takes its fourth candidate and goes silent; after two seconds without a heartbeat
  // rank 0 gives the candidate to another rank. The hung rank never ends, so neither can MPI
  // finalise: the job ends with mpirun's non-zero status after the results are out.
  const int rc =
      run_farm(4, search_args({"--trace", hung, "--cache", cache, "--events", events, "--farm-fault", "2:hang:3"}), log);
  const std::string out = text_of(log);
  INFO(out);
  CHECK(rc != 0);
  CHECK_THAT(out, Catch::Contains("rank 2 lost: no heartbeat for 2 s while measuring"));
  // The event log says so too: which rank, why, the candidate it held and that it went to another
  // rank, which measured it (a measured line of that configuration after the rank_lost line).
  const std::vector<nlohmann::json> lines = checked_event_log(events);
  const auto lost = std::find_if(lines.begin(), lines.end(), [](const auto& j) { return j["event"] == "rank_lost"; });
  REQUIRE(lost != lines.end());
  INFO(lost->dump());
  CHECK((*lost)["rank"] == 2);
  CHECK((*lost)["reason"] == "no heartbeat for 2 s while measuring");
  CHECK((*lost)["went"] == "requeued");
  REQUIRE((*lost)["held"].is_object());
  CHECK(std::any_of(lost, lines.end(), [&](const auto& j) { return j["event"] == "measured" && j["config"] == (*lost)["held"]; }));
  CHECK(lines.back()["event"] == "end");
  CHECK_THAT(out, Catch::Contains("30 measurements (0 failed)") || Catch::Contains("30 measurements (1 failed)"));
  same_measurements(read_t4(full), read_t4(hung));
  CHECK(read_kernel_tuner_cache(cache).entries.size() == 30);
}

TEST_CASE("a rank killed mid-run ends the job and --resume finishes the search from its cache",
          "[farm][mpi]") {
  test::TempDir tmp;
  const std::string log = (tmp.path() / "log.txt").string();
  const std::string full = (tmp.path() / "full.t4.json").string(), resumed = (tmp.path() / "resumed.t4.json").string();
  const std::string cache = (tmp.path() / "killed.json").string();
  REQUIRE(run_farm(4, search_args({"--trace", full}), log) == 0);
  const T4File reference = read_t4(full);
  // Rank 2 dies (SIGKILL) after its third result; Open MPI then ends every rank of the job.
  const int rc = run_farm(4, search_args({"--cache", cache, "--farm-fault", "2:die:3"}), log);
  {
    INFO(text_of(log));
    CHECK(rc != 0);
  }
  const CacheFile killed = read_kernel_tuner_cache(cache);
  const std::size_t k = killed.entries.size();
  // Results are cached as they reach rank 0, in the order they land: rank 2's three and at
  // least as many from the two other ranks, each the measurement the uninterrupted run made.
  CHECK(k >= 6);
  REQUIRE(k < 30);
  for (const auto& entry : killed.entries) {
    INFO(entry.config.to_string());
    const auto same = std::find_if(reference.results.begin(), reference.results.end(),
                                   [&](const auto& r) { return r.config == entry.config; });
    REQUIRE(same != reference.results.end());
    CHECK(same->measurement.median_ms == entry.measurement.median_ms);
  }
  REQUIRE(run_farm(4, search_args({"--trace", resumed, "--cache", cache, "--resume"}), log) == 0);
  INFO(text_of(log));
  same_measurements(reference, read_t4(resumed));
  CHECK(read_kernel_tuner_cache(cache).entries.size() == 30);
}

TEST_CASE("a rank killed while mpirun keeps the job: rank 0 gives it up, logs rank_lost and finishes the search",
          "[farm][mpi]") {
  test::TempDir tmp;
  const std::string log = (tmp.path() / "log.txt").string();
  const std::string full = (tmp.path() / "full.t4.json").string(), killed = (tmp.path() / "killed.t4.json").string();
  const std::string events = (tmp.path() / "killed.jsonl").string();
  REQUIRE(run_farm(4, search_args({"--trace", full}), log) == 0);
  // Open MPI 4 ends the whole job when a rank dies, unless told not to; then rank 0 must not wait
  // on the dead rank (its sends do not block) and gives it up after the heartbeat timeout.
  ::setenv("OMPI_MCA_orte_abort_on_non_zero_status", "0", 1);
  const int rc = run_farm(4, search_args({"--trace", killed, "--events", events, "--farm-fault", "2:die:3"}), log);
  ::unsetenv("OMPI_MCA_orte_abort_on_non_zero_status");
  const std::string out = text_of(log);
  INFO(out);
  CHECK(rc != 0);  // mpirun still reports the rank that died
  CHECK_THAT(out, Catch::Contains("rank 2 lost: no heartbeat for 2 s while measuring"));
  same_measurements(read_t4(full), read_t4(killed));
  const std::vector<nlohmann::json> lines = checked_event_log(events);
  const auto lost = std::find_if(lines.begin(), lines.end(), [](const auto& j) { return j["event"] == "rank_lost"; });
  REQUIRE(lost != lines.end());
  CHECK((*lost)["rank"] == 2);
  CHECK((*lost)["went"] == "requeued");
  CHECK(lines.back()["event"] == "end");
}

TEST_CASE("a farm that cannot run ends every rank with the reason instead of waiting", "[farm][mpi]") {
  test::TempDir tmp;
  const std::string log = (tmp.path() / "log.txt").string();
  CHECK(run_farm(1, search_args({}), log) != 0);
  CHECK_THAT(text_of(log), Catch::Contains("rank 0: farm: no worker rank (start it with mpirun -np 2 or more)"));
  CHECK(run_farm(3, search_args({"--farm-fault", "two:die:1"}), log) != 0);
  CHECK_THAT(text_of(log), Catch::Contains("--farm-fault RANK") && Catch::Contains("two"));
}

TEST_CASE("GPU ranks that cannot measure say why, and rank 0 ends naming each rank's reason", "[farm][mpi]") {
  // Without a CUDA driver (CI) rank 1 refuses instead of saying hello, and with no rank able to
  // measure the search ends at once, non-zero, rather than waiting for work to be done. With a
  // GPU the rank measures: the search ends normally.
  test::TempDir tmp;
  const std::string log = (tmp.path() / "log.txt").string();
  const std::string kernel = (test::source_dir() / "examples" / "kernels" / "transpose.json").string();
  const int rc = run_farm(2, {"--kernel", kernel, "--strategy", "random", "--budget", "5", "--heartbeat-timeout", "5"}, log);
  const std::string out = text_of(log);
  INFO(out);
  if (out.find("no CUDA driver") == std::string::npos) {
    CHECK(rc == 0);
    CHECK_THAT(out, Catch::Contains("random over 1 worker ranks: 5 measurements"));
    return;
  }
  CHECK(rc != 0);
  CHECK_THAT(out, Catch::Contains("farm: rank 1 takes no work: no CUDA driver found"));
  CHECK_THAT(out, Catch::Contains("rank 0: farm: no worker rank can measure; rank 1: no CUDA driver found"));
}
