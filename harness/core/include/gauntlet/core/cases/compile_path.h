// The compile path of a backend (exec=compile cases, docs/compile-path.md): `cpu` through
// TorchScript's optimizing executor with its fuser, a plugin through its own graph compiler
// (Note [Plugin compile path] in compile_abi.h).
#pragma once

#include <memory>

#include "gauntlet/base/outcome.h"
#include "gauntlet/core/backend/backend.h"
#include "gauntlet/plugin/compile_abi.h"

namespace torch::jit {
struct Graph;
}

namespace gauntlet {

// The process-wide settings a compiled graph's calls need, forward and backward alike, for as
// long as it lives: TorchScript creates the executor of a backward graph at its first backward
// call, with the settings of that moment (the legacy executor, optimising, the CPU fuser on).
class CompileScope {
 public:
  CompileScope();
  ~CompileScope();
  CompileScope(const CompileScope&) = delete;
  CompileScope& operator=(const CompileScope&) = delete;

 private:
  bool profiling_, executor_, optimize_, fuser_;
};

// The CPU's compile path (Backend::compile_graph of `cpu`): `graph` (not modified) under
// TorchScript's optimizing executor with its fuser. Other backends compile through
// Backend::compile_graph (Note [Closed backend interface] in backend.cpp).
std::unique_ptr<CompiledGraph> compile_with_torchscript(const std::shared_ptr<torch::jit::Graph>& graph);

// Copies what a compile path did into the outcome: its counts, and its graph breaks appended to
// `reason` ("graph breaks: aten::gelu (mlp.py:12): ..."; `file` names the source a break's
// "(line N)" points into, empty for a traced graph).
void record_compile_stats(const CompileStats& stats, const std::string& file, Outcome& out);

}  // namespace gauntlet
