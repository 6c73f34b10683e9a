#include "runtime/nvrtc_compiler.hpp"

#include <fmt/core.h>
#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "gpuforecast/core/error.hpp"
#include "runtime/static_features.hpp"
#include "runtime/worker_process.hpp"

namespace gpuforecast {

namespace {
std::vector<std::string> default_include_paths() {
  if (const char* env = std::getenv("GPUFORECAST_CUDA_INCLUDE"); env && *env) return {env};
  std::vector<std::string> out;
  std::string dirs = GPUFORECAST_CUDA_INCLUDE_DIR;
  std::size_t s = 0;
  while (s <= dirs.size()) {
    std::size_t e = dirs.find(';', s);
    if (e == std::string::npos) e = dirs.size();
    if (e > s && std::filesystem::exists(dirs.substr(s, e - s))) out.push_back(dirs.substr(s, e - s));
    s = e + 1;
  }
  if (out.empty() && std::filesystem::exists("/usr/local/cuda/include")) out.push_back("/usr/local/cuda/include");
  return out;
}

// "gemm<{tile_m}, {tile_n}>" with the config's values; unknown names are an error of the spec.
std::string resolve_name_expression(const KernelSpec& spec, const Config& config) {
  if (spec.name_expression.empty()) return spec.kernel_name;
  std::string out;
  const std::string& e = spec.name_expression;
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (e[i] != '{') {
      out += e[i];
      continue;
    }
    const std::size_t close = e.find('}', i);
    if (close == std::string::npos)
      throw invalid_argument_error(fmt::format("{}: name expression \"{}\": unclosed '{{'", spec.benchmark_name, e));
    const std::string name = e.substr(i + 1, close - i - 1);
    const Value* v = config.find(name);
    if (!v)
      throw invalid_argument_error(
          fmt::format("{}: name expression \"{}\" names unknown parameter \"{}\"", spec.benchmark_name, e, name));
    out += v->to_string();
    i = close;
  }
  return out;
}

std::string nvrtc_message(nvrtcResult r) { return nvrtcGetErrorString(r); }
}  // namespace

struct NvrtcCompiler::Impl {
  CompilerOptions options;
  std::vector<std::string> include_paths;
  CompileCache cache;
  std::atomic<std::size_t> invocations{0};
  Impl(CompilerOptions o)
      : options(std::move(o)), cache(options.cache_directory, options.memory_cache_entries) {}
};

NvrtcCompiler::NvrtcCompiler(CompilerOptions options) : m_impl(std::make_unique<Impl>(std::move(options))) {
  detail::start_worker_spawner();  // before NVRTC, which initialises the CUDA driver in this process
  m_impl->include_paths = m_impl->options.include_paths.empty() ? default_include_paths() : m_impl->options.include_paths;
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) throw cuda_error("NVRTC is not usable (nvrtcVersion failed)");
}
NvrtcCompiler::~NvrtcCompiler() = default;

CompileCache& NvrtcCompiler::cache() noexcept { return m_impl->cache; }
std::size_t NvrtcCompiler::nvrtc_invocations() const noexcept { return m_impl->invocations.load(); }

std::string NvrtcCompiler::nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return fmt::format("{}.{}", major, minor);
}

std::vector<int> NvrtcCompiler::supported_architectures() {
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return {};
  std::vector<int> archs(static_cast<std::size_t>(n));
  nvrtcGetSupportedArchs(archs.data());
  std::sort(archs.begin(), archs.end());
  return archs;
}

std::string NvrtcCompiler::target_for(const Device& device) {
  if (device.compute_capability_major <= 0)
    throw invalid_argument_error(fmt::format("device \"{}\" has no CUDA compute capability", device.name));
  const int cc = device.compute_capability_major * 10 + device.compute_capability_minor;
  const auto archs = supported_architectures();
  if (archs.empty()) throw cuda_error("NVRTC reports no supported architectures");
  if (std::find(archs.begin(), archs.end(), cc) != archs.end()) return fmt::format("sm_{}", cc);
  if (cc > archs.back()) return fmt::format("compute_{}", archs.back());
  if (cc < archs.front())
    throw invalid_argument_error(fmt::format("device \"{}\" (sm_{}) is older than NVRTC {} supports (sm_{} and newer)",
                                             device.name, cc, nvrtc_version(), archs.front()));
  // Between known architectures (e.g. a minor revision NVRTC lacks): PTX for the closest older.
  int best = archs.front();
  for (int a : archs)
    if (a <= cc) best = a;
  return fmt::format("compute_{}", best);
}

std::shared_ptr<const CompiledKernel> NvrtcCompiler::compile(const KernelSpec& spec, const Config& config,
                                                             const Device& device) {
  return compile(spec, config, target_for(device));
}

