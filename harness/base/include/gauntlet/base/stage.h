// Note [Failing stage]: every non-PASS result names the stage of its case that failed, so a
// vendor engineer reads "CRASH while copying outputs to the host" instead of a crash blamed on the
// op under test. The runner enters each stage as the case goes (enter_stage: one byte written,
// nothing else), and a result that fails takes the stage it was in (Outcome::stage, a column of
// `results`). A worker that dies cannot say where it was, so the stage lives in a small file its
// orchestrator names ($GAUNTLET_STAGE_FILE), mapped into the worker's memory: the orchestrator
// reads it after the worker died, by a signal or killed for its timeout. The same page keeps the
// first op the case ran through the backend's CPU fallback, so a crash inside a fallback still
// records its fallback_ops. `repro` does the same for the child it runs the case in. No torch.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gauntlet {

enum class Stage : std::uint8_t {
  None = 0,  // not in a case (starting up, between cases)
  Golden,    // making the inputs and the golden result on the CPU (or reading the golden)
  Inputs,    // moving the inputs (and a model's weights) to the device
  Op,        // running the op, model or collective under test on the device
  Outputs,   // copying the outputs back to the host
  Compare,   // comparing the outputs with the golden
  Trace,     // compile path: capturing the graph
  Compile,   // compile path: the backend's compiler
  Compiled,  // compile path: running the compiled code
};

// The stored name: "", "golden", "inputs", "op", "outputs", "compare", "trace", "compile",
// "compiled".
std::string_view stage_name(Stage s);
// What a stored name means, as reports print it ("copying outputs to the host"); "" for "" and
// the name itself for a name this build does not know.
std::string stage_text(std::string_view name);

inline constexpr const char* kStageFileEnv = "GAUNTLET_STAGE_FILE";

// Enters `s` (async-signal-safe: one byte stored).
void enter_stage(Stage s) noexcept;
Stage current_stage() noexcept;
// A new case: stage Golden, and no fallback op noted yet.
void begin_case_stage() noexcept;
// The first op of this case that ran through the CPU fallback (later ones are ignored).
void note_fallback_entered(std::string_view op) noexcept;
std::string fallback_entered();

// Maps `path` (created or truncated) so that the stage and the fallback op noted from now on are
// written there too. Throws gauntlet::Error when it cannot.
void share_stage(const std::string& path);
// share_stage($GAUNTLET_STAGE_FILE) when it is set; nothing when not.
void share_stage_from_env();

// What a process that shared its stage through `path` last wrote; {None, ""} when the file is
// missing or empty.
struct SharedStage {
  Stage stage = Stage::None;
  std::string fallback_op;
};
SharedStage read_shared_stage(const std::string& path);

}  // namespace gauntlet
