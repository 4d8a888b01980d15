// Note [Simulated compiler]: the simulated device's compile path (SIMULATOR.md), what the harness
// calls for exec=compile cases through gauntlet_backend_compile_graph (Note [Plugin compile path]).
//
//   - Partition. The graph's top-level nodes, in order, are split into regions of nodes the
//     device can take. A node is taken when the op has a simulator kernel for its overload, or a
//     kernel the device registers itself (views, copies), or decomposes into other ops
//     (CompositeImplicitAutograd / CompositeExplicitAutograd), and no fault rule of kind
//     `fallback` sends it to the CPU for the inputs it gets. Host-side nodes (constants, lists,
//     tuples, scalar arithmetic, a tensor's sizes, dtype or device: no tensor data moves) go with
//     any region. Every other node is a graph break: an op the device would run through the CPU
//     fallback, a read of a tensor's value on the host (item(), int(t): data-dependent), or
//     control flow (prim::If, prim::Loop, whose bodies then run eagerly, op by op). A break ends the region
//     before it; the node runs eagerly; a new region starts after it.
//   - Compile. The compiled graph keeps a cache keyed by its input signature (every tensor
//     input's sizes and dtype). A signature not seen before compiles every region whose own inputs
//     have a signature not seen before (a region that sees only weights reuses its code); the
//     first compile is a compile, the others recompiles. Compiling a region takes host time,
//     trn2::kCompileBaseSeconds plus kCompilePerNodeSeconds per node: compile time grows with the
//     region, and a first run is slower than the runs after it.
//   - Run. A region runs its nodes with the simulator's kernels (the same numerics as eager) as
//     one fused launch on the simulated clock (Note [Fused regions]): its compute summed, its
//     HBM traffic only what it reads from outside and what it hands on, one launch overhead.
//     Autograd records the operations as in eager, so training runs a backward through them
//     (which is charged kernel by kernel, as eager).
#include <ATen/core/dispatch/Dispatcher.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "gauntlet/plugin/compile_abi.h"
#include "gauntlet/plugin/graph_step.h"
#include "sim_torch.h"
#include "state.h"
#include "trn2_constants.h"

namespace gauntlet::sim {

const std::vector<std::string>& kernel_names();

namespace {

using torch::jit::Node;
using torch::jit::Value;
using Env = GraphEnv;

bool is_tensorish(const c10::TypePtr& t) {
  if (t->kind() == c10::TypeKind::TensorType) return true;
  if (auto opt = t->cast<c10::OptionalType>()) return is_tensorish(opt->getElementType());
  if (auto list = t->cast<c10::ListType>()) return is_tensorish(list->getElementType());
  if (auto tuple = t->cast<c10::TupleType>()) {
    for (const auto& e : tuple->elements()) {
      if (is_tensorish(e)) return true;
    }
  }
  return false;
}

// Reads a tensor's values on the host (a scalar out of device memory): the compiler cannot
// trace through it, as a tracing compiler cannot (a data-dependent graph break).
bool reads_values(const Node* n) {
  static const std::set<std::string> kinds{"aten::item",
                                           "aten::Int",
                                           "aten::Float",
                                           "aten::Bool",
                                           "aten::ScalarImplicit",
                                           "aten::tolist",
                                           "aten::is_nonzero",
                                           "aten::equal",
                                           "aten::_local_scalar_dense"};
  if (!kinds.count(n->kind().toQualString())) return false;
  for (const Value* v : n->inputs()) {
    if (is_tensorish(v->type())) return true;  // float(t), not float(an int)
  }
  return false;
}

// Host-side: moves no tensor data. Constants, packing values into lists and tuples, scalar
// arithmetic, and metadata of a tensor (its sizes, dim, dtype, device): nothing in or out is a
// tensor, or tensors go in and only metadata comes out.
bool host_side(const Node* n) {
  if (!n->blocks().empty()) return false;
  const auto kind = n->kind();
  if (kind == torch::jit::prim::Constant || kind == torch::jit::prim::ListConstruct ||
      kind == torch::jit::prim::TupleConstruct || kind == torch::jit::prim::ListUnpack ||
      kind == torch::jit::prim::TupleUnpack) {
    return true;
  }
  for (const Value* v : n->outputs()) {
    if (is_tensorish(v->type())) return false;
  }
  return !reads_values(n);
}

std::string full_name(const c10::OperatorName& op) {
  return op.overload_name.empty() ? op.name : op.name + "." + op.overload_name;
}

// Note [Fault rules]: a fault rule (fault_spec.h, GAUNTLET_SIM_FAULTS) matches an op call on the
// op's name, the dtype of its first tensor input and the largest input's element count; these are
// those facts for a call.
void call_facts(const std::vector<c10::IValue>& inputs, std::string* dtype, std::int64_t* numel) {
  for (const c10::IValue& v : inputs) {
    if (!v.isTensor() || !v.toTensor().defined()) continue;
    const at::Tensor& t = v.toTensor();
    if (dtype->empty()) *dtype = dtype_name(t.scalar_type());
    *numel = std::max(*numel, t.numel());
  }
}

// Why the device cannot take `n` with these inputs, or "" when it can.
std::string break_reason(const Node* n, const std::vector<c10::IValue>& inputs) {
  if (!n->blocks().empty()) return "control flow";
  if (reads_values(n)) return "reads a tensor's value on the host (data-dependent)";
  if (host_side(n)) return "";
  const c10::FunctionSchema* schema = n->maybeSchema();
  if (!schema) return "no schema";
  const std::string name = full_name(schema->operator_name());
  static const std::set<std::string> kernels(kernel_names().begin(), kernel_names().end());
  bool taken = kernels.count(name) > 0;
  if (!taken) {
    auto handle = c10::Dispatcher::singleton().findOp(schema->operator_name());
    taken = handle && (handle->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1) ||
                       handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd) ||
                       handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd));
  }
  if (!taken) return "no kernel on the device";
  const FaultSpec& faults = State::get().config().faults;
  if (!faults.empty()) {
    std::string dtype;
    std::int64_t numel = 0;
    call_facts(inputs, &dtype, &numel);
    for (const FaultRule* r : faults.match(name, dtype, numel)) {
      if (r->kind == FaultKind::Fallback) return "falls back to the CPU (" + r->text + ")";
    }
  }
  return "";
}

