#include "gpuforecast/data/community_formats.hpp"

#include <fmt/core.h>

#include <charconv>
#include <optional>
#include <regex>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/file_io.hpp"
#include "data/json_util.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/space/expression.hpp"

namespace gpuforecast {

namespace {

using ojson = nlohmann::ordered_json;

class T1Reader {
 public:
  explicit T1Reader(const std::string& path) : m_path(path) {}

  T1File read(std::string_view text) {
    const ojson doc = detail::data::parse_json_document(text, m_path);
    if (!doc.is_object()) fail("", "a T1 file is a JSON object");
    T1File out;
    out.path = m_path;
    const ojson& space = member(doc, "ConfigurationSpace", "", true);
    const ojson& spec = member(doc, "KernelSpecification", "", true);

    // Parameters.
    const ojson& tps = member(space, "TuningParameters", "ConfigurationSpace", false);
    std::vector<Parameter> params;
    for (std::size_t i = 0; i < tps.size(); ++i) {
      const std::string at = fmt::format("ConfigurationSpace.TuningParameters[{}]", i);
      const ojson& p = tps[i];
      if (!p.is_object()) fail(at, "a tuning parameter is an object");
      Parameter param;
      param.name = string_of(member(p, "Name", at, false), at + ".Name");
      const std::string type = p.contains("Type") ? string_of(p["Type"], at + ".Type") : "";
      param.values = values_of(member(p, "Values", at, false), type, at + ".Values");
      if (param.values.empty()) fail(at + ".Values", "a parameter needs at least one value");
      params.push_back(std::move(param));
    }
    std::vector<std::string> names;
    for (const auto& p : params) names.push_back(p.name);

    // Conditions: compiled one by one first, so an error names the condition.
    std::vector<std::string> constraints;
    if (auto it = space.find("Conditions"); it != space.end() && !it->is_null()) {
      if (!it->is_array()) fail("ConfigurationSpace.Conditions", "must be a list");
      for (std::size_t i = 0; i < it->size(); ++i) {
        const std::string at = fmt::format("ConfigurationSpace.Conditions[{}]", i);
        const ojson& c = (*it)[i];
        const std::string expr = c.is_string() ? c.get<std::string>()
                                               : string_of(member(c, "Expression", at, false), at + ".Expression");
        try {
          (void)Expression::compile(expr, names);
        } catch (const expression_error& e) {
          fail(at + ".Expression", e.what());
        }
        constraints.push_back(expr);
      }
    }
    try {
      out.space = TuningSpace(std::move(params), std::move(constraints));
    } catch (const expression_error& e) {
      fail("ConfigurationSpace.Conditions", e.what());
    } catch (const input_error&) {
      throw;
    } catch (const error& e) {
      fail("ConfigurationSpace.TuningParameters", e.what());  // e.g. a name given twice
    }

    // Kernel specification.
    KernelSpec& k = out.kernel;
    const std::string ks = "KernelSpecification";
    if (auto g = doc.find("General"); g != doc.end() && g->is_object() && g->contains("BenchmarkName"))
      k.benchmark_name = string_of((*g)["BenchmarkName"], "General.BenchmarkName");
    else if (spec.contains("BenchmarkName"))
      k.benchmark_name = string_of(spec["BenchmarkName"], ks + ".BenchmarkName");
    k.kernel_name = string_of(member(spec, "KernelName", ks, false), ks + ".KernelName");
    if (spec.contains("Language")) k.language = string_of(spec["Language"], ks + ".Language");
    if (spec.contains("KernelFile")) k.kernel_file = string_of(spec["KernelFile"], ks + ".KernelFile");
    if (auto it = spec.find("CompilerOptions"); it != spec.end() && !it->is_null()) {
      if (!it->is_array()) fail(ks + ".CompilerOptions", "must be a list of strings");
      for (std::size_t i = 0; i < it->size(); ++i)
        k.compiler_options.push_back(string_of((*it)[i], fmt::format("{}.CompilerOptions[{}]", ks, i)));
    }
    if (spec.contains("GlobalSizeType")) k.global_size_type = string_of(spec["GlobalSizeType"], ks + ".GlobalSizeType");
    geometry(spec, "LocalSize", k.local_size);
    geometry(spec, "GlobalSize", k.global_size);
    const char* div_names[3] = {"GridDivX", "GridDivY", "GridDivZ"};
    for (int d = 0; d < 3; ++d) {
      auto it = spec.find(div_names[d]);
      if (it == spec.end() || it->is_null()) continue;
      const std::string at = ks + "." + div_names[d];
      if (it->is_array()) {
        for (std::size_t i = 0; i < it->size(); ++i) k.grid_div[d].push_back(expr_of((*it)[i], fmt::format("{}[{}]", at, i)));
      } else {
        k.grid_div[d].push_back(expr_of(*it, at));
      }
    }
    if (auto it = spec.find("SharedMemory"); it != spec.end() && !it->is_null())
      k.shared_memory = expr_of(*it, ks + ".SharedMemory");
    if (auto it = spec.find("ProblemSize"); it != spec.end() && !it->is_null()) {
      if (!it->is_array()) fail(ks + ".ProblemSize", "must be a list of integers");
      for (std::size_t i = 0; i < it->size(); ++i) {
        const ojson& v = (*it)[i];
        if (!v.is_number_integer()) fail(fmt::format("{}.ProblemSize[{}]", ks, i), "a problem size must be an integer");
        k.problem_size.push_back(v.get<std::int64_t>());
      }
    }
    if (auto it = spec.find("Arguments"); it != spec.end() && !it->is_null()) {
      if (!it->is_array()) fail(ks + ".Arguments", "must be a list");
      for (std::size_t i = 0; i < it->size(); ++i) k.arguments.push_back(argument((*it)[i], fmt::format("{}.Arguments[{}]", ks, i)));
    }
    if (auto it = spec.find("NameExpression"); it != spec.end() && it->is_string()) k.name_expression = it->get<std::string>();

    // The kernel source, when it sits beside the spec (benchmark_hub ships most of them).
    if (!k.kernel_file.empty()) {
      const auto src = std::filesystem::path(m_path).parent_path() / k.kernel_file;
      std::error_code ec;
      if (std::filesystem::is_regular_file(src, ec)) {
        std::ifstream in(src, std::ios::binary);
        std::ostringstream ss;
        ss << in.rdbuf();
        k.source = ss.str();
      }
    }
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& message) const {
    throw input_error(m_path, where, message);
  }

