#pragma once
// Subcommands register themselves from their own file, so adding one touches nothing else.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace gpuforecast::cli {

// Adds a subcommand to `app`; the callback it installs runs the command and throws
// gpuforecast::error on failure (main() prints it and exits 1).
using CommandFactory = std::function<void(CLI::App& app)>;

struct CommandRegistration {
  std::string name;
  CommandFactory add;
};

std::vector<CommandRegistration>& command_registry();

struct RegisterCommand {
  RegisterCommand(std::string name, CommandFactory add) {
    command_registry().push_back({std::move(name), std::move(add)});
  }
};

}  // namespace gpuforecast::cli
