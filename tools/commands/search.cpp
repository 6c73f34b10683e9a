// gpuforecast search: run search strategies on replayed data (--replay), live on a GPU
// (--kernel T1.json) or on an MPI farm (--mpi), and report what they found. The options and
// the three ways of searching live in tools/search/; each builds a Plan and calls run().
#include <optional>

#include "command_registry.hpp"
#include "gpuforecast/core/error.hpp"
#include "interrupt.hpp"
#include "search/search_args.hpp"

namespace {

gpuforecast::cli::RegisterCommand reg{"search", [](CLI::App& app) {
  using namespace gpuforecast::cli;
  auto args = std::make_shared<SearchArgs>();
  auto* cmd = app.add_subcommand("search", "search a tuning space: replayed data (--replay) or live on a GPU (--kernel)");
  add_search_options(*cmd, *args);
  cmd->callback([args] {
    if (args->list_options) return list_strategy_options();
    // Not under mpirun: a worker rank that caught the signal mpirun forwards would keep waiting.
    std::optional<InterruptScope> interrupts;
    if (!args->mpi) interrupts.emplace();
    check_search_args(*args);
    if (args->mpi) return run_farm(*args);
    if (!args->replay.empty()) return run_replay(*args);
    if (!args->kernel.empty()) return run_live(*args);
    throw gpuforecast::invalid_argument_error("gpuforecast search: give --replay FILE or --kernel T1.json");
  });
}};

}  // namespace
