#include "gauntlet/core/cases/dispatch_probe.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "gauntlet/base/stage.h"
#include "gauntlet/base/text.h"
#include "gauntlet/core/backend/backend.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/plugin/torch_compat.h"

namespace gauntlet {

const char* kernel_source_name(KernelSource s) {
  switch (s) {
    case KernelSource::Native:
      return "native";
    case KernelSource::Composite:
      return "composite";
    case KernelSource::Fallback:
      return "fallback";
    case KernelSource::Missing:
      return "missing";
  }
  return "?";
}

c10::DispatchKey backend_dispatch_key(c10::DeviceType device) {
  switch (device) {
    case c10::DeviceType::CPU:
      return c10::DispatchKey::CPU;
    case c10::DeviceType::CUDA:
      return c10::DispatchKey::CUDA;
    default:
      return c10::DispatchKey::PrivateUse1;
  }
}

namespace {

std::string full_name(const c10::OperatorName& n) {
  return n.overload_name.empty() ? n.name : n.name + "." + n.overload_name;
}

c10::OperatorName parse_name(const std::string& op) {
  const auto colons = op.find("::");
  const auto dot = op.find('.', colons == std::string::npos ? 0 : colons + 2);
  if (dot == std::string::npos) return {op, ""};
  return {op.substr(0, dot), op.substr(dot + 1)};
}

KernelSource classify(const c10::OperatorHandle& h, c10::DispatchKey key) {
  using K = c10::DispatchKey;
  if (h.hasKernelForDispatchKey(key)) return KernelSource::Native;
  if (h.hasKernelForDispatchKey(K::CompositeExplicitAutogradNonFunctional) ||
      h.hasKernelForDispatchKey(K::CompositeExplicitAutograd) ||
      h.hasKernelForDispatchKey(K::CompositeImplicitAutograd)) {
    return KernelSource::Composite;
  }
  if (c10::Dispatcher::singleton().hasBackendFallbackForDispatchKey(key)) return KernelSource::Fallback;
  return KernelSource::Missing;
}

// Kernels are registered when libraries load, before any case runs; the cache is per op name
// and key. Guarded: rank threads and the golden store's workers may ask at once.
KernelSource cached_source(const c10::OperatorName& name, c10::DispatchKey key) {
  static std::mutex mu;
  static std::map<std::pair<std::string, int>, KernelSource> cache;
  const auto k = std::make_pair(full_name(name), static_cast<int>(key));
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(k); it != cache.end()) return it->second;
  auto h = c10::Dispatcher::singleton().findOp(name);
  const KernelSource s = h && h->hasSchema() ? classify(*h, key) : KernelSource::Missing;
  cache.emplace(k, s);
  return s;
}

}  // namespace

KernelSource kernel_source(const std::string& op, c10::DispatchKey key) { return cached_source(parse_name(op), key); }

bool has_native_kernel(const std::string& op, c10::DispatchKey key) {
  return kernel_source(op, key) == KernelSource::Native;
}

bool Capabilities::can_take_inputs() const { return missing_required().empty(); }

std::vector<std::string> Capabilities::missing_required() const {
  std::vector<std::string> missing;
  for (const Requirement& r : requirements) {
    if (r.required && !r.present) missing.push_back(r.op);
  }
  return missing;
}

Capabilities probe_capabilities(c10::DispatchKey key) {
  auto& d = c10::Dispatcher::singleton();
  Capabilities caps;
  const c10::DispatchKey autograd = c10::getAutogradKeyFromBackend(c10::toBackendComponent(key));
  for (const c10::OperatorName& name : d.getAllOpNames()) {
    auto h = d.findOp(name);
    if (!h) continue;
    if (h->hasKernelForDispatchKey(key)) caps.native.push_back(full_name(name));
    if (h->hasKernelForDispatchKey(autograd)) caps.autograd_native.push_back(full_name(name));
  }
  std::sort(caps.native.begin(), caps.native.end());
  std::sort(caps.autograd_native.begin(), caps.autograd_native.end());
  caps.backend_fallback = d.hasBackendFallbackForDispatchKey(key);
  caps.autograd_fallback = d.hasBackendFallbackForDispatchKey(autograd);
  // Note [Device plumbing]: the harness moves inputs in with an allocation and a copy of
  // contiguous data, and results out with a copy of contiguous data; everything else is optional
  // and costs only the cases that need it.
  // Note [What a fallback cannot cover]: what the fallback itself needs is present only as a
  // kernel of the backend's own until a call shows the fallback covers it (check_fallback_needs).
  auto add = [&](const char* op, const char* why, bool required, bool fallback_needs = false) {
    const bool native = has_native_kernel(op, key);
    const bool present = required || fallback_needs || std::string(op) == "aten::as_strided"
                             ? native
                             : kernel_source(op, key) != KernelSource::Missing;
    std::string how = native ? "a kernel of its own" : present ? "through the CPU fallback" : "";
    caps.requirements.push_back({op, why, required, present, fallback_needs, std::move(how)});
  };
  add("aten::empty.memory_format", "allocating inputs on the device", true);
  add("aten::_copy_from", "copying inputs in and results out (contiguous data)", true);
  add("aten::empty_strided", "outputs with a given layout, tensor.to(device); results of the CPU fallback", false,
      caps.backend_fallback);
  add("aten::as_strided", "layouts t, step2 and cl, and every view op", false);
  add("aten::_copy_from_and_resize", "in-place and out= ops run through the CPU fallback (copying results back)", false,
      caps.backend_fallback);
  add("aten::resize_", "out= arguments that must grow", false, caps.backend_fallback);
  return caps;
}