  const ojson& member(const ojson& obj, const char* key, const std::string& at, bool must_be_object) const {
    const std::string where = at.empty() ? key : at + "." + key;
    if (!obj.is_object()) fail(at, "expected an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(at, fmt::format("missing key \"{}\"", key));
    if (must_be_object && !it->is_object()) fail(where, "must be an object");
    if (!must_be_object && std::string_view(key) == "TuningParameters" && !it->is_array()) fail(where, "must be a list");
    return *it;
  }

  std::string string_of(const ojson& j, const std::string& where) const {
    if (!j.is_string()) fail(where, fmt::format("expected a string, found {}", j.type_name()));
    return j.get<std::string>();
  }

  // Expressions may be written as numbers (SharedMemory: 0).
  std::string expr_of(const ojson& j, const std::string& where) const {
    if (j.is_string()) return j.get<std::string>();
    if (j.is_number_integer()) return std::to_string(j.get<std::int64_t>());
    if (j.is_number()) return Value(j.get<double>()).to_string();
    fail(where, fmt::format("expected an expression (string or number), found {}", j.type_name()));
  }

  void geometry(const ojson& spec, const char* key, std::array<std::string, 3>& out) const {
    auto it = spec.find(key);
    if (it == spec.end() || it->is_null()) return;
    const std::string at = std::string("KernelSpecification.") + key;
    if (!it->is_object()) fail(at, "must be an object with X, Y, Z");
    const char* axes[3] = {"X", "Y", "Z"};
    for (int d = 0; d < 3; ++d)
      if (auto a = it->find(axes[d]); a != it->end() && !a->is_null()) out[d] = expr_of(*a, at + "." + axes[d]);
  }

