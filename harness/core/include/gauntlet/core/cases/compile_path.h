// The compile path of a backend (exec=compile cases, docs/compile-path.md): torch.compile with the
// backend's dynamo backend (Note [Compile path] in harness/python/compiled.cpp).
#pragma once

#include "gauntlet/base/outcome.h"
#include "gauntlet/python/compiled.h"

namespace gauntlet {

// Copies what a compile path did into the outcome: its counts, and its graph breaks appended to
// `reason` ("graph breaks: <reason> (mlp.py:12); recompiles: <the guard that failed>").
void record_compile_stats(const CompileStats& stats, Outcome& out);

struct CaseDetail;
// What was compiled and with what, kept in `detail` when it keeps the case's tensors (a bundle
// compiles it again). Null `detail`: nothing.
void keep_compiled_program(const CompiledGraph& program, CaseDetail* detail);

}  // namespace gauntlet