// ---------------------------------------------------------------------------------------------
// The observer.

struct DispatchObserver::State {
  c10::DeviceType device;
  c10::DispatchKey key;
  int uncaught_at_start = 0;
  std::set<std::string> fallback, decomposed;
  // Ops on the observed device now running, innermost last; a fallback op's depth marks where
  // its own machinery starts.
  struct Frame {
    std::string op;
    KernelSource source;
    bool device = false;
  };
  std::vector<Frame> stack;
  int fallback_depth = 0;                // how many fallback ops are open
  std::vector<std::string> fallback_of;  // the open fallback ops, innermost last
  std::optional<Raised> raised;
};

namespace {

// The observing state. The callback itself is thread-local, and libtorch carries it into the
// threads that work for this one (the autograd engine runs a backward pass on a device thread,
// restoring the caller's ThreadLocalState), so the state it writes to is reached from any of
// them: a global, guarded, set by the one observer alive.
std::mutex g_mu;
DispatchObserver::State* g_state = nullptr;

bool on_device(const c10::IValue& v, c10::DeviceType device) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    return t.defined() && t.device().type() == device;
  }
  if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList().vec()) {
      if (t.defined() && t.device().type() == device) return true;
    }
    return false;
  }
  if (v.isList()) {
    for (const c10::IValue& item : v.toListRef()) {
      if (on_device(item, device)) return true;
    }
    return false;
  }
  if (v.isDevice()) return v.toDevice().type() == device;
  return false;
}

struct Marker final : at::ObserverContext {};

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  std::lock_guard<std::mutex> lock(g_mu);
  DispatchObserver::State* s = g_state;
  if (!s) return nullptr;
  const auto name = fn.operator_name();
  if (!name || compat::is_traced_call(fn.inputs())) return nullptr;  // torch.compile tracing, not running
  bool device = false;
  for (const c10::IValue& v : fn.inputs()) {
    if (on_device(v, s->device)) {
      device = true;
      break;
    }
  }
  const KernelSource src = device ? cached_source(*name, s->key) : KernelSource::Missing;
  s->stack.push_back({full_name(*name), src, device});
  if (device && s->fallback_depth == 0) {
    if (src == KernelSource::Fallback && s->fallback.insert(s->stack.back().op).second) {
      note_fallback_entered(s->stack.back().op);  // kept for a crash (Note [Failing stage])
    }
    if (src == KernelSource::Composite) s->decomposed.insert(s->stack.back().op);
  }
  if (device && src == KernelSource::Fallback) {
    ++s->fallback_depth;
    s->fallback_of.push_back(s->stack.back().op);
  }
  return std::make_unique<Marker>();
}

void on_end(const at::RecordFunction&, at::ObserverContext* ctx) {
  std::lock_guard<std::mutex> lock(g_mu);
  DispatchObserver::State* s = g_state;
  if (!s || !ctx || s->stack.empty()) return;
  DispatchObserver::State::Frame f = std::move(s->stack.back());
  s->stack.pop_back();
  const bool fallback = f.device && f.source == KernelSource::Fallback;
  if (fallback) {
    --s->fallback_depth;
    s->fallback_of.pop_back();
  }
  // Leaving while an exception unwinds: the innermost device op it leaves is where it came from.
  if (f.device && !s->raised && std::uncaught_exceptions() > s->uncaught_at_start) {
    DispatchObserver::Raised r;
    r.op = f.op;
    r.source = f.source;
    if (!s->fallback_of.empty()) r.in_fallback_of = s->fallback_of.back();
    s->raised = std::move(r);
  }
}

}  // namespace

DispatchObserver::DispatchObserver(c10::DeviceType device, c10::DispatchKey key) : state_(std::make_unique<State>()) {
  state_->device = device;
  state_->key = key;
  state_->uncaught_at_start = std::uncaught_exceptions();
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_state) return;  // an outer observer sees everything already
    g_state = state_.get();
  }
  handle_ = at::addThreadLocalCallback(
      at::RecordFunctionCallback(&on_start, &on_end).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
}