  KernelArgument argument(const ojson& a, const std::string& at) const {
    if (!a.is_object()) fail(at, "an argument is an object");
    KernelArgument arg;
    arg.name = string_of(member(a, "Name", at, false), at + ".Name");
    if (a.contains("Type")) arg.type = string_of(a["Type"], at + ".Type");
    if (a.contains("MemoryType")) arg.memory_type = string_of(a["MemoryType"], at + ".MemoryType");
    if (a.contains("AccessType")) arg.access_type = string_of(a["AccessType"], at + ".AccessType");
    if (a.contains("MemType")) arg.mem_type = string_of(a["MemType"], at + ".MemType");
    if (a.contains("FillType")) arg.fill_type = string_of(a["FillType"], at + ".FillType");
    if (a.contains("Size")) arg.size = expr_of(a["Size"], at + ".Size");
    if (auto it = a.find("FillValue"); it != a.end() && !it->is_null()) {
      if (!it->is_number()) fail(at + ".FillValue", "must be a number");
      arg.fill_value = it->get<double>();
    }
    if (auto it = a.find("Output"); it != a.end() && !it->is_null()) {
      if (it->is_boolean())
        arg.output = it->get<bool>();
      else if (it->is_number())
        arg.output = it->get<double>() != 0;
      else
        fail(at + ".Output", "must be 0/1 or a boolean");
    }
    return arg;
  }

  Value scalar_value(const ojson& j, const std::string& where) const {
    if (auto v = detail::data::scalar_value(j)) return *v;
    fail(where, fmt::format("a value must be a number or a string, found {}", j.type_name()));
  }

  // Values are a JSON list or a Python list literal in a string: "[16, 32, 'a', 0.5, True]".
  std::vector<Value> values_of(const ojson& j, const std::string& type, const std::string& where) const {
    std::vector<Value> out;
    if (j.is_array()) {
      for (std::size_t i = 0; i < j.size(); ++i) {
        out.push_back(scalar_value(j[i], where));
        apply_type(out.back(), type, where);
      }
      return out;
    }
    if (!j.is_string()) fail(where, "expected a list of values or a string holding one");
    const std::string s = j.get<std::string>();
    // Kernel Tuner's scripts build lists in Python: "[1] + [2 * i for i in range(1, 11)]". The
    // terms of a top-level sum are list literals or comprehensions over range().
    for (const auto& [term, column] : top_level_terms(s, where)) {
      auto part = comprehension(term, column, type, where);
      if (!part) part = list_literal(term, column, type, where);
      out.insert(out.end(), part->begin(), part->end());
    }
    return out;
  }

