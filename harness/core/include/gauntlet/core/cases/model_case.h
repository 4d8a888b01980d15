// Model cases (kind "model", Note [Model keys]): a model of the zoo (models/, gauntlet/models/models.h)
// run on a backend, forward ("infer") or forward and backward ("train"), against an fp64 golden
// computed on the CPU from the same inputs. Note [Model cases] in harness/core/cases/model_case.cpp.
#pragma once

#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

#include "gauntlet/base/case_key.h"
#include "gauntlet/base/outcome.h"
#include "gauntlet/core/backend/backend.h"
#include "gauntlet/core/cases/runner.h"

namespace torch::jit {
struct Graph;
}

namespace gauntlet {

// Runs the case and fills `out` (status, metrics, tolerance, timing, fallbacks, device time).
// Throws what the model throws; run_case classifies it.
// `detail`, when given with keep_tensors, receives the case's tensors (Note [Case tensors]).
void run_model_case(const CaseKey& key, Backend& backend, const RunnerConfig& cfg, Outcome& out, CaseTrace& trace,
                    CaseDetail* detail = nullptr);

// The same for a model file's case (Note [Model file cases] in harness/core/cases/model_file_case.cpp):
// a TorchScript file and its manifest (gauntlet/models/model_file.h), judged per output as the manifest
// says (Note [Output quality]). `detail` as above, for an inference case (a training scenario's
// tensors are not kept).
void run_model_file_case(const CaseKey& key, Backend& backend, const RunnerConfig& cfg, Outcome& out, CaseTrace& trace,
                         CaseDetail* detail = nullptr);

// Note [First divergent node] for any graph: `graph` run node by node from the device's and the
// golden's inputs (a module's graph takes the module itself first), each node's tensors compared
// under `scaled` x max|golden| (Note [Output quality]). Names the first node that leaves it with
// its source file and line, or says that none did.
std::string first_divergent_node(const torch::jit::Graph& graph, const std::vector<c10::IValue>& device_inputs,
                                 const std::vector<c10::IValue>& golden_inputs, at::ScalarType dtype, double scaled);

}  // namespace gauntlet
