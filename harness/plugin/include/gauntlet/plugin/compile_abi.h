// Note [Plugin compile path]: a backend's graph compiler, as the harness calls it for
// exec=compile cases (docs/compile-path.md). A backend library that exports
//   extern "C" void* gauntlet_backend_compile_graph(void* graph);
// takes `graph`, a std::shared_ptr<torch::jit::Graph>* (the harness keeps it alive for the
// call), and returns a new gauntlet::CompiledGraph* that the caller owns (delete), or null when it
// cannot compile at all. The compiled object is called many times: with the inputs of the first
// call, then possibly with inputs of other shapes (a shape sequence), which the backend compiles
// again as it really would. Like the process-group factory (Note [Plugin process groups]) this
// passes C++ objects: the library must be built against the harness's libtorch. A library without
// it has no compile path of its own: its compile cases are UNSUPPORTED.
#pragma once

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gauntlet {

// What a compile path did, summed over every call since the object was made.
struct CompileStats {
  std::int64_t graph_breaks = 0;    // nodes the compiler could not take (each runs eagerly)
  std::int64_t regions = 0;         // compiled regions (sim) or fusion groups (cpu) in the graph
  std::int64_t compiles = 0;        // compilations of the graph for an input signature
  std::int64_t recompiles = 0;      // of those, the ones after the first (a new shape or dtype)
  double compile_ms = 0;            // time spent compiling: host time, or a simulated compiler's modelled cost
  std::vector<std::string> breaks;  // "aten::gelu (mlp.py:12)": why and where the graph broke
  // What torch.compile records beyond that (zero or empty from a plugin's compiler):
  double dynamo_ms = 0;   // of compile_ms, dynamo's tracing and guards
  double backend_ms = 0;  // of compile_ms, the backend's compiler (AOT autograd and inductor for `cpu`)
  std::vector<std::string> recompile_reasons;  // the guard that failed, per recompile
  std::string recompile_limit;                 // non-empty: the limit was reached and the frame ran eagerly
};

class CompiledGraph {
 public:
  virtual ~CompiledGraph() = default;
  // Runs the graph on the backend: the graph's inputs in, its outputs out (autograd records the
  // operations, so a backward through the outputs works).
  virtual std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) = 0;
  virtual CompileStats stats() const = 0;
};

}  // namespace gauntlet

extern "C" {
typedef void* (*gauntlet_backend_compile_graph_t)(void* graph);
}
