// gpuforecast features DATA_FILE... --kernel T1.json --output TABLE: the static features of the
// configurations in measurement files of one kernel, compiled with NVRTC for the architecture of
// the files' GPU (docs/features.md). Resumable: rows go to TABLE.partial as they come, and a run
// over an existing TABLE or journal compiles only what they lack.
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "command_registry.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "data/static_feature_table.hpp"
#include "gpuforecast/data/community_formats.hpp"
#ifdef GPUFORECAST_HAVE_CUDA_RUNTIME
#include "runtime/nvrtc_compiler.hpp"
#include "runtime/static_feature_extraction.hpp"
#endif

namespace {
using namespace gpuforecast;

struct FeaturesArgs {
  std::vector<std::string> data_files;
  std::string kernel;
  std::string source;
  std::vector<std::string> include_dirs;
  std::string arch;
  std::string output;
  std::size_t sample = 0;
  std::uint64_t seed = 1;
  std::size_t jobs = 1;
  std::string cache_dir;
};

#ifdef GPUFORECAST_HAVE_CUDA_RUNTIME
// Every configuration of the files, once, in the order first seen.
struct Population {
  std::vector<std::string> parameters;
  std::vector<Config> configs;
  std::vector<std::string> sources;  // file names
  std::string kernel;
  std::string target;
};

Population read_population(const FeaturesArgs& a) {
  Population p;
  std::set<std::string> seen;
  for (const auto& path : a.data_files) {
    const SpaceData s = load_space(path);
    std::vector<std::string> names;
    for (const auto& parameter : s.space.parameters()) names.push_back(parameter.name);
    if (p.sources.empty()) {
      p.parameters = names;
      p.kernel = s.kernel;
    } else if (names != p.parameters) {
      throw invalid_argument_error(
          fmt::format("{}: its parameters are not those of {}: one kernel per table", path, a.data_files.front()));
    }
    p.sources.push_back(std::filesystem::path(path).filename().string());
    if (a.arch.empty()) {
      if (!s.device || s.device->compute_capability_major == 0)
        throw invalid_argument_error(
            fmt::format("{}: device \"{}\" has no CUDA compute capability in the device table: give --arch (features "
                        "are computed for NVIDIA GPUs only; there is no HIP compiler here)",
                        path, s.device ? s.device->name : "?"));
      const std::string target = NvrtcCompiler::target_for(*s.device);
      if (!p.target.empty() && target != p.target)
        throw invalid_argument_error(fmt::format("{}: compiles for {}, {} for {}: one architecture per table", path, target,
                                                 a.data_files.front(), p.target));
      p.target = target;
    }
    for (const auto& o : s.observations)
      if (seen.insert(o.candidate.config.to_string()).second) p.configs.push_back(o.candidate.config);
  }
  if (!a.arch.empty()) p.target = a.arch;
  return p;
}

// The first `n` of a seeded permutation (Fisher-Yates with SplitMix64): the same seed gives the
// same sample on every platform, and a larger n extends a smaller one.
std::vector<Config> seeded_sample(std::vector<Config> configs, std::size_t n, std::uint64_t seed) {
  std::uint64_t state = seed;
  auto next = [&] {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  n = std::min(n, configs.size());
  for (std::size_t i = 0; i < n; ++i) std::swap(configs[i], configs[i + next() % (configs.size() - i)]);
  configs.resize(n);
  return configs;
}

// The table so far: the finished output, then what an interrupted run left in the journal.
// `stored_sample`: the sample size the finished output states (0 without one).
StaticFeatureTable table_so_far(const FeaturesArgs& a, const Population& p, const std::string& journal,
                                std::size_t& stored_sample) {
  StaticFeatureTable t;
  t.parameters = p.parameters;
  auto merge = [&](const StaticFeatureTable& earlier, const std::string& path) {
    if (earlier.architecture != p.target || earlier.parameters != p.parameters)
      throw invalid_argument_error(fmt::format("{}: a table for {} of other parameters or another architecture than {} "
                                               "of these files: give another --output",
                                               path, earlier.architecture, p.target));
    if (earlier.sample_seed != a.seed && earlier.sample_size < earlier.population)
      throw invalid_argument_error(fmt::format("{}: a sample drawn with seed {}, not {}: give --seed {} to extend it",
                                               path, earlier.sample_seed, a.seed, earlier.sample_seed));
    if (t.feature_names.empty()) t.feature_names = earlier.feature_names;
    for (const auto& row : earlier.rows()) t.add(earlier.config_of(row), row.compiled, earlier.features_of(row), row.error);
  };
  stored_sample = 0;
  if (std::filesystem::exists(a.output)) {
    const StaticFeatureTable stored = read_static_feature_table(a.output);
    stored_sample = stored.sample_size;
    merge(stored, a.output);
  }
  if (std::filesystem::exists(journal)) merge(read_static_feature_table(journal, true), journal);
  return t;
}

void features(const FeaturesArgs& a) {
  const Population population = read_population(a);
  T1File t1 = read_t1(a.kernel);
  if (!a.source.empty()) {
    std::ifstream in(a.source, std::ios::binary);
    if (!in) throw input_error(a.source, "file", "cannot be read (--source)");
    std::ostringstream text;
    text << in.rdbuf();
    t1.kernel.source = text.str();
  }
  if (t1.kernel.source.empty())
    throw input_error(a.kernel, "KernelFile", fmt::format("\"{}\" is not beside the spec: give --source", t1.kernel.kernel_file));

  const std::string journal = a.output + ".partial";
  if (const auto folder = std::filesystem::path(a.output).parent_path(); !folder.empty())
    std::filesystem::create_directories(folder);
  std::size_t stored_sample = 0;
  StaticFeatureTable table = table_so_far(a, population, journal, stored_sample);
  // The first `size` of the seeded permutation: a stored table is extended, never shrunk.
  const std::size_t asked = a.sample == 0 ? population.configs.size() : std::min(a.sample, population.configs.size());
  const std::size_t size = std::max(asked, stored_sample);
  const std::vector<Config> sample = seeded_sample(population.configs, size, a.seed);
  table.kernel = population.kernel;
  table.architecture = population.target;
  table.compiler = "NVRTC " + NvrtcCompiler::nvrtc_version();
  table.parameters = population.parameters;
  table.sources = population.sources;
  table.population = population.configs.size();
  table.sample_size = size;
  table.sample_seed = a.seed;

  CompilerOptions options;
  options.cache_directory = a.cache_dir;
  for (const auto& dir : a.include_dirs) options.extra_options.push_back("-I" + std::filesystem::absolute(dir).string());
  NvrtcCompiler compiler(options);
  fmt::print("{} for {}: {} of {} configurations (seed {}), {} already in {}; {} jobs\n", table.kernel, table.architecture,
             sample.size(), population.configs.size(), a.seed, table.size(), a.output, a.jobs);
  std::fflush(stdout);  // before the progress lines on stderr
  std::size_t last_percent = 0;
  FeatureExtractionOptions run;
  run.jobs = a.jobs;
  run.journal_path = journal;
  run.on_progress = [&](std::size_t done, std::size_t total) {
    const std::size_t percent = total ? done * 100 / total : 100;
    if (percent >= last_percent + 10) {
      last_percent = percent - percent % 10;
      fmt::print(stderr, "  {}% ({} of {})\n", last_percent, done, total);
    }
  };
  const FeatureExtractionReport r = extract_static_features(compiler, t1.kernel, sample, table.architecture, table, run);

  // The table is the sample, in its order, whatever order the threads finished in; what the
  // journal holds beyond it (a larger run that was interrupted) stays there for a larger one.
  StaticFeatureTable ordered = table.empty_copy();
  for (const auto& c : sample)
    if (const auto* row = table.find(c)) ordered.add(c, row->compiled, table.features_of(*row), row->error);
  write_static_feature_table(ordered, a.output);
  if (table.size() == ordered.size())
    std::filesystem::remove(journal);
  else
    fmt::print("{} results beyond this sample stay in {} for a larger one\n", table.size() - ordered.size(), journal);
  fmt::print("{} configurations compiled in {:.1f} s ({:.2f} per second), {} of them from the compile cache, {} failed "
             "to compile; {} were already known\n",
             r.compiled, r.seconds, r.configurations_per_second(), r.compiled - r.nvrtc_compiles, r.failed,
             r.already_known);
  fmt::print("wrote {}: {} configurations, {} compiled\n", a.output, ordered.size(), ordered.compiled_count());
}
#endif

const gpuforecast::cli::RegisterCommand reg_features{"features", [](CLI::App& app) {
  auto* cmd = app.add_subcommand("features", "Compile the configurations of measurement files with NVRTC and store their "
                                             "static features (registers, shared memory, PTX mix, launch geometry)");
  auto args = std::make_shared<FeaturesArgs>();
  cmd->add_option("data", args->data_files, "Kernel Tuner cache files of one kernel (their GPUs give the architecture)")
      ->required();
  cmd->add_option("--kernel", args->kernel, "T1 spec (.json) of the kernel: entry point, launch geometry, options")
      ->required();
  cmd->add_option("--source", args->source, "the kernel source, when it is not the spec's KernelFile");
  cmd->add_option("--include", args->include_dirs, "a folder the source #includes from (repeatable)");
  cmd->add_option("--arch", args->arch, "target (sm_XY); default: the architecture of the files' GPU");
  cmd->add_option("--output", args->output, "the table (.csv or .csv.gz); extended when it exists")->required();
  cmd->add_option("--sample", args->sample, "this many configurations drawn with --seed (default: all)");
  cmd->add_option("--seed", args->seed, "seed of the sample")->capture_default_str();
  cmd->add_option("--jobs", args->jobs, "compiling threads")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--cache-dir", args->cache_dir, "keep compiled kernels here too (shared with compile and measure)");
#ifdef GPUFORECAST_HAVE_CUDA_RUNTIME
  cmd->callback([args] { features(*args); });
#else
  cmd->callback([] {
    throw cuda_error("this gpuforecast was built without the CUDA runtime (no CUDA toolkit at build time): "
                     "features need NVRTC");
  });
#endif
}};

}  // namespace
