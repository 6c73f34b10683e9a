#include "runtime/static_feature_extraction.hpp"

#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "runtime/launch_geometry.hpp"
#include "runtime/static_features.hpp"

namespace gpuforecast {

namespace {

// The lines of the NVRTC log that say what went wrong (the whole log when none says "error"),
// at most a few hundred characters: enough to tell one failure from another in a table.
std::string compiler_message(const std::string& log) {
  std::istringstream in(log);
  std::string line, out;
  for (std::string l; std::getline(in, l);)
    if (l.find("error") != std::string::npos) out += (out.empty() ? "" : "\n") + l.substr(l.find_first_not_of(" \t"));
  if (out.empty()) out = log;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (out.size() > 600) out = out.substr(0, 600) + "...";
  return out.empty() ? "did not compile (NVRTC gave no message)" : out;
}

Features geometry_features(const KernelSpec& spec, const Config& config) {
  const LaunchGeometry g = compute_launch_geometry(spec, config);
  return {{"threads_per_block", static_cast<double>(g.threads_per_block())},
          {"grid_blocks", static_cast<double>(g.grid[0] * g.grid[1] * g.grid[2])},
          {"dynamic_shared_memory_bytes", static_cast<double>(g.shared_memory_bytes)}};
}

// Appends rows to the journal, one whole line per write, flushed: an interrupted run loses at
// most the line being written, which read_static_feature_table(path, true) then ignores.
class Journal {
 public:
  Journal(const std::string& path, const StaticFeatureTable& table) : m_path(path) {
    if (path.empty()) return;
    namespace fs = std::filesystem;
    std::error_code ec;
    const bool fresh = !fs::exists(path, ec) || fs::file_size(path, ec) == 0;
    if (!fresh) drop_torn_tail();
    m_file = std::fopen(path.c_str(), "ab");
    if (!m_file) throw input_error(path, "journal", "cannot be opened for appending");
    if (fresh) write(static_feature_table_head(table));
  }
  ~Journal() {
    if (m_file) std::fclose(m_file);
  }
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  void write(const std::string& text) {
    if (!m_file) return;
    if (std::fwrite(text.data(), 1, text.size(), m_file) != text.size() || std::fflush(m_file) != 0)
      throw input_error(m_path, "journal", "write failed (disk full?)");
  }

 private:
  // A line cut short by an interrupted run is cut off, so the next row starts on its own line.
  void drop_torn_tail() {
    std::ifstream in(m_path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.empty() || text.back() == '\n') return;
    const std::size_t keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
    std::filesystem::resize_file(m_path, keep);
  }

  std::string m_path;
  std::FILE* m_file = nullptr;
};

}  // namespace

const std::vector<std::string>& extracted_feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n{"threads_per_block", "grid_blocks", "dynamic_shared_memory_bytes"};
    for (const auto& s : static_feature_names()) n.push_back(s);
    return n;
  }();
  return names;
}

FeatureExtractionReport extract_static_features(NvrtcCompiler& compiler, const KernelSpec& spec,
                                                std::span<const Config> configs, const std::string& target,
                                                StaticFeatureTable& table, const FeatureExtractionOptions& options) {
  if (table.feature_names.empty() && table.size() == 0) table.feature_names = extracted_feature_names();
  if (table.feature_names != extracted_feature_names())
    throw invalid_argument_error(fmt::format("static features of {} ({}): the table's feature columns are not this "
                                             "version's; compute a new table",
                                             table.kernel, table.architecture));
  FeatureExtractionReport report;
  report.requested = configs.size();
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (table.find(configs[i])) ++report.already_known;
    else pending.push_back(i);
  }
  Journal journal(options.journal_path, table);
  const std::size_t nvrtc_before = compiler.nvrtc_invocations();
  const auto start = std::chrono::steady_clock::now();

  std::mutex mutex;
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  auto work = [&] {
    while (true) {
      const std::size_t n = next.fetch_add(1);
      if (n >= pending.size()) return;
      const Config& config = configs[pending[n]];
      Features features;
      std::string message;
      bool compiled = false;
      try {
        features = geometry_features(spec, config);
        const auto kernel = compiler.compile(spec, config, target);
        compiled = kernel->ok;
        if (compiled) {
          for (const auto& name : static_feature_names())
            if (auto it = kernel->features.find(name); it != kernel->features.end()) features[name] = it->second;
        } else {
          message = compiler_message(kernel->log);
        }
      } catch (const error& e) {  // a launch geometry or name expression that cannot be evaluated
        message = e.what();
      }
      std::lock_guard lock(mutex);
      try {
        table.add(config, compiled, features, message);
        journal.write(static_feature_table_line(table, *table.find(config)));
        ++report.compiled;
        if (!compiled) ++report.failed;
        if (options.on_progress) options.on_progress(report.already_known + report.compiled, report.requested);
      } catch (...) {
        if (!failure) failure = std::current_exception();
        next = pending.size();  // stop the others: the journal cannot take more
        return;
      }
    }
  };
  const std::size_t jobs = std::max<std::size_t>(1, std::min(options.jobs, pending.size()));
  if (jobs == 1) {
    work();
  } else {
    std::vector<std::thread> threads;
    for (std::size_t j = 0; j < jobs; ++j) threads.emplace_back(work);
    for (auto& t : threads) t.join();
  }
  if (failure) std::rethrow_exception(failure);
  report.nvrtc_compiles = compiler.nvrtc_invocations() - nvrtc_before;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace gpuforecast
