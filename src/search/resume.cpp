#include "search/resume.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "gpuforecast/core/error.hpp"
#include "search/cache_writer.hpp"

namespace gpuforecast {

namespace {
std::string values_text(const std::vector<Value>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ", ") + v.to_string();
  return "[" + out + "]";
}
}  // namespace

CacheFile read_search_cache(const std::string& path, const TuningSpace& space, const Candidate& prototype) {
  CacheFile file = read_kernel_tuner_cache(path);
  const CacheFile expected = search_cache_header(space, prototype);
  const auto mismatch = [&](const std::string& field, const std::string& found, const std::string& wanted) {
    throw input_error(path, field,
                      fmt::format("this cache belongs to another search: it has {}, this search has {} (give another "
                                  "--cache file, or drop --resume to start it afresh)",
                                  found, wanted));
  };
  if (file.kernel_name != expected.kernel_name)
    mismatch("kernel_name", fmt::format("kernel \"{}\"", file.kernel_name), fmt::format("\"{}\"", expected.kernel_name));
  if (file.device_name != expected.device_name)
    mismatch("device_name", fmt::format("device \"{}\"", file.device_name), fmt::format("\"{}\"", expected.device_name));
  if (file.problem_size != expected.problem_size)
    mismatch("problem_size", fmt::format("problem size [{}]", fmt::join(file.problem_size, ", ")),
             fmt::format("[{}]", fmt::join(expected.problem_size, ", ")));
  const auto& have = file.space.parameters();
  const auto& want = expected.space.parameters();
  std::vector<std::string> have_names, want_names;
  for (const auto& p : have) have_names.push_back(p.name);
  for (const auto& p : want) want_names.push_back(p.name);
  if (have_names != want_names)
    mismatch("tune_params_keys", fmt::format("parameters [{}]", fmt::join(have_names, ", ")),
             fmt::format("[{}]", fmt::join(want_names, ", ")));
  for (std::size_t i = 0; i < have.size(); ++i)
    if (have[i].values != want[i].values)
      mismatch(fmt::format("tune_params[\"{}\"]", have[i].name), fmt::format("values {}", values_text(have[i].values)),
               values_text(want[i].values));
  return file;
}

}  // namespace gpuforecast
