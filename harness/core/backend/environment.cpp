#include "gauntlet/core/backend/environment.h"

#include <ATen/Parallel.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include "gauntlet/base/host.h"
#include "gauntlet/plugin/torch_compat.h"

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

}  // namespace

std::string gauntlet_version() { return GAUNTLET_VERSION; }

void describe_environment(RunInfo& info) {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  info.host = host;
  info.cpu = cpu_model();
  info.threads = case_intra_op_threads();  // what its cases run with (Note [Intra-op threads])
  info.torch_version = compat::torch_version();
  const std::string blas = loaded_blas_path();
  info.blas = blas.empty() ? "none loaded" : blas;
  info.build_config = at::show_config();
  info.gauntlet_version = gauntlet_version();
}

}  // namespace gauntlet
