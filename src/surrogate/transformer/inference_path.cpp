// The module-path switch (inference_path.hpp): no libtorch here.
#include "surrogate/transformer/inference_path.hpp"

#include <atomic>
#include <cstdlib>
#include <string_view>

namespace gpuforecast::detail::transformer {

namespace {
std::atomic<bool> g_module_path{false};
}  // namespace

void set_module_path(bool on) noexcept { g_module_path.store(on, std::memory_order_relaxed); }

bool module_path() noexcept {
  static const bool from_env = [] {
    const char* e = std::getenv("GPUFORECAST_TRANSFORMER_MODULE_PATH");
    return e != nullptr && *e != '\0' && std::string_view(e) != "0";
  }();
  return from_env || g_module_path.load(std::memory_order_relaxed);
}

}  // namespace gpuforecast::detail::transformer
