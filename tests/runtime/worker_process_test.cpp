// The spawner that forks benchmark workers: children come from a process forked before this
// one compiled with NVRTC (which, since CUDA 13, initialises the CUDA driver in the compiling
// process, and CUDA does not survive fork). No GPU needed.
#include "runtime/worker_process.hpp"

#include <catch2/catch.hpp>
#include <signal.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

#include "runtime/detail/driver_api.hpp"
#include "runtime/nvrtc_compiler.hpp"

using namespace gpuforecast;

namespace {
std::string who_am_i() { return std::to_string(::getpid()) + " " + std::to_string(::getppid()); }
std::string fails() { throw std::runtime_error("the probe's own error"); }
}  // namespace

TEST_CASE("children come from the spawner, not from the process that compiles", "[runtime][isolation]") {
  NvrtcCompiler compiler;  // starts the spawner before NVRTC runs here
  std::string why;
  const auto answer = detail::run_in_child(&who_am_i, 10, &why);
  REQUIRE(answer);
  INFO(*answer);
  const auto space = answer->find(' ');
  const long child = std::stol(answer->substr(0, space));
  const long parent = std::stol(answer->substr(space + 1));
  CHECK(child != ::getpid());
  CHECK(parent != ::getpid());  // forked by the spawner
  CHECK(parent != 1);           // and reaped by it

  // The same spawner every time, also after NVRTC has run in this process.
  const auto again = detail::run_in_child(&who_am_i, 10, &why);
  REQUIRE(again);
  CHECK(std::stol(again->substr(again->find(' ') + 1)) == parent);
}

TEST_CASE("a child's exception comes back as the reason", "[runtime][isolation]") {
  std::string why;
  CHECK_FALSE(detail::run_in_child(&fails, 10, &why));
  CHECK(why == "the probe's own error");
}

TEST_CASE("a spawned worker without a driver reports why, and is replaced for the next job", "[runtime][isolation]") {
  std::string why;
  if (driver::driver(&why) != nullptr) {
    WARN("a CUDA driver is present: the no-driver worker path is not exercised");
    return;
  }
  detail::WorkerProcess worker(0);
  detail::Job job;
  const Measurement m = worker.run(job, 10);
  CHECK(m.status == Status::runtime_failed);
  CHECK_THAT(m.log, Catch::Contains("no CUDA driver found"));
  const pid_t first = worker.pid();
  CHECK(first > 0);
  worker.run(job, 10);
  CHECK(worker.pid() == first);  // a failed job is a status, not a dead worker
}

TEST_CASE("a spawner killed from outside is replaced", "[runtime][isolation]") {
  std::string why;
  const auto before = detail::run_in_child(&who_am_i, 10, &why);
  REQUIRE(before);
  const pid_t spawner = static_cast<pid_t>(std::stol(before->substr(before->find(' ') + 1)));
  REQUIRE(::kill(spawner, SIGKILL) == 0);
  const auto after = detail::run_in_child(&who_am_i, 10, &why);
  INFO(why);
  REQUIRE(after);
  const pid_t replacement = static_cast<pid_t>(std::stol(after->substr(after->find(' ') + 1)));
  CHECK(replacement != spawner);
  CHECK(replacement != ::getpid());
}

namespace {
std::string which_driver() { return driver::test_driver_installed() ? "test table" : "real driver"; }
}  // namespace

// ctest runs each case in a process of its own, so here the spawner is forked with the table in.
TEST_CASE("a spawner forked while a test table was installed serves callers without one", "[runtime][isolation]") {
  static const driver::DriverApi table{};
  driver::set_driver_for_testing(&table);
  detail::start_worker_spawner();
  driver::set_driver_for_testing(nullptr);
  std::string why;
  const auto answer = detail::run_in_child(&which_driver, 10, &why);
  REQUIRE(answer);
  CHECK(*answer == "real driver");
}
