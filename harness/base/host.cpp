#include "gauntlet/base/host.h"

#include <link.h>

#include <climits>
#include <cstdlib>
#include <ctime>

namespace gauntlet {

int case_intra_op_threads() {
  const char* env = std::getenv("OMP_NUM_THREADS");
  if (env == nullptr || *env == '\0') return 1;
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  return (*end == '\0' && n > 0 && n <= 4096) ? static_cast<int>(n) : 1;
}

std::string loaded_blas_path() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        const std::string name = info->dlpi_name ? info->dlpi_name : "";
        const std::string file = name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
        if (file.find("libblas") != std::string::npos || file.find("openblas") != std::string::npos ||
            file.find("mkl") != std::string::npos) {
          char buf[PATH_MAX];
          *static_cast<std::string*>(out) = realpath(name.c_str(), buf) ? buf : name;
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

std::string utc_now(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  return std::strftime(buf, sizeof buf, format, &tm) > 0 ? std::string(buf) : std::string();
}

}  // namespace gauntlet
