#include "core/warning.hpp"

#include <cstdio>
#include <mutex>

namespace gpuforecast {

namespace {

std::mutex& handler_mutex() {
  static std::mutex m;
  return m;
}

WarningHandler& current_handler() {
  static WarningHandler handler;
  return handler;
}

}  // namespace

WarningHandler set_warning_handler(WarningHandler handler) {
  std::lock_guard lock(handler_mutex());
  std::swap(current_handler(), handler);
  return handler;
}

void warn(const std::string& message) {
  std::lock_guard lock(handler_mutex());
  if (const auto& handler = current_handler()) {
    handler(message);
    return;
  }
  std::fprintf(stderr, "gpuforecast: warning: %s\n", message.c_str());
}

}  // namespace gpuforecast
