#include "runtime/static_features.hpp"

#include <array>
#include <charconv>
#include <regex>
#include <string>

namespace gpuforecast {

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

const std::array<const char*, 24> kPtxNames = {
    "ptx_ld_global", "ptx_st_global", "ptx_ld_shared", "ptx_st_shared", "ptx_ld_local",  "ptx_st_local",
    "ptx_ld_const",  "ptx_fma_f16",   "ptx_fma_f32",   "ptx_fma_f64",   "ptx_mul_f32",   "ptx_mul_f64",
    "ptx_mul_int",   "ptx_add_f32",   "ptx_add_f64",   "ptx_add_int",   "ptx_sfu",       "ptx_branch",
    "ptx_barrier",   "ptx_atomic",    "ptx_mma",       "ptx_cp_async",  "ptx_vector_memory", "ptx_total"};
const std::array<const char*, 7> kPtxasNames = {"registers",       "spill_stores_bytes",         "spill_loads_bytes",
                                                "local_memory_bytes", "static_shared_memory_bytes", "constant_memory_bytes",
                                                "barriers"};

struct Entry {
  Features f;
};
}  // namespace

const std::vector<std::string>& static_feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n(kPtxasNames.begin(), kPtxasNames.end());
    n.insert(n.end(), kPtxNames.begin(), kPtxNames.end());
    return n;
  }();
  return names;
}

