#include "openmp_environment.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace gpuforecast::detail {

void ensure_passive_openmp_wait() {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  if (!in) return;
  const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string cur;
  for (char c : cmdline) {
    if (c == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) args.push_back(cur);
  if (args.empty()) return;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (::setenv("OMP_WAIT_POLICY", "passive", 0) != 0) return;
  ::execv("/proc/self/exe", argv.data());
  // execv failed: carry on with the environment we have (slower, still correct).
}

}  // namespace gpuforecast::detail
