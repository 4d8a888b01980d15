// The compile path's pieces that every backend shares (Note [Compile path] in
// harness/python/compiled.cpp, docs/compile-path.md): the executor settings a plugin's TorchScript
// graphs run under, and what a compile path recorded copied into the outcome.
#include "gauntlet/core/cases/compile_path.h"

#include <fmt/format.h>
#include <torch/csrc/jit/passes/graph_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include "gauntlet/base/stage.h"

namespace gauntlet {

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
  if (st.dynamo_ms > 0 || st.backend_ms > 0) {  // torch.compile splits it; a plugin's compiler does not
    out.dynamo_ms = st.dynamo_ms;
    out.backend_ms = st.backend_ms;
  }
  std::vector<std::string> notes;
  if (!st.breaks.empty()) {
    std::string text = fmt::format("graph breaks: {}", fmt::join(st.breaks, "; "));
    if (!file.empty()) {  // "(line 52)" from a plugin's compiler names a line of the model's file
      for (std::size_t at = text.find("(line "); at != std::string::npos; at = text.find("(line ", at + 1)) {
        text.replace(at, 6, "(" + file + ":");
      }
    }
    notes.push_back(text.substr(0, 1000));
  }
  if (!st.recompile_reasons.empty()) {
    notes.push_back(fmt::format("recompiles: {}", fmt::join(st.recompile_reasons, "; ")).substr(0, 600));
  }
  for (const std::string& note : notes) out.reason += (out.reason.empty() ? "" : "; ") + note;
  // Past the recompile limit dynamo stops compiling the frame and runs it eagerly: the outputs
  // may be right, but what was asked (a compiled program) did not happen. A finding, not a pass.
  if (!st.recompile_limit.empty() && out.status == Status::Pass) {
    out.status = Status::Fail;
    out.error = fmt::format(
        "torch.compile reached its recompile limit ({}) after {} recompiles and ran the "
        "frame eagerly from then on",
        st.recompile_limit, st.recompile_reasons.size());
    out.stage = stage_name(Stage::Compiled);
  }
}

}  // namespace gauntlet
