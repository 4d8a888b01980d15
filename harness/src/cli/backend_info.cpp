// gauntlet backend-info: what a backend says about itself (its release, configuration and
// native kernels), so a user can see what `run` will record before running anything.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "gauntlet/backend.h"

namespace gauntlet::cli {

int backend_info(const BackendInfoOptions& o) {
  std::unique_ptr<Backend> backend = make_backend(o.backend);
  const std::vector<std::string> kernels = backend->kernels();
  const nlohmann::json config = nlohmann::json::parse(backend->config_json(), nullptr, false);
  const MemoryStats mem = backend->memory();
  if (o.json) {
    nlohmann::json j = {{"backend", backend->name()},      {"profile", backend->profile()},
                        {"version", backend->version()},   {"device", backend->device().str()},
                        {"config", config},                {"kernels", kernels},
                        {"memory_current_bytes", mem.current_bytes}};
    std::cout << j.dump(1) << "\n";
    return 0;
  }
  fmt::print("backend  {}\nprofile  {}\nversion  {}\ndevice   {}\nconfig   {}\n", backend->name(), backend->profile(),
             backend->version(), backend->device().str(), config.dump());
  if (kernels.empty()) {
    fmt::print("kernels  (the backend does not list its kernels)\n");
  } else {
    fmt::print("kernels  {} native ops:\n", kernels.size());
    for (const auto& k : kernels) fmt::print("  {}\n", k);
  }
  return 0;
}

}  // namespace gauntlet::cli