int line_of(const Node* n) {
  const torch::jit::SourceRange& r = n->sourceRange();
  const auto src = r.source();
  if (!src) return 0;
  return static_cast<int>(src->lineno_to_source_lineno(src->lineno_for_offset(r.start())));
}

std::string signature(const std::vector<c10::IValue>& values) {
  std::string s;
  for (const c10::IValue& v : values) {
    if (v.isTensor() && v.toTensor().defined()) {
      const at::Tensor& t = v.toTensor();
      s += fmt::format("{}[{}];", c10::toString(t.scalar_type()), fmt::join(t.sizes(), ","));
    } else {
      s += "-;";
    }
  }
  return s;
}

double tensor_bytes(const c10::IValue& v) {
  if (v.isTensor() && v.toTensor().defined()) return double(v.toTensor().nbytes());
  if (v.isTensorList()) {
    double b = 0;
    for (const at::Tensor& t : v.toTensorList().vec()) b += double(t.nbytes());
    return b;
  }
  return 0;
}

void run_node(const Node* node, Env& env) { step_node(node, env); }

void run_block(const torch::jit::Block* block, Env& env);

// prim::If and prim::Loop, eagerly (a graph break).
void run_control_flow(const Node* node, Env& env) {
  if (node->kind() == torch::jit::prim::If) {
    const bool cond = env.at(node->input(0)).toBool();
    const torch::jit::Block* b = node->blocks().at(cond ? 0 : 1);
    run_block(b, env);
    for (std::size_t k = 0; k < node->outputs().size(); ++k) env[node->outputs()[k]] = env.at(b->outputs()[k]);
    return;
  }
  TORCH_CHECK(node->kind() == torch::jit::prim::Loop, "gauntlet_sim compiler: cannot run ",
              node->kind().toQualString());
  // inputs: max trip count, initial condition, carried...; block: (i, carried...) -> (cond, carried...)
  const torch::jit::Block* body = node->blocks().at(0);
  const std::int64_t max_trips = env.at(node->input(0)).toInt();
  bool cond = env.at(node->input(1)).toBool();
  const std::size_t carried = node->inputs().size() - 2;
  std::vector<c10::IValue> values;
  for (std::size_t k = 0; k < carried; ++k) values.push_back(env.at(node->input(2 + k)));
  for (std::int64_t i = 0; cond && i < max_trips; ++i) {
    env[body->inputs()[0]] = i;
    for (std::size_t k = 0; k < carried; ++k) env[body->inputs()[1 + k]] = values[k];
    run_block(body, env);
    cond = env.at(body->outputs()[0]).toBool();
    for (std::size_t k = 0; k < carried; ++k) values[k] = env.at(body->outputs()[1 + k]);
  }
  for (std::size_t k = 0; k < carried; ++k) env[node->outputs()[k]] = values[k];
}

