// What a compile path recorded, copied into the outcome (Note [Compile path] in
// harness/python/compiled.cpp, docs/compile-path.md).
#include "gauntlet/core/cases/compile_path.h"

#include <fmt/format.h>

#include "gauntlet/base/stage.h"
#include "gauntlet/core/cases/runner.h"

namespace gauntlet {

void record_compile_stats(const CompileStats& st, Outcome& out) {
  out.graph_breaks = st.graph_breaks;
  out.recompiles = st.recompiles;
  out.regions = st.regions;
  out.compile_ms = st.compile_ms;
  out.dynamo_ms = st.dynamo_ms;
  out.aot_ms = st.aot_ms;
  out.backend_ms = st.backend_ms;
  out.cache_hits = st.cache_hits;
  std::vector<std::string> notes;
  if (!st.breaks.empty()) {
    notes.push_back(fmt::format("graph breaks: {}", fmt::join(st.breaks, "; ")).substr(0, 1000));
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

void keep_compiled_program(const CompiledGraph& program, CaseDetail* detail) {
  if (!detail || !detail->keep_tensors) return;
  if (const python::Program* p = program.program()) detail->program = *p;
  if (const python::DynamoBackend* d = program.dynamo_backend()) detail->dynamo = *d;
}

}  // namespace gauntlet