std::shared_ptr<const CompiledKernel> NvrtcCompiler::compile(const Candidate& candidate) {
  if (!candidate.spec)
    throw invalid_argument_error(fmt::format("{}: no KernelSpec (source) to compile", candidate.describe()));
  if (!candidate.device) throw invalid_argument_error(fmt::format("{}: no device to compile for", candidate.describe()));
  return compile(*candidate.spec, candidate.config, *candidate.device);
}

bool NvrtcCompiler::attach_features(Candidate& candidate) {
  auto k = compile(candidate);
  if (!k->ok) return false;
  for (const auto& [name, v] : k->features) candidate.features[name] = v;
  return true;
}

std::shared_ptr<const CompiledKernel> NvrtcCompiler::compile(const KernelSpec& spec, const Config& config,
                                                             const std::string& target) {
  const std::string name_expression = resolve_name_expression(spec, config);
  const bool cubin = target.rfind("sm_", 0) == 0;
  std::vector<std::string> options;
  options.push_back("--gpu-architecture=" + target);
  for (const auto& p : m_impl->include_paths) options.push_back("--include-path=" + p);
  if (m_impl->options.resource_report && cubin) options.push_back("-Xptxas=-v");
  for (const auto& o : spec.compiler_options) options.push_back(o);
  for (const auto& o : m_impl->options.extra_options) options.push_back(o);
  options.push_back("-Dkernel_tuner=1");
  for (std::size_t i = 0; i < config.size(); ++i)
    options.push_back(fmt::format("-D{}={}", config.names()[i], config[i].to_string()));

  std::vector<std::string> key_parts{"nvrtc", nvrtc_version(), spec.source, name_expression, target};
  key_parts.insert(key_parts.end(), options.begin(), options.end());
  const std::string key = content_key(key_parts);
  if (auto hit = m_impl->cache.find(key)) return hit;

  auto result = std::make_shared<CompiledKernel>();
  result->key = key;
  result->target = target;
  result->is_cubin = cubin;
  const auto t0 = std::chrono::steady_clock::now();
  auto finish = [&]() -> std::shared_ptr<const CompiledKernel> {
    result->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::shared_ptr<const CompiledKernel> shared = result;
    // Failures are cached too: a config that does not compile does not compile twice.
    m_impl->cache.insert(key, shared);
    return shared;
  };
  if (spec.source.empty()) {
    result->log = fmt::format("{}: no CUDA source (KernelFile \"{}\" not loaded)", spec.benchmark_name, spec.kernel_file);
    return finish();
  }
  ++m_impl->invocations;
  nvrtcProgram prog = nullptr;
  const std::string file = spec.kernel_file.empty() ? spec.kernel_name + ".cu" : spec.kernel_file;
  if (auto r = nvrtcCreateProgram(&prog, spec.source.c_str(), file.c_str(), 0, nullptr, nullptr); r != NVRTC_SUCCESS)
    throw cuda_error("nvrtcCreateProgram: " + nvrtc_message(r));
  struct Guard {
    nvrtcProgram& p;
    ~Guard() { nvrtcDestroyProgram(&p); }
  } guard{prog};
  if (auto r = nvrtcAddNameExpression(prog, name_expression.c_str()); r != NVRTC_SUCCESS) {
    result->log = fmt::format("nvrtcAddNameExpression(\"{}\"): {}", name_expression, nvrtc_message(r));
    return finish();
  }
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const nvrtcResult cr = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size) nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();
  result->log = std::move(log);
  if (cr != NVRTC_SUCCESS) {
    result->log = fmt::format("NVRTC: {} for {} [{}] ({})\n{}", nvrtc_message(cr), spec.kernel_name,
                              config.to_string(), target, result->log);
    return finish();
  }
  const char* lowered = nullptr;
  if (nvrtcGetLoweredName(prog, name_expression.c_str(), &lowered) != NVRTC_SUCCESS || !lowered) {
    result->log += fmt::format("\nentry point \"{}\" not found in the program", name_expression);
    return finish();
  }
  result->lowered_name = lowered;
  std::size_t ptx_size = 0;
  if (nvrtcGetPTXSize(prog, &ptx_size) == NVRTC_SUCCESS && ptx_size > 0) {
    result->ptx.resize(ptx_size);
    nvrtcGetPTX(prog, result->ptx.data());
    while (!result->ptx.empty() && result->ptx.back() == '\0') result->ptx.pop_back();
  }
  if (cubin) {
    std::size_t n = 0;
    if (auto r = nvrtcGetCUBINSize(prog, &n); r != NVRTC_SUCCESS || n == 0) {
      result->log += "\nno cubin produced: " + nvrtc_message(r);
      return finish();
    }
    result->image.resize(n);
    nvrtcGetCUBIN(prog, result->image.data());
  } else {
    result->image = result->ptx;
    result->image.push_back('\0');  // cuModuleLoadData wants NUL-terminated PTX
  }
  result->features = parse_ptxas_report(result->log, result->lowered_name);
  for (const auto& [k, v] : ptx_instruction_mix(result->ptx)) result->features[k] = v;
  result->ok = true;
  return finish();
}

}  // namespace gpuforecast
