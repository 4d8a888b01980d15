// Note [Simulated compiler]: the simulated device's graph compiler, behind its dynamo backend
// `gauntlet_sim` (simulator/python/gauntlet_sim.py, docs/simulator.md). torch.compile hands the
// backend an aten graph (dynamo's graph after AOT autograd: forward, and for training the
// backward); the Python side walks it and asks this file, through the ops `torch.ops.gauntlet_sim.*`
// registered here, what the simulated device decides. The decisions are the simulator's, here:
//
//   - Partition (`takes`). A node is taken when its op has a simulator kernel for its overload, or
//     a kernel the device registers itself (views, copies), or decomposes into other ops
//     (CompositeImplicitAutograd / CompositeExplicitAutograd), and no fault rule of kind
//     `fallback` sends it to the CPU for the inputs it gets. Every other node is a graph break: an
//     op the device would run through the CPU fallback. A node that is taken but reached the CPU
//     fallback when it ran (it decomposes into an op the device lacks: `take_fallbacks` after the
//     node) is a break too. Host-side nodes (symbolic size arithmetic) go with any region.
//   - Compile (`compile_region`). Each region of consecutive taken nodes compiles once per graph,
//     at its first call: dynamo hands a new graph for a new input signature (a recompile, with the
//     guard that failed); a graph with symbolic sizes (dynamic shapes) serves every size. Compiling
//     a region takes host time, trn2::kCompileBaseSeconds plus kCompilePerNodeSeconds per node:
//     compile time grows with the region, and a first run is slower than the runs after it.
//   - Run (`begin_region` / `end_region`). A region runs its nodes with the simulator's kernels
//     (the same numerics as eager) as one fused launch on the simulated clock (Note [Fused
//     regions]): its compute summed, its HBM traffic only what it reads from outside and what it
//     hands on, one launch overhead.
//   - The probe (`probe_begin` / `probe_end`). Whether a node is taken can depend on its inputs (a
//     fault rule for one dtype or size) and on what it decomposes into, so the graph's first call
//     first runs it once, node by node, as a tracing compiler would. That run's results are thrown
//     away; its simulated time is not the device's (its host time counts as compile time).
//
// What it replaced: docs/compile-path.md, "History".
#include <ATen/core/dispatch/Dispatcher.h>
#include <fmt/format.h>
#include <torch/library.h>

#include <chrono>
#include <set>
#include <thread>

#include "sim_torch.h"
#include "state.h"
#include "trn2_constants.h"

namespace gauntlet::sim {

const std::vector<std::string>& kernel_names();

namespace {

c10::OperatorName operator_name(const std::string& op) {
  const auto dot = op.find('.');
  if (dot == std::string::npos) return {op, ""};
  return {op.substr(0, dot), op.substr(dot + 1)};
}

// Why the device cannot take a call of `op` ("aten::name" or "aten::name.overload") whose first
// tensor input has `dtype` and whose largest input has `numel` elements, or "" when it can.
std::string takes(const std::string& op, std::optional<at::ScalarType> dtype, std::int64_t numel) {
  static const std::set<std::string> kernels(kernel_names().begin(), kernel_names().end());
  bool taken = kernels.count(op) > 0;
  if (!taken) {
    auto handle = c10::Dispatcher::singleton().findOp(operator_name(op));
    if (!handle) return "not an operator the device knows";
    taken = handle->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1) ||
            handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd) ||
            handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd);
  }
  if (!taken) return "no kernel on the device";
  const FaultSpec& faults = State::get().config().faults;
  if (!faults.empty()) {
    const std::string dt = dtype ? dtype_name(*dtype) : std::string();
    for (const FaultRule* r : faults.match(op, dt, numel)) {
      if (r->kind == FaultKind::Fallback) return "falls back to the CPU (" + r->text + ")";
    }
  }
  return "";
}

// The ops that reached the CPU fallback since the last take, in order.
std::vector<std::string> take_fallbacks() {
  std::vector<std::string> ops;
  State::get().take_fallbacks([&](const std::string& op, std::int64_t) { ops.push_back(op); });
  return ops;
}

// "Compiles" a region of `nodes` device nodes of a graph whose first call's first tensor has
// `dtype` and whose largest input has `numel` elements: the time a compiler of this kind takes,
// growing with the region. Returns the modelled milliseconds.
double compile_region(std::int64_t nodes, std::optional<at::ScalarType> dtype, std::int64_t numel) {
  double seconds = trn2::kCompileBaseSeconds + trn2::kCompilePerNodeSeconds * double(nodes);
  // The compiler's own fault rules (Note [Fault rules]): the op `sim::compile`, matched on the
  // graph's first call. kind=slow multiplies what a region spends compiling by the factor,
  // kind=sleep adds the factor in milliseconds to each region's compilation.
  const FaultSpec& faults = State::get().config().faults;
  if (!faults.empty()) {
    for (const FaultRule* r : faults.match("sim::compile", dtype ? dtype_name(*dtype) : std::string(), numel)) {
      if (r->kind == FaultKind::Sleep) seconds += r->factor / 1e3;
      if (r->kind == FaultKind::Slow) seconds *= r->factor;
    }
  }
  // Note [Modelled compile cost]: the compile cost is modelled, as sim_time_us is the modelled
  // device time: deterministic, so that compare judges it exactly (a loaded host moves host-time
  // compile figures by a scheduler slice or more: Note [Compile-time noise] in
  // harness/analysis/regress_detectors.cpp). The host sleeps it, so that a first call takes that long.
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return seconds * 1e3;
}

void begin_region() { State::get().begin_region(); }
void end_region(double external_bytes) { State::get().end_region(external_bytes); }

// The probe's simulated time and fallbacks are the compiler's, not the device's: probe_begin
// sets aside the fallbacks recorded before it (the case's own), probe_end puts them back and the
// clock where probe_begin found it.
std::vector<std::pair<std::string, std::int64_t>>& set_aside() {
  static std::vector<std::pair<std::string, std::int64_t>> fallbacks;
  return fallbacks;
}
double probe_begin() {
  State::get().take_fallbacks([](const std::string& op, std::int64_t n) { set_aside().emplace_back(op, n); });
  return State::get().device_time_us();
}
void probe_end(double device_time_us) {
  State::get().take_fallbacks([](const std::string&, std::int64_t) {});
  for (const auto& [op, n] : set_aside()) {
    for (std::int64_t i = 0; i < n; ++i) State::get().record_fallback(op);
  }
  set_aside().clear();
  State::get().reset_device_time();
  if (device_time_us > 0) State::get().charge_seconds(device_time_us / 1e6);
}

}  // namespace

}  // namespace gauntlet::sim

TORCH_LIBRARY(gauntlet_sim, m) {
  using namespace gauntlet::sim;
  m.def("takes(str op, ScalarType? dtype, int numel) -> str", &takes);
  m.def("take_fallbacks() -> str[]", &take_fallbacks);
  m.def("compile_region(int nodes, ScalarType? dtype, int numel) -> float", &compile_region);
  m.def("begin_region() -> ()", &begin_region);
  m.def("end_region(float external_bytes) -> ()", &end_region);
  m.def("probe_begin() -> float", &probe_begin);
  m.def("probe_end(float device_time_us) -> ()", &probe_end);
}
