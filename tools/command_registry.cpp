#include "command_registry.hpp"

namespace gpuforecast::cli {
std::vector<CommandRegistration>& command_registry() {
  static std::vector<CommandRegistration> registry;
  return registry;
}
}  // namespace gpuforecast::cli
