// gauntlet backend-info: what a backend says about itself (its release, configuration and
// native kernels) and what the dispatcher knows of it without its help (its PrivateUse1 kernels,
// its CPU fallback, autograd, and the ops the harness needs), so a user sees what `run` will
// record, and what it cannot run, before running anything.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "gauntlet/backend.h"
#include "gauntlet/dispatch_probe.h"
#include "gauntlet/runner.h"

namespace gauntlet::cli {

namespace {

// --list: the registered backends (Note [Backend registry]), without making any.
int list_backends(bool json) {
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const BackendEntry& e : registered_backends()) {
      list.push_back({{"name", e.name}, {"usage", e.usage}, {"description", e.description}});
    }
    std::cout << list.dump(1) << "\n";
    return 0;
  }
  std::size_t width = 0;
  for (const BackendEntry& e : registered_backends()) width = std::max(width, e.usage.size());
  for (const BackendEntry& e : registered_backends()) fmt::print("{:<{}}  {}\n", e.usage, width, e.description);
  return 0;
}

}  // namespace

int backend_info(const BackendInfoOptions& o) {
  if (o.list) return list_backends(o.json);
  std::unique_ptr<Backend> backend = make_backend(o.backend);
  const std::vector<std::string> kernels = backend->kernels();
  const nlohmann::json config = nlohmann::json::parse(backend->config_json(), nullptr, false);
  const MemoryStats mem = backend->memory();
  // A device of its own (not the `cpu` reference): what the dispatcher can tell of it.
  const std::optional<c10::DispatchKey> own_key = backend->dispatch_key();
  const bool device = own_key.has_value();
  const c10::DispatchKey key = own_key.value_or(c10::DispatchKey::CPU);
  const Capabilities caps = device ? probe_capabilities(key) : Capabilities{};
  if (o.json) {
    nlohmann::json j = {{"backend", backend->name()},
                        {"profile", backend->profile()},
                        {"version", backend->version()},
                        {"device", backend->device().str()},
                        {"config", config},
                        {"kernels", kernels},
                        {"memory_current_bytes", mem.current_bytes}};
    if (device) {
      nlohmann::json req = nlohmann::json::array();
      for (const Requirement& r : caps.requirements) {
        req.push_back({{"op", r.op}, {"needed_for", r.needed_for}, {"required", r.required}, {"present", r.present}});
      }
      j["dispatcher"] = {{"dispatch_key", c10::toString(key)},
                         {"native_kernels", caps.native},
                         {"backend_fallback", caps.backend_fallback},
                         {"autograd_kernels", caps.autograd_native},
                         {"autograd_fallback", caps.autograd_fallback},
                         {"fallbacks_reported_by", backend->reports_fallbacks() ? "backend" : "dispatcher"},
                         {"harness_needs", req},
                         {"can_take_inputs", caps.can_take_inputs()}};
    }
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
  if (!device) return 0;
  // Read from the dispatcher: true of any library, whatever it exports.
  fmt::print("\ndispatcher ({}), read from the dispatcher with no help from the library:\n", c10::toString(key));
  fmt::print("  backend fallback: {}\n", caps.backend_fallback ? "yes (ops without a kernel run through it)" : "no");
  fmt::print("  fallbacks recorded from: {}\n", backend->reports_fallbacks() ? "the backend's own report (plugin ABI)"
                                                                             : "the dispatcher (no vendor ABI needed)");
  fmt::print("  autograd: {} ops with a kernel of their own for {}, fallback {}\n", caps.autograd_native.size(),
             c10::toString(c10::getAutogradKeyFromBackend(c10::toBackendComponent(key))),
             caps.autograd_fallback ? "yes" : "no (the Autograd alias kernels serve it)");
  fmt::print("  what the harness needs:\n");
  for (const Requirement& r : caps.requirements) {
    fmt::print("    {:<8} {:<30} {}{}\n", r.present ? "present" : "MISSING", r.op, r.needed_for,
               r.required ? " (required)" : "");
  }
  if (!caps.can_take_inputs()) {
    fmt::print("  => `run` cannot take even contiguous inputs on this backend\n");
  }
  fmt::print("  native kernels: {}\n", caps.native.size());
  for (const auto& k : caps.native) fmt::print("    {}\n", k);
  return 0;
}

}  // namespace gauntlet::cli
