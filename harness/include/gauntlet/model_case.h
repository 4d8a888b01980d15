// Model cases (kind "model", Note [Model keys]): a model of the zoo (models/, gauntlet/models.h)
// run on a backend, forward ("infer") or forward and backward ("train"), against an fp64 golden
// computed on the CPU from the same inputs. Note [Model cases] in harness/src/model_case.cpp.
#pragma once

#include "gauntlet/backend.h"
#include "gauntlet/case_key.h"
#include "gauntlet/outcome.h"
#include "gauntlet/runner.h"

namespace gauntlet {

// Runs the case and fills `out` (status, metrics, tolerance, timing, fallbacks, device time).
// Throws what the model throws; run_case classifies it.
void run_model_case(const CaseKey& key, Backend& backend, const RunnerConfig& cfg, Outcome& out, CaseTrace& trace);

}  // namespace gauntlet