Features parse_ptxas_report(std::string_view log, std::string_view entry) {
  static const std::regex compiling(R"(Compiling entry function '([^']+)')");
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex stack(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex regs(R"(Used (\d+) registers)");
  static const std::regex bars(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex cmem(R"((\d+) bytes cmem\[\d+\])");
  std::vector<std::pair<std::string, Features>> entries;  // in report order
  std::map<std::string, Features> stacks;                 // "Function properties for X" blocks
  std::string current_entry, current_props;
  std::size_t pos = 0;
  while (pos <= log.size()) {
    std::size_t end = log.find('\n', pos);
    if (end == std::string_view::npos) end = log.size();
    const std::string line(log.substr(pos, end - pos));
    pos = end + 1;
    std::smatch m;
    if (std::regex_search(line, m, compiling)) {
      current_entry = m[1].str();
      entries.emplace_back(current_entry, Features{});
    } else if (std::regex_search(line, m, properties)) {
      current_props = m[1].str();
    } else if (std::regex_search(line, m, stack)) {
      auto& f = stacks[current_props];
      f["local_memory_bytes"] = std::stod(m[1].str());
      f["spill_stores_bytes"] = std::stod(m[2].str());
      f["spill_loads_bytes"] = std::stod(m[3].str());
    } else if (std::regex_search(line, m, regs) && !entries.empty()) {
      auto& f = entries.back().second;
      f["registers"] = std::stod(m[1].str());
      if (std::regex_search(line, m, bars)) f["barriers"] = std::stod(m[1].str());
      if (std::regex_search(line, m, smem)) f["static_shared_memory_bytes"] = std::stod(m[1].str());
      double c = 0;
      bool any = false;
      for (auto it = std::sregex_iterator(line.begin(), line.end(), cmem); it != std::sregex_iterator(); ++it) {
        c += std::stod((*it)[1].str());
        any = true;
      }
      if (any) f["constant_memory_bytes"] = c;
    }
    if (end == log.size()) break;
  }
  if (entries.empty()) return {};
  auto chosen = entries.end() - 1;
  for (auto it = entries.begin(); it != entries.end(); ++it)
    if (!entry.empty() && it->first == entry) chosen = it;
  Features f = chosen->second;
  if (auto s = stacks.find(chosen->first); s != stacks.end())
    for (const auto& [k, v] : s->second) f[k] = v;
  if (!f.count("static_shared_memory_bytes") && f.count("registers")) f["static_shared_memory_bytes"] = 0;
  if (!f.count("barriers") && f.count("registers")) f["barriers"] = 0;
  return f;
}

Features ptx_instruction_mix(std::string_view ptx) {
  Features f;
  for (const char* n : kPtxNames) f[n] = 0;
  auto bump = [&f](const char* n) { f[n] += 1; };
  std::size_t pos = 0;
  while (pos < ptx.size()) {
    std::size_t end = ptx.find('\n', pos);
    if (end == std::string_view::npos) end = ptx.size();
    std::string_view line = trim(ptx.substr(pos, end - pos));
    pos = end + 1;
    if (line.empty() || line[0] == '/' || line[0] == '.' || line[0] == '{' || line[0] == '}' || line[0] == ')' ||
        line[0] == '(')
      continue;
    if (line[0] == '@') {  // guard predicate
      const std::size_t sp = line.find_first_of(" \t");
      if (sp == std::string_view::npos) continue;
      line = trim(line.substr(sp));
    }
    const std::size_t op_end = line.find_first_of(" \t;");
    const std::string_view opcode = line.substr(0, op_end);
    if (opcode.empty() || opcode.back() == ':' || line.find(':') == op_end) continue;  // label
    if (!(opcode[0] >= 'a' && opcode[0] <= 'z')) continue;
    // Split "ld.global.nc.v4.f32" into its dot-separated parts.
    std::vector<std::string_view> parts;
    for (std::size_t s = 0; s <= opcode.size();) {
      std::size_t d = opcode.find('.', s);
      if (d == std::string_view::npos) d = opcode.size();
      parts.push_back(opcode.substr(s, d - s));
      s = d + 1;
    }
    auto has = [&](std::string_view p) {
      for (std::size_t i = 1; i < parts.size(); ++i)
        if (parts[i] == p || parts[i].substr(0, p.size() + 2) == std::string(p) + "::") return true;
      return false;
    };
    auto type = [&]() -> std::string_view { return parts.back(); };
    auto is_float_type = [&](std::string_view t) { return t == "f32" || t == "f64" || t.substr(0, 3) == "f16" || t.substr(0, 4) == "bf16"; };
    const std::string_view root = parts[0];
    bump("ptx_total");
    if (root == "ld" || root == "ldu" || root == "st") {
      const bool load = root != "st";
      bool vec = false;
      for (auto p : parts) vec = vec || (p.size() >= 2 && p[0] == 'v' && p[1] >= '0' && p[1] <= '9');
      if (vec) bump("ptx_vector_memory");
      if (has("global")) bump(load ? "ptx_ld_global" : "ptx_st_global");
      else if (has("shared")) bump(load ? "ptx_ld_shared" : "ptx_st_shared");
      else if (has("local")) bump(load ? "ptx_ld_local" : "ptx_st_local");
      else if (has("const") && load) bump("ptx_ld_const");
    } else if (root == "fma" || (root == "mad" && is_float_type(type()))) {
      const auto t = type();
      if (t == "f32") bump("ptx_fma_f32");
      else if (t == "f64") bump("ptx_fma_f64");
      else bump("ptx_fma_f16");
    } else if (root == "mad") {
      bump("ptx_mul_int");
    } else if (root == "mul") {
      const auto t = type();
      if (t == "f32") bump("ptx_mul_f32");
      else if (t == "f64") bump("ptx_mul_f64");
      else if (!is_float_type(t)) bump("ptx_mul_int");
    } else if (root == "add" || root == "sub") {
      const auto t = type();
      if (t == "f32") bump("ptx_add_f32");
      else if (t == "f64") bump("ptx_add_f64");
      else if (!is_float_type(t) && t != "cc") bump("ptx_add_int");
    } else if (root == "ex2" || root == "lg2" || root == "sin" || root == "cos" || root == "rsqrt" || root == "tanh" ||
               ((root == "rcp" || root == "sqrt") && has("approx"))) {
      bump("ptx_sfu");
    } else if (root == "bra" || root == "brx") {
      bump("ptx_branch");
    } else if ((root == "bar" || root == "barrier") && !has("warp")) {
      bump("ptx_barrier");
    } else if (root == "atom" || root == "red") {
      bump("ptx_atomic");
    } else if (root == "mma" || root == "wmma" || root == "wgmma") {
      bump("ptx_mma");
    } else if ((root == "cp" && has("async"))) {
      bump("ptx_cp_async");
    }
  }
  return f;
}

}  // namespace gpuforecast
