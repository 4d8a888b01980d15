// `gauntlet reduce` around the reduction (gauntlet/core/reduce/reduce.h): the cases run in batches of worker
// processes, a model case's start at its first divergent node (Note [Model reduction]), and the
// result as text and JSON.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gauntlet/core/reduce/reduce.h"
#include "gauntlet/run/worker_protocol.h"

namespace gauntlet {

// Runs batches of keys through `workers` worker processes (one Orchestrator run per batch, no
// retries: a crash is the answer, not an accident), each worker's stderr in `log_dir`. A key the
// workers did not run is an ERROR "not run: why".
RunCases worker_batches(const WorkerSettings& settings, int workers, double timeout_s, const std::string& log_dir);

// Throws gauntlet::Error unless `given` (the case as run on `backend`) fails in a way reduction keeps.
void check_reducible(const Outcome& given, const CaseKey& key, const std::string& backend);

// Note [Model reduction]: a model case that FAILs, taken to the op cases of its first divergent
// node, each run on its own. Throws gauntlet::Error when the case is not a FAIL or names no node
// with inputs.
struct ModelStart {
  DivergentNode node;
  std::vector<std::string> op_keys;  // empty: `why`, and nothing ran
  std::string why;
  std::vector<Outcome> op_outcomes;    // op_keys', in order
  std::optional<std::size_t> failing;  // the first that fails in a way reduction keeps
};
ModelStart model_start(const Outcome& given, const std::string& backend, const RunCases& run);
// "reduce / fails / node" lines, then a line per op case run.
std::string model_start_text(const CaseKey& key, const Outcome& given, const std::string& backend, const ModelStart& m,
                             bool with_op_cases);
// {"key", "status", "signature", "divergent_node", "op_cases": [{"key", "status"}]}.
nlohmann::json model_start_json(const CaseKey& key, const Outcome& given, const ModelStart& m);

// What a reduction is shown with beside its result.
struct ReduceShown {
  std::string backend;
  CaseKey start;          // the case reduction started from
  Outcome start_outcome;  // ... and how it failed
  double seconds = 0;
  int max_candidates = 0;
  std::string repro;  // the standalone repro command of the smallest case
};
// The steps, the smallest case, its verdict, the cost and the repro command.
std::string reduce_text(const ReduceResult& r, const ReduceShown& s);
// `reduce --json` (json_schema_version, original, smallest, steps, cost, repro).
nlohmann::json reduce_json(const ReduceResult& r, const ReduceShown& s);

}  // namespace gauntlet