  // The terms of s separated by '+' outside brackets and quotes, each with its 0-based column.
  std::vector<std::pair<std::string, std::size_t>> top_level_terms(const std::string& s, const std::string& where) const {
    std::vector<std::pair<std::string, std::size_t>> terms;
    int depth = 0;
    char quote = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= s.size(); ++i) {
      const char c = i < s.size() ? s[i] : '+';
      if (quote) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '\'' || c == '"') quote = c;
      else if (c == '[' || c == '(') ++depth;
      else if (c == ']' || c == ')') --depth;
      else if (c == '+' && depth == 0) {
        const std::size_t first = s.find_first_not_of(" \t\n", start);
        if (first == std::string::npos || first >= i)
          fail(where, fmt::format("expected a list before column {} of \"{}\"", i + 1, s));
        std::size_t last = i;
        while (last > first && (s[last - 1] == ' ' || s[last - 1] == '\t' || s[last - 1] == '\n')) --last;
        terms.emplace_back(s.substr(first, last - first), first);
        start = i + 1;
      }
    }
    return terms;
  }

  // [EXPR for NAME in range(ARGS)], EXPR an expression of NAME (the Conditions language), ARGS
  // one to three integer expressions; nullopt when the term is no comprehension.
  std::optional<std::vector<Value>> comprehension(const std::string& term, std::size_t column, const std::string& type,
                                                  const std::string& where) const {
    static const std::regex form(R"(^\[\s*(.+?)\s+for\s+([A-Za-z_]\w*)\s+in\s+range\s*\((.*)\)\s*\]$)");
    // std::regex recurses per character: a long list literal is never handed to it.
    if (term.size() > 4096 || term.find("for") == std::string::npos) return std::nullopt;
    std::smatch m;
    if (!std::regex_match(term, m, form)) return std::nullopt;
    const std::string name = m[2];
    const auto at = [&](const char* what) {
      return fmt::format("{} of the comprehension at column {} of \"{}\"", what, column + 1, term);
    };
    std::vector<std::int64_t> args;
    for (const auto& [arg, arg_column] : split_arguments(m[3])) {
      try {
        const Value v = Expression::compile(arg, {}).evaluate({});
        if (!v.is_int()) fail(where, fmt::format("{}: \"{}\" is not an integer", at("range() argument"), arg));
        args.push_back(v.as_int());
      } catch (const expression_error& e) {
        fail(where, fmt::format("{}: {}", at("range() argument"), e.what()));
      }
    }
    if (args.empty() || args.size() > 3) fail(where, fmt::format("{}: range() takes 1 to 3 arguments", at("range()")));
    const std::int64_t first = args.size() == 1 ? 0 : args[0], stop = args.size() == 1 ? args[0] : args[1];
    const std::int64_t step = args.size() == 3 ? args[2] : 1;
    if (step == 0) fail(where, fmt::format("{}: range() step must not be zero", at("range()")));
    if ((stop - first) / step > 1000000) fail(where, fmt::format("{}: more than a million values", at("range()")));
    const std::vector<std::string> variables{name};
    std::vector<Value> out;
    try {
      const Expression expr = Expression::compile(std::string(m[1]), variables);
      for (std::int64_t i = first; step > 0 ? i < stop : i > stop; i += step) {
        const Value bound[] = {Value(i)};
        out.push_back(expr.evaluate(bound));
      }
    } catch (const expression_error& e) {
      fail(where, fmt::format("{}: {}", at("expression"), e.what()));
    }
    for (auto& v : out) apply_type(v, type, where);
    return out;
  }

  // The comma-separated arguments of a call, outside brackets, with their columns.
  static std::vector<std::pair<std::string, std::size_t>> split_arguments(const std::string& s) {
    std::vector<std::pair<std::string, std::size_t>> out;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= s.size(); ++i) {
      const char c = i < s.size() ? s[i] : ',';
      if (c == '(' || c == '[') ++depth;
      else if (c == ')' || c == ']') --depth;
      else if (c == ',' && depth == 0) {
        out.emplace_back(s.substr(start, i - start), start);
        start = i + 1;
      }
    }
    if (out.size() == 1 && out.front().first.find_first_not_of(" \t") == std::string::npos) out.clear();
    return out;
  }

  // A Python list literal: "[16, 32, 'a', 0.5, True]" (or a tuple).
  std::vector<Value> list_literal(const std::string& s, std::size_t, const std::string& type,
                                  const std::string& where) const {
    std::vector<Value> out;
    std::size_t pos = s.find_first_not_of(" \t\n");
    if (pos == std::string::npos || (s[pos] != '[' && s[pos] != '('))
      fail(where, fmt::format("expected a list such as \"[1, 2, 4]\", found \"{}\"", s));
    const char close = s[pos] == '[' ? ']' : ')';
    ++pos;
    bool expect_item = true;
    while (true) {
      pos = s.find_first_not_of(" \t\n", pos);
      if (pos == std::string::npos) fail(where, fmt::format("unterminated list \"{}\"", s));
      if (s[pos] == close) break;
      if (!expect_item) {
        if (s[pos] != ',') fail(where, fmt::format("expected ',' at column {} of \"{}\"", pos + 1, s));
        ++pos;
        expect_item = true;
        continue;
      }
      const std::size_t start = pos;
      if (s[pos] == '\'' || s[pos] == '"') {
        const char q = s[pos];
        const std::size_t end = s.find(q, pos + 1);
        if (end == std::string::npos) fail(where, fmt::format("unterminated string at column {} of \"{}\"", pos + 1, s));
        out.emplace_back(s.substr(pos + 1, end - pos - 1));
        pos = end + 1;
      } else {
        const std::size_t end = s.find_first_of(",])", pos);
        std::string tok = s.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\t' || tok.back() == '\n')) tok.pop_back();
        out.push_back(literal(tok, where, start));
        apply_type(out.back(), type, where);
        pos = end == std::string::npos ? s.size() : end;
      }
      expect_item = false;
    }
    if (s.find_first_not_of(" \t\n", pos + 1) != std::string::npos)
      fail(where, fmt::format("unexpected text after the list in \"{}\"", s));
    return out;
  }

  Value literal(const std::string& tok, const std::string& where, std::size_t column) const {
    if (tok == "True") return Value(1);
    if (tok == "False") return Value(0);
    std::int64_t i = 0;
    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), i);
    if (ec == std::errc() && p == tok.data() + tok.size()) return Value(i);
    double d = 0;
    auto [p2, ec2] = std::from_chars(tok.data(), tok.data() + tok.size(), d);
    if (ec2 == std::errc() && p2 == tok.data() + tok.size() && std::isfinite(d)) return Value(d);
    fail(where, fmt::format("\"{}\" at column {} is not a number, a quoted string, True or False", tok, column + 1));
  }

  void apply_type(Value& v, const std::string& type, const std::string& where) const {
    if (type == "float" && v.is_int()) {
      v = Value(static_cast<double>(v.as_int()));
    } else if (type == "int" && v.is_float()) {
      if (std::floor(v.as_double()) != v.as_double())
        fail(where, fmt::format("{} is not an integer but the parameter's Type is int", v.to_string()));
      v = Value(static_cast<std::int64_t>(v.as_double()));
    }
  }

  const std::string& m_path;
};

