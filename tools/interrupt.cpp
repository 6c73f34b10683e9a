#include "interrupt.hpp"

#include <atomic>

namespace gpuforecast::cli {

namespace {

std::atomic<int> g_signal{0};  // lock-free, so the handler may write it
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void remember_signal(int signal) { g_signal.store(signal); }

struct sigaction handler() {
  struct sigaction a {};
  a.sa_handler = remember_signal;
  sigemptyset(&a.sa_mask);
  a.sa_flags = SA_RESETHAND;  // the second signal takes the default action: the program ends
  return a;
}

}  // namespace

InterruptScope::InterruptScope() {
  const struct sigaction a = handler();
  sigaction(SIGINT, &a, &m_old_int);
  sigaction(SIGTERM, &a, &m_old_term);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &m_old_int, nullptr);
  sigaction(SIGTERM, &m_old_term, nullptr);
}

int interrupted_by() noexcept { return g_signal.load(); }

std::string interruption_reason() {
  const int s = interrupted_by();
  if (s == 0) return "stopped by an observer";
  const char* name = s == SIGINT ? "SIGINT" : s == SIGTERM ? "SIGTERM" : "a signal";
  return "interrupted by " + std::string(name) + " (signal " + std::to_string(s) + ")";
}

}  // namespace gpuforecast::cli
