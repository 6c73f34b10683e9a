// The table of surrogate kinds (surrogate_kind.hpp). The library's own kinds come from
// detail::builtin_surrogate_kinds() (registry.cpp) when the table is first used, so there is no
// static-initialisation order to get wrong, in this library or in a plugin that registers itself.
#include "gpuforecast/surrogate/registry.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <optional>

#include "gpuforecast/core/error.hpp"
#include "surrogate/surrogate_kind_table.hpp"

namespace gpuforecast {

namespace {
struct Table {
  std::mutex mutex;
  std::vector<SurrogateKind> kinds;
};

Table& table() {
  static Table t{{}, detail::builtin_surrogate_kinds()};
  return t;
}

bool reserved(std::string_view name) { return name == "default" || name.rfind("ensemble", 0) == 0; }
}  // namespace

void register_surrogate_kind(SurrogateKind kind) {
  const auto bad = [&](std::string_view why) {
    throw invalid_argument_error(fmt::format("register_surrogate_kind(\"{}\"): {}", kind.name, why));
  };
  if (kind.name.empty()) bad("the name is empty");
  if (!std::all_of(kind.name.begin(), kind.name.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '_' || c == '-' || c == '.';
      }))
    bad("names are letters, digits, '_', '-' and '.'");
  if (reserved(kind.name)) bad("the name is reserved (\"default\" and ensemble names are the library's)");
  if (!kind.make) bad("no factory (make)");
  if (!kind.load) bad("no loader (load)");
  auto& t = table();
  const std::lock_guard lock(t.mutex);
  if (std::any_of(t.kinds.begin(), t.kinds.end(), [&](const SurrogateKind& k) { return k.name == kind.name; }))
    bad("a surrogate kind of that name is registered already");
  t.kinds.push_back(std::move(kind));
}

bool has_surrogate_kind(std::string_view name) { return detail::find_surrogate_kind(name).has_value(); }

std::vector<std::string> registered_surrogate_kinds() {
  auto& t = table();
  const std::lock_guard lock(t.mutex);
  std::vector<std::string> names;
  for (const auto& k : t.kinds) names.push_back(k.name);
  return names;
}

namespace detail {
std::optional<SurrogateKind> find_surrogate_kind(std::string_view name) {
  auto& t = table();
  const std::lock_guard lock(t.mutex);
  for (const auto& k : t.kinds)
    if (k.name == name) return k;
  return std::nullopt;
}
}  // namespace detail

}  // namespace gpuforecast
