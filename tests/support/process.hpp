#pragma once
// For tests that run the project's programs: start one with its output in a log file, and read
// a file whole.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace gpuforecast::test {

// Starts argv[0] (a path) with these arguments, stdout and stderr into `log`; returns its process id.
inline pid_t spawn_with_log(std::vector<std::string> argv, const std::string& log) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &files, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  INFO("cannot start " << argv[0]);
  REQUIRE(rc == 0);
  return pid;
}

// Waits for `pid` at most `seconds`; past that it is killed (SIGKILL) and the wait says so in a
// warning, so that a program that never ends fails its test instead of eating the CI's time.
// Returns the exit status, 128 + the signal when it was killed.
inline int wait_with_deadline(pid_t pid, double seconds, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    REQUIRE(done >= 0);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      WARN(what << " did not end within " << seconds << " s: killed");
      ::kill(pid, SIGKILL);
      REQUIRE(waitpid(pid, &status, 0) == pid);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline std::string text_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace gpuforecast::test
