// gpuforecast: forecast GPU kernel runtimes, calibrate, search. Subcommands live in commands/.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <exception>

#include "command_registry.hpp"
#include "interrupt.hpp"
#include "numeric_options.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gpuforecast: forecast GPU kernel runtimes, know when to trust the forecast, "
               "measure when not"};
  app.set_version_flag("--version", gpuforecast::version());
  app.require_subcommand(1);
  auto& registry = gpuforecast::cli::command_registry();
  std::sort(registry.begin(), registry.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (const auto& command : registry) command.add(app);
  gpuforecast::cli::check_numeric_options(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version exit 0; a command line that does not parse is a usage error (2).
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const gpuforecast::error& e) {
    fmt::print(stderr, "gpuforecast: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpuforecast: unexpected error: {}\n", e.what());
    return 2;
  }
  if (const int signal = gpuforecast::cli::interrupted_by()) {
    fmt::print(stderr, "gpuforecast: interrupted by signal {}: what was measured before it is kept\n", signal);
    return 128 + signal;
  }
  return 0;
}
