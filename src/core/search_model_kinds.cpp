// The search-model kinds registered by name (core/any_selective_predictor.hpp).
#include <fmt/core.h>

#include <map>
#include <mutex>

#include "gpuforecast/core/any_selective_predictor.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {
struct Kinds {
  std::mutex mutex;
  // std::map: a factory's address stays valid while others are registered.
  std::map<std::string, SearchModelFactory, std::less<>> by_name;
};
Kinds& kinds() {
  static Kinds k;
  return k;
}
}  // namespace

void register_search_model_kind(std::string name, SearchModelFactory make) {
  if (name.empty()) throw invalid_argument_error("register_search_model_kind: the name is empty");
  if (!make) throw invalid_argument_error(fmt::format("register_search_model_kind(\"{}\"): no factory", name));
  Kinds& k = kinds();
  const std::lock_guard lock(k.mutex);
  if (k.by_name.contains(name))
    throw invalid_argument_error(fmt::format("register_search_model_kind(\"{}\"): registered already", name));
  k.by_name.emplace(std::move(name), std::move(make));
}

const SearchModelFactory* find_search_model_kind(std::string_view name) {
  Kinds& k = kinds();
  const std::lock_guard lock(k.mutex);
  const auto it = k.by_name.find(name);
  return it == k.by_name.end() ? nullptr : &it->second;
}

}  // namespace gpuforecast
