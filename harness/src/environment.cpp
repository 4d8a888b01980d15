#include "gauntlet/environment.h"

#include <ATen/Parallel.h>
#include <link.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include "gauntlet/torch_compat.h"

#ifndef GAUNTLET_VERSION
#define GAUNTLET_VERSION "0.0.0"
#endif

namespace gauntlet {

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

// The BLAS libtorch really runs on: the resolved path of the libblas loaded into this process
// (Debian switches it through alternatives; the reference BLAS is 15-20x slower than OpenBLAS).
std::string loaded_blas() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find("libblas") != std::string::npos || name.find("openblas") != std::string::npos ||
            name.find("mkl") != std::string::npos) {
          char buf[PATH_MAX];
          *static_cast<std::string*>(out) = realpath(name.c_str(), buf) ? buf : name;
          return 1;
        }
        return 0;
      },
      &found);
  return found.empty() ? "none loaded" : found;
}

}  // namespace

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string gauntlet_version() { return GAUNTLET_VERSION; }

void describe_environment(RunInfo& info) {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  info.host = host;
  info.cpu = cpu_model();
  info.threads = at::get_num_threads();
  info.torch_version = compat::torch_version();
  info.blas = loaded_blas();
  info.build_config = at::show_config();
  info.gauntlet_version = gauntlet_version();
}

}  // namespace gauntlet
