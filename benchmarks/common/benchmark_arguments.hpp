#pragma once
// A benchmark's command line: "--name VALUE" options and "--name" switches, each declared once
// with where it goes, applied in the order given. An unknown option, a missing value or a number
// that does not parse is an invalid_argument_error that names the option; --help and -h print the
// usage text instead of running.
//
//   bench::BenchmarkArguments args("usage: pairs [--seeds N] ...\n");
//   args.number("--seeds", a.seeds).list("--surrogates", a.surrogates).flag("--quick", [&] { ... });
//   if (!args.parse(argc, argv)) std::exit(0);  // --help was shown
#include <fmt/core.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/parse_number.hpp"
#include "common/split_list.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast::bench {

class BenchmarkArguments {
 public:
  // The text --help prints, line breaks included.
  explicit BenchmarkArguments(std::string usage) : m_usage(std::move(usage)) {}

  // --name VALUE, handed to set with the option's name (for the errors it raises).
  BenchmarkArguments& option(const std::string& name,
                             std::function<void(const std::string& name, const std::string& value)> set) {
    m_options[name] = {true, std::move(set)};
    return *this;
  }
  // --name without a value.
  BenchmarkArguments& flag(const std::string& name, std::function<void()> set) {
    m_options[name] = {false, [set = std::move(set)](const std::string&, const std::string&) { set(); }};
    return *this;
  }

  // --name TEXT into a string or a path.
  template <class T>
  BenchmarkArguments& text(const std::string& name, T& out) {
    return option(name, [&out](const std::string&, const std::string& v) { out = v; });
  }
  // --name N, parsed whole (detail::parse_number).
  template <class T>
  BenchmarkArguments& number(const std::string& name, T& out) {
    return option(name, [&out](const std::string& n, const std::string& v) { out = detail::parse_number<T>(n, v); });
  }
  // --name a,b,c replaces the list (detail::split_list: commas inside parentheses do not split).
  BenchmarkArguments& list(const std::string& name, std::vector<std::string>& out) {
    return option(name, [&out](const std::string&, const std::string& v) { out = detail::split_list(v); });
  }
  // --name 1,2,3 replaces the list with the numbers.
  template <class T>
  BenchmarkArguments& number_list(const std::string& name, std::vector<T>& out) {
    return option(name, [&out](const std::string& n, const std::string& v) {
      out.clear();
      for (const auto& item : detail::split_list(v)) out.push_back(detail::parse_number<T>(n, item));
    });
  }

  // Applies argv[1..argc) in order. False when --help or -h was given: the usage is printed to
  // stdout and the options after it are not read.
  [[nodiscard]] bool parse(int argc, const char* const* argv) const {
    for (int i = 1; i < argc; ++i) {
      const std::string k = argv[i];
      if (k == "--help" || k == "-h") {
        fmt::print("{}", m_usage);
        return false;
      }
      const auto it = m_options.find(k);
      if (it == m_options.end()) throw invalid_argument_error("unknown option " + k);
      std::string value;
      if (it->second.takes_value) {
        if (i + 1 >= argc) throw invalid_argument_error(k + " needs a value");
        value = argv[++i];
      }
      it->second.set(k, value);
    }
    return true;
  }

 private:
  struct Option {
    bool takes_value = true;
    std::function<void(const std::string&, const std::string&)> set;
  };
  std::string m_usage;
  std::map<std::string, Option> m_options;
};

}  // namespace gpuforecast::bench
