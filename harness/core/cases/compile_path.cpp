// Note [Compile path]: how exec=compile cases compile (docs/compile-path.md).
//   - `cpu`: TorchScript's graph executor as it optimizes for real: the legacy executor with its
//     optimisation passes and the legacy fuser on the CPU (LIBTORCH-NOTES: Debian's libtorch has
//     no LLVM for NNC, so this is the fuser that really fuses here; it writes each
//     prim::FusionGroup as C++ and compiles it with the system compiler at run time). Regions
//     are the fusion groups of the execution plan; a compile is a new execution plan (the
//     executor specialises on each input signature it meets: dtypes, ranks, requires_grad, not
//     sizes); compile time is what the calls that made a plan took beyond the fastest call that
//     made none. TorchScript takes the whole graph: no graph breaks.
//   - a plugin: its gauntlet_backend_compile_graph (the simulator's: Note [Simulated compiler]).
#include "gauntlet/core/cases/compile_path.h"

#include <fmt/format.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/graph_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "gauntlet/models/models.h"

namespace gauntlet {

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t count_fusion_groups(const torch::jit::Block* block) {
  std::int64_t n = 0;
  for (const torch::jit::Node* node : block->nodes()) {
    if (node->kind() == torch::jit::prim::FusionGroup) ++n;
    for (const torch::jit::Block* b : node->blocks()) n += count_fusion_groups(b);
    if (node->hasAttribute(torch::jit::attr::Subgraph) && node->kind() != torch::jit::prim::FusionGroup) {
      n += count_fusion_groups(node->g(torch::jit::attr::Subgraph)->block());  // a DifferentiableGraph's forward
    }
  }
  return n;
}

class TorchScriptCompiled final : public CompiledGraph {
 public:
  explicit TorchScriptCompiled(const std::shared_ptr<torch::jit::Graph>& graph)
      : fn_("forward", one_output(graph), nullptr) {}

  std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) override {
    CompileScope scope;  // the caller holds one too, for the backward
    const std::size_t before = plans();
    torch::jit::Stack stack(std::move(inputs));
    const auto t0 = Clock::now();
    fn_.run(stack);
    if (packed_ && stack.size() == 1 && stack[0].isTuple()) {
      std::vector<c10::IValue> items = stack[0].toTupleRef().elements().vec();
      stack = torch::jit::Stack(items.begin(), items.end());
    }
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (plans() > before) {
      ++stats_.compiles;
      if (stats_.compiles > 1) ++stats_.recompiles;
      compiling_ms_.push_back(ms);
    } else {
      fastest_ms_ = std::min(fastest_ms_, ms);
    }
    return std::vector<c10::IValue>(stack.begin(), stack.end());
  }

  CompileStats stats() const override {
    CompileStats s = stats_;
    const double base = fastest_ms_ == std::numeric_limits<double>::infinity() ? 0.0 : fastest_ms_;
    for (double ms : compiling_ms_) s.compile_ms += std::max(0.0, ms - base);
    auto state = const_cast<torch::jit::GraphFunction&>(fn_).get_executor().getDebugState();
    for (const auto& [spec, plan] : state.execution_plans) {
      (void)spec;
      s.regions = std::max(s.regions, count_fusion_groups(plan.graph->block()));
    }
    return s;
  }

 private:
  std::size_t plans() { return fn_.get_executor().getDebugState().execution_plans.size(); }

  // A graph function returns one value: a graph with several outputs (a traced op returning two
  // tensors) returns them as a tuple, unpacked again after each call.
  std::shared_ptr<torch::jit::Graph> one_output(const std::shared_ptr<torch::jit::Graph>& graph) {
    std::shared_ptr<torch::jit::Graph> g = graph->copy();
    if (g->outputs().size() == 1) return g;
    torch::jit::Node* tuple = g->createTuple(g->outputs());
    g->appendNode(tuple);
    while (!g->outputs().empty()) g->eraseOutput(0);
    g->registerOutput(tuple->output());
    packed_ = true;
    return g;
  }

  bool packed_ = false;  // before fn_: one_output() sets it while fn_ is made
  torch::jit::GraphFunction fn_;
  CompileStats stats_;
  std::vector<double> compiling_ms_;
  double fastest_ms_ = std::numeric_limits<double>::infinity();
};

}  // namespace

CompileScope::CompileScope()
    : profiling_(torch::jit::getProfilingMode().load()),
      executor_(torch::jit::getExecutorMode().load()),
      optimize_(torch::jit::getGraphExecutorOptimize()),
      fuser_(torch::jit::canFuseOnCPULegacy()) {
  torch::jit::getProfilingMode() = false;
  torch::jit::getExecutorMode() = false;
  torch::jit::setGraphExecutorOptimize(true);
  torch::jit::overrideCanFuseOnCPULegacy(true);
}

CompileScope::~CompileScope() {
  torch::jit::getProfilingMode() = profiling_;
  torch::jit::getExecutorMode() = executor_;
  torch::jit::setGraphExecutorOptimize(optimize_);
  torch::jit::overrideCanFuseOnCPULegacy(fuser_);
}

void record_compile_stats(const CompileStats& st, const std::string& file, Outcome& out) {
  out.graph_breaks = st.graph_breaks;
  out.recompiles = st.recompiles;
  out.regions = st.regions;
  out.compile_ms = st.compile_ms;
  if (st.breaks.empty()) return;
  std::string text = fmt::format("graph breaks: {}", fmt::join(st.breaks, "; "));
  if (!file.empty()) {  // "(line 52)" names a line of the model's file
    for (std::size_t at = text.find("(line "); at != std::string::npos; at = text.find("(line ", at + 1)) {
      text.replace(at, 6, "(" + file + ":");
    }
  }
  out.reason += (out.reason.empty() ? "" : "; ") + text.substr(0, 1000);
}

std::unique_ptr<CompiledGraph> compile_with_torchscript(const std::shared_ptr<torch::jit::Graph>& graph) {
  return std::make_unique<TorchScriptCompiled>(graph);
}

}  // namespace gauntlet