std::string python_list(const std::vector<Value>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += values[i].is_string() ? "'" + values[i].as_string() + "'" : values[i].to_string();
  }
  return out + "]";
}

std::string type_of(const std::vector<Value>& values) {
  bool any_float = false;
  for (const auto& v : values) {
    if (v.is_string()) return "string";
    any_float |= v.is_float();
  }
  return any_float ? "float" : "int";
}

ojson value_json(const Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_float()) return v.as_double();
  return v.as_string();
}

// Writes an expression back as a number when it is one (the T1 files write SharedMemory: 0).
ojson expr_json(const std::string& e) {
  std::int64_t i = 0;
  auto [p, ec] = std::from_chars(e.data(), e.data() + e.size(), i);
  if (ec == std::errc() && p == e.data() + e.size() && !e.empty()) return i;
  return e;
}

}  // namespace

T1File read_t1(const std::string& path) {
  const std::string text = detail::data::read_maybe_gzip(path);
  return T1Reader(path).read(text);
}

void write_t1(const T1File& file, const std::string& path) {
  ojson doc;
  doc["General"] = {{"BenchmarkName", file.kernel.benchmark_name}, {"OutputFormat", "JSON"}};
  ojson params = ojson::array();
  for (const auto& p : file.space.parameters())
    params.push_back({{"Name", p.name},
                      {"Type", type_of(p.values)},
                      {"Values", python_list(p.values)},
                      {"Default", p.values.empty() ? ojson() : value_json(p.values.front())}});
  // Each condition lists the parameters it uses, as the T1 schema asks.
  const auto& names = *file.space.names();
  ojson conditions = ojson::array();
  for (const auto& c : file.space.constraints()) {
    ojson used = ojson::array();
    const Expression e = Expression::compile(c, names);
    for (std::size_t i : e.used_variables()) used.push_back(names[i]);
    conditions.push_back({{"Expression", c}, {"Parameters", std::move(used)}});
  }
  doc["ConfigurationSpace"] = {{"TuningParameters", std::move(params)}, {"Conditions", std::move(conditions)}};
  const KernelSpec& k = file.kernel;
  ojson spec;
  spec["Language"] = k.language;
  spec["CompilerOptions"] = k.compiler_options;
  spec["BenchmarkName"] = k.benchmark_name;
  spec["KernelName"] = k.kernel_name;
  spec["KernelFile"] = k.kernel_file;
  spec["GlobalSizeType"] = k.global_size_type;
  spec["LocalSize"] = {{"X", k.local_size[0]}, {"Y", k.local_size[1]}, {"Z", k.local_size[2]}};
  spec["GlobalSize"] = {{"X", k.global_size[0]}, {"Y", k.global_size[1]}, {"Z", k.global_size[2]}};
  const char* div_names[3] = {"GridDivX", "GridDivY", "GridDivZ"};
  for (int d = 0; d < 3; ++d)
    if (!k.grid_div[d].empty()) spec[div_names[d]] = k.grid_div[d];
  spec["ProblemSize"] = k.problem_size;
  spec["SharedMemory"] = expr_json(k.shared_memory);
  if (!k.name_expression.empty()) spec["NameExpression"] = k.name_expression;
  ojson args = ojson::array();
  for (const auto& a : k.arguments) {
    ojson j;
    j["Name"] = a.name;
    j["Type"] = a.type;
    j["MemoryType"] = a.memory_type;
    j["AccessType"] = a.access_type;
    if (!a.mem_type.empty()) j["MemType"] = a.mem_type;
    j["FillType"] = a.fill_type;
    j["Size"] = expr_json(a.size);
    j["FillValue"] = a.fill_value;
    if (a.output) j["Output"] = 1;
    args.push_back(std::move(j));
  }
  spec["Arguments"] = std::move(args);
  doc["KernelSpecification"] = std::move(spec);
  detail::data::write_text(path, doc.dump(4));
}

}  // namespace gpuforecast