DispatchObserver::~DispatchObserver() {
  if (handle_ == 0) return;
  at::removeCallback(handle_);
  std::lock_guard<std::mutex> lock(g_mu);
  g_state = nullptr;
}

std::vector<std::string> DispatchObserver::fallback_ops() const {
  return {state_->fallback.begin(), state_->fallback.end()};
}

std::vector<std::string> DispatchObserver::decomposed_ops() const {
  return {state_->decomposed.begin(), state_->decomposed.end()};
}

const std::optional<DispatchObserver::Raised>& DispatchObserver::raised_in() const { return state_->raised; }

namespace {

// An error's first sentence, on one line.
std::string first_sentence(std::string_view what) {
  std::string line = first_line_cut(what, 200);
  if (const std::size_t end = line.find(". "); end != std::string::npos) line.resize(end + 1);
  return line;
}

// Calls `op` once on tiny tensors of the backend's device, as the CPU fallback would; "" when it
// did what it should, else why not, in one line.
std::string call_fallback_need(const Backend& backend, const std::string& op) {
  const at::TensorOptions on_device = at::TensorOptions().dtype(at::kFloat).device(backend.device());
  try {
    if (op == "aten::_copy_from_and_resize") {
      at::Tensor dst = at::empty({0}, on_device);
      at::_copy_from_and_resize(at::ones({2}), dst);  // a CPU result into a device out= argument
      if (dst.numel() != 2) return fmt::format("it left the destination with {} elements, not 2", dst.numel());
    } else if (op == "aten::resize_") {
      at::Tensor t = at::empty({1}, on_device);
      t.resize_({4});
      if (t.numel() != 4) return fmt::format("it left the tensor with {} elements, not 4", t.numel());
    } else {
      return "it cannot run through a CPU fallback (which makes its results on the device with it)";
    }
  } catch (const c10::Error& e) {
    return first_sentence(e.what_without_backtrace());
  } catch (const std::exception& e) {
    return first_sentence(e.what());
  }
  return "";
}

}  // namespace

void check_fallback_needs(const Backend& backend, Capabilities& caps) {
  if (!caps.backend_fallback) return;
  for (Requirement& r : caps.requirements) {
    if (!r.fallback_needs || r.present) continue;
    const std::string why = call_fallback_need(backend, r.op);
    r.present = why.empty();
    r.how = r.present ? "through the CPU fallback (checked by a call)" : "not covered by the CPU fallback: " + why;
  }
}

CapabilityCheck check_capabilities(const Backend& backend, const std::vector<const Case*>& cases,
                                   bool call_fallback_needs) {
  CapabilityCheck check;
  const std::optional<c10::DispatchKey> key = backend.dispatch_key();
  if (!key) return check;
  Capabilities caps = probe_capabilities(*key);
  if (caps.can_take_inputs() && call_fallback_needs) check_fallback_needs(backend, caps);
  if (!caps.can_take_inputs()) {
    check.cannot_run = fmt::format(
        "backend {} cannot take even contiguous inputs: it registers no {} kernel for {} (`gauntlet "
        "backend-info --backend {}` lists what it has; docs/backends.md#qualifying-your-backend)",
        backend.name(), c10::toString(*key), fmt::join(caps.missing_required(), ", "), backend.name());
    return check;
  }
  for (const Requirement& r : caps.requirements) {
    if (r.present || r.required) continue;
    if (r.op == "aten::as_strided") {
      std::size_t n = 0;
      for (const Case* c : cases) n += c->key.kind == "op" && c->key.layout != Layout::Contig;
      check.warnings.push_back(
          fmt::format("backend {} has no native aten::as_strided: up to {} of {} cases (layouts t, step2, cl) will be "
                      "UNSUPPORTED, and view ops cannot run",
                      backend.name(), n, cases.size()));
    } else if ((r.op == "aten::_copy_from_and_resize" || r.op == "aten::resize_") && !caps.backend_fallback) {
      continue;  // it matters only to a CPU fallback
    } else if (r.fallback_needs && !call_fallback_needs) {
      continue;  // not settled: no call made
    } else if (r.fallback_needs) {
      // Note [What a fallback cannot cover]: said before the first case, not found in thousands.
      check.warnings.push_back(fmt::format(
          "backend {}'s CPU fallback needs {} from the backend, which it lacks ({}): {} will ERROR (`gauntlet "
          "backend-info --backend {}`)",
          backend.name(), r.op, r.how,
          r.op == "aten::empty_strided"           ? "every op that runs through the fallback"
          : r.op == "aten::_copy_from_and_resize" ? "every in-place or out= op that runs through the fallback"
                                                  : "an op through the fallback whose out= argument must grow",
          backend.name()));
    } else {
      check.warnings.push_back(fmt::format("backend {} has no kernel for {} ({}): the cases that need it will fail",
                                           backend.name(), r.op, r.needed_for));
    }
  }
  return check;
}

}  // namespace gauntlet
