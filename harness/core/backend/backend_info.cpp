// What a backend says about itself (its release, configuration and native kernels) and what the
// dispatcher knows of it without its help (its PrivateUse1 kernels, its CPU fallback, autograd,
// and the ops the harness needs): `gauntlet backend-info`.
#include "gauntlet/core/backend/backend_info.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "gauntlet/core/backend/backend.h"
#include "gauntlet/core/cases/dispatch_probe.h"

namespace gauntlet {

std::string backends_listing(bool json) {
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const BackendEntry& e : registered_backends()) {
      list.push_back({{"name", e.name}, {"usage", e.usage}, {"description", e.description}});
    }
    return list.dump(1) + "\n";
  }
  std::size_t width = 0;
  for (const BackendEntry& e : registered_backends()) width = std::max(width, e.usage.size());
  std::string out;
  for (const BackendEntry& e : registered_backends()) out += fmt::format("{:<{}}  {}\n", e.usage, width, e.description);
  return out;
}

namespace {

// "466 (aten 445, c10d 21)": how many ops, by namespace.
std::string counted(const std::vector<std::string>& ops) {
  std::map<std::string, std::size_t> by;
  for (const std::string& op : ops) ++by[op.substr(0, op.find("::"))];
  std::vector<std::string> parts;
  for (const auto& [ns, n] : by) parts.push_back(fmt::format("{} {}", ns, n));
  return fmt::format("{} ({})", ops.size(), fmt::join(parts, ", "));
}

}  // namespace

std::string backend_info(Backend& b, bool json, bool verbose) {
  Backend* backend = &b;
  std::string out;
  const std::vector<std::string> kernels = backend->kernels();
  const nlohmann::json config = nlohmann::json::parse(backend->config_json(), nullptr, false);
  const MemoryStats mem = backend->memory();
  // A device of its own (not the `cpu` reference): what the dispatcher can tell of it.
  const std::optional<c10::DispatchKey> own_key = backend->dispatch_key();
  const bool device = own_key.has_value();
  const c10::DispatchKey key = own_key.value_or(c10::DispatchKey::CPU);
  Capabilities caps = device ? probe_capabilities(key) : Capabilities{};
  if (device && caps.can_take_inputs()) check_fallback_needs(*backend, caps);
  if (json) {
    nlohmann::json j = {{"backend", backend->name()},
                        {"profile", backend->profile()},
                        {"version", backend->version()},
                        {"torch", {{"version", compat::torch_version()}, {"lib", compat::torch_lib_dir()}}},
                        {"device", backend->device().str()},
                        {"config", config},
                        {"kernels", kernels},
                        {"memory_current_bytes", mem.current_bytes}};
    if (device) {
      nlohmann::json req = nlohmann::json::array();
      for (const Requirement& r : caps.requirements) {
        req.push_back({{"op", r.op},
                       {"needed_for", r.needed_for},
                       {"required", r.required},
                       {"present", r.present},
                       {"fallback_needs", r.fallback_needs},
                       {"how", r.how}});
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
    return j.dump(1) + "\n";
  }
  out += fmt::format("backend  {}\nprofile  {}\nversion  {}\ntorch    {} ({})\ndevice   {}\nconfig   {}\n",
                     backend->name(), backend->profile(), backend->version(), compat::torch_version(),
                     compat::torch_lib_dir(), backend->device().str(), config.dump());
  // What stops or limits a run, first (the dispatcher's findings, below, say each in full).
  std::vector<std::string> problems;
  if (device) {
    if (!caps.can_take_inputs()) problems.push_back("`run` cannot take even contiguous inputs on this backend");
    for (const Requirement& r : caps.requirements) {
      if (!r.present)
        problems.push_back(fmt::format("MISSING {}{}: {}", r.op, r.required ? " (required)" : "", r.needed_for));
    }
    if (!caps.backend_fallback)
      problems.push_back("no backend fallback: an op without a kernel fails instead of running on the CPU");
  }
  if (problems.empty()) {
    out += "problems none\n";
  } else {
    out += fmt::format("problems {}:\n", problems.size());
    for (const std::string& p : problems) out += fmt::format("  {}\n", p);
  }
  if (kernels.empty()) {
    out += fmt::format("kernels  (the backend does not list its kernels)\n");
  } else if (!verbose) {
    out += fmt::format("kernels  {} native ops (--verbose lists them)\n", counted(kernels));
  } else {
    out += fmt::format("kernels  {} native ops:\n", kernels.size());
    for (const auto& k : kernels) out += fmt::format("  {}\n", k);
  }
  if (!device) return out;
  // Read from the dispatcher: true of any library, whatever it exports.
  out +=
      fmt::format("\ndispatcher ({}), read from the dispatcher with no help from the library:\n", c10::toString(key));
  out += fmt::format("  backend fallback: {}\n",
                     caps.backend_fallback ? "yes (ops without a kernel run through it)" : "no");
  out += fmt::format("  fallbacks recorded from: {}\n", backend->reports_fallbacks()
                                                            ? "the backend's own report (plugin ABI)"
                                                            : "the dispatcher (no vendor ABI needed)");
  out += fmt::format("  autograd: {} ops with a kernel of their own for {}, fallback {}\n", caps.autograd_native.size(),
                     c10::toString(c10::getAutogradKeyFromBackend(c10::toBackendComponent(key))),
                     caps.autograd_fallback ? "yes" : "no (the Autograd alias kernels serve it)");
  out += fmt::format("  what the harness needs:\n");
  for (const Requirement& r : caps.requirements) {
    out += fmt::format("    {:<8} {:<30} {}{}\n", r.present ? "present" : "MISSING", r.op, r.needed_for,
                       r.required ? " (required)" : "");
    if (r.fallback_needs) {
      out += fmt::format("{:44}the CPU fallback needs it: {}\n", "",
                         r.how.empty() ? "no kernel of the backend's own" : r.how);
    }
  }
  if (!caps.can_take_inputs()) {
    out += fmt::format("  => `run` cannot take even contiguous inputs on this backend\n");
  }
  if (!verbose) {
    out += fmt::format("  native kernels: {} (--verbose lists them)\n", counted(caps.native));
    return out;
  }
  out += fmt::format("  native kernels: {}\n", caps.native.size());
  for (const auto& k : caps.native) out += fmt::format("    {}\n", k);
  return out;
}

void describe_options(OptionSink& s, BackendInfoOptions& o) {
  describe_backend(s, o.backend).show_default();
  s.flag("--json", o.json, "print JSON");
  s.flag("--list", o.list, "list the backends --backend can name, with a line on each");
  s.flag("--verbose", o.verbose, "list every kernel (without it: their counts by namespace, the problems first)");
}

std::string backend_info(const BackendInfoOptions& o) {
  return o.list ? backends_listing(o.json) : backend_info(*make_backend(o.backend), o.json, o.verbose);
}

}  // namespace gauntlet