void run_block(const torch::jit::Block* block, Env& env) {
  for (const Node* n : block->nodes()) {
    if (n->blocks().empty()) {
      run_node(n, env);
    } else {
      run_control_flow(n, env);
    }
  }
}

struct Segment {
  bool region = true;  // a compiled region, else one node run eagerly (a break)
  std::vector<const Node*> nodes;
  std::int64_t device_nodes = 0;      // nodes that are not host-side (what compile time grows with)
  std::vector<const Value*> inputs;   // tensor values from before the region
  std::vector<const Value*> outputs;  // tensor values used after it
  std::set<std::string> compiled;     // input signatures this region has code for
};

class SimCompiledGraph final : public CompiledGraph {
 public:
  explicit SimCompiledGraph(std::shared_ptr<torch::jit::Graph> graph) : graph_(std::move(graph)) {}

  std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) override {
    TORCH_CHECK(inputs.size() == graph_->inputs().size(), "gauntlet_sim compiler: the graph takes ",
                graph_->inputs().size(), " inputs, got ", inputs.size());
    Env env;
    for (std::size_t i = 0; i < inputs.size(); ++i) env[graph_->inputs()[i]] = inputs[i];
    const std::string sig = signature(inputs);
    if (!partitioned_) {
      call_facts(inputs, &call_dtype_, &call_numel_);
      partition(env);  // from the first call's values: fault rules see real inputs
    }
    const bool new_signature = signatures_.insert(sig).second;
    if (new_signature) {
      ++stats_.compiles;
      if (stats_.compiles > 1) ++stats_.recompiles;
    }
    for (Segment& seg : segments_) {
      if (!seg.region) {
        run_control_flow_or_node(seg.nodes.front(), env);
        continue;
      }
      if (seg.device_nodes > 0) {
        std::vector<c10::IValue> ins;
        for (const Value* v : seg.inputs) ins.push_back(env.at(v));
        if (seg.compiled.insert(signature(ins)).second) compile(seg);
        State::get().begin_region();
      }
      double bytes = 0;
      for (const Value* v : seg.inputs) bytes += tensor_bytes(env.at(v));
      try {
        for (const Node* n : seg.nodes) run_node(n, env);
      } catch (...) {
        if (seg.device_nodes > 0) State::get().end_region(bytes);
        throw;
      }
      for (const Value* v : seg.outputs) bytes += tensor_bytes(env.at(v));
      if (seg.device_nodes > 0) State::get().end_region(bytes);
    }
    std::vector<c10::IValue> out;
    for (const Value* v : graph_->outputs()) out.push_back(env.at(v));
    return out;
  }

  CompileStats stats() const override { return stats_; }

 private:
  static void run_control_flow_or_node(const Node* n, Env& env) {
    if (n->blocks().empty()) {
      run_node(n, env);
    } else {
      run_control_flow(n, env);
    }
  }

  // Splits the top-level nodes into regions and breaks. Whether an op is taken can depend on its
  // inputs (a fault rule for one dtype or size) and on what it decomposes into, so the graph runs
  // once, eagerly, alongside, as a tracing compiler would: each node decided from its real inputs
  // and from whether it reached the CPU fallback. That run's results are thrown away; its
  // simulated time and fallbacks are not the device's (its host time counts as compile time).
  void partition(const Env& start) {
    Env env = start;
    const double t0 = State::get().device_time_us();
    std::vector<std::pair<const Node*, bool>> decided;
    for (const Node* n : graph_->nodes()) {
      std::vector<c10::IValue> ins;
      for (const Value* v : n->inputs()) ins.push_back(env.count(v) ? env.at(v) : c10::IValue());
      std::string why = break_reason(n, ins);
      run_control_flow_or_node(n, env);
      // An op that decomposes into one the device lacks reaches the CPU fallback: the compiler
      // cannot take it either (no fallback hides inside a compiled region).
      std::vector<std::string> fell_back;
      State::get().take_fallbacks([&](const std::string& op, std::int64_t) { fell_back.push_back(op); });
      if (why.empty() && !fell_back.empty() && n->blocks().empty()) {
        why = fmt::format("decomposes into {}, which falls back to the CPU", fmt::join(fell_back, ", "));
      }
      decided.emplace_back(n, why.empty());
      if (!why.empty()) {
        ++stats_.graph_breaks;
        const int line = line_of(n);  // 0 in a traced graph: no source
        stats_.breaks.push_back(line > 0 ? fmt::format("{} (line {}): {}", n->kind().toQualString(), line, why)
                                         : fmt::format("{}: {}", n->kind().toQualString(), why));
      }
    }
    // The probe's cost is the compiler's, not the device's.
    State::get().reset_device_time();
    if (t0 > 0) State::get().charge_seconds(t0 / 1e6);

    for (const auto& [n, taken] : decided) {
      if (!taken) {
        segments_.push_back(Segment{false, {n}, 0, {}, {}, {}});
        continue;
      }
      if (segments_.empty() || !segments_.back().region) segments_.push_back(Segment{});
      Segment& seg = segments_.back();
      seg.nodes.push_back(n);
      if (!host_side(n)) ++seg.device_nodes;
    }
    for (Segment& seg : segments_) {
      if (!seg.region) continue;
      if (seg.device_nodes > 0) ++stats_.regions;
      std::unordered_set<const Node*> inside(seg.nodes.begin(), seg.nodes.end());
      std::unordered_set<const Value*> seen;
      for (const Node* n : seg.nodes) {
        for (const Value* v : n->inputs()) {
          if (!inside.count(v->node()) && is_tensorish(v->type()) && seen.insert(v).second) seg.inputs.push_back(v);
        }
        for (const Value* v : n->outputs()) {
          if (!is_tensorish(v->type())) continue;
          for (const torch::jit::Use& u : v->uses()) {
            if (!inside.count(u.user)) {
              seg.outputs.push_back(v);
              break;
            }
          }
        }
      }
    }
    partitioned_ = true;
  }

  // "Compiles" a region: the time a compiler of this kind takes, growing with the region.
  void compile(const Segment& seg) {
    double seconds = trn2::kCompileBaseSeconds + trn2::kCompilePerNodeSeconds * double(seg.device_nodes);
    for (const FaultRule* r : compiler_faults()) {
      if (r->kind == FaultKind::Sleep) seconds += r->factor / 1e3;
      if (r->kind == FaultKind::Slow) seconds *= r->factor;
    }
    // Note [Modelled compile cost]: compile_ms is the modelled cost, as sim_time_us is the
    // modelled device time: deterministic, so that compare judges it exactly (a loaded host moves
    // host-time compile figures by a scheduler slice or more: Note [Compile-time noise] in
    // harness/analysis/regress.cpp). The host sleeps it, so that a first call takes that long.
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stats_.compile_ms += seconds * 1e3;
  }

  std::shared_ptr<torch::jit::Graph> graph_;
  std::string call_dtype_;  // the first call's facts, for the compiler's fault rules
  std::int64_t call_numel_ = 0;

  // The compiler's own fault rules (Note [Fault rules]): the op `sim::compile`, matched on the
  // graph's first call. kind=slow multiplies what a call spends compiling by the factor,
  // kind=sleep adds the factor in milliseconds to each region's compilation.
  std::vector<const FaultRule*> compiler_faults() const {
    const FaultSpec& faults = State::get().config().faults;
    if (faults.empty()) return {};
    return faults.match("sim::compile", call_dtype_, call_numel_);
  }
  bool partitioned_ = false;
  std::vector<Segment> segments_;
  std::set<std::string> signatures_;
  CompileStats stats_;
};

}  // namespace

}  // namespace gauntlet::sim

extern "C" __attribute__((visibility("default"))) void* gauntlet_backend_compile_graph(void* graph) {
  if (!graph) return nullptr;
  const auto& g = *static_cast<std::shared_ptr<torch::jit::Graph>*>(graph);
  return new gauntlet::sim::SimCompiledGraph(g);
}
