// The compile path of a backend (exec=compile cases, docs/compile-path.md): `cpu` through
// torch.compile with inductor (Note [Compile path] in harness/python/compiled.cpp), a plugin
// through its own graph compiler (Note [Plugin compile path] in compile_abi.h).
#pragma once

#include <memory>

#include "gauntlet/base/outcome.h"
#include "gauntlet/core/backend/backend.h"
#include "gauntlet/plugin/compile_abi.h"

namespace gauntlet {

// The process-wide settings a plugin's compiled TorchScript graph runs under, forward and backward
// alike, for as long as it lives: TorchScript creates the executor of a backward graph at its
// first backward call, with the settings of that moment (the legacy executor, optimising, the CPU
// fuser on).
class CompileScope {
 public:
  CompileScope();
  ~CompileScope();
  CompileScope(const CompileScope&) = delete;
  CompileScope& operator=(const CompileScope&) = delete;

 private:
  bool profiling_, executor_, optimize_, fuser_;
};

// Copies what a compile path did into the outcome: its counts, and its graph breaks appended to
// `reason` ("graph breaks: <reason> (mlp.py:12); recompiles: <the guard that failed>"; `file`
// names the model source a plugin's "(line N)" points into, empty for a traced graph).
void record_compile_stats(const CompileStats& stats, const std::string& file, Outcome& out);

}  // namespace gauntlet
