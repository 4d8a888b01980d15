// What models execute (Note [Executed ops]) and the op cases cut from it (Note [Ops from models],
// harness/core/catalog/ops_from_models.cpp): `list --ops-of-models`, `ops-from-models` and `reduce` use them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gauntlet/base/case_key.h"
#include "gauntlet/base/command_line.h"
#include "gauntlet/base/outcome.h"

namespace gauntlet {

// Note [Executed ops]: what each model of a suite executes (run once on the CPU), or what the model
// cases of a stored run recorded on their device.
struct ModelOpRecord {
  ExecutedOp op;
  bool train = false;  // recorded by a training case
};
struct ExecutedOpsOfModels {
  std::string suite;                                         // "" when read from a run without one
  std::string source;                                        // where the records came from, in words
  std::map<std::string, std::vector<ModelOpRecord>> models;  // model name -> its records
  std::vector<std::string> failed;                           // "<model>: why" for models without records
};
// suite "" needs a db; run 0 is the db's latest run.
ExecutedOpsOfModels gather_executed_ops(const std::string& suite, const std::string& dir, const std::string& db,
                                        long long run);
// Note [Ops from models], for one record: the op case of the table it is (key), or why none
// (problem; in_table false when no op of the table runs the record's aten op). `train`: a record
// of a training case, cut eager-bwd where the op has a backward.
struct OpCaseCut {
  std::optional<CaseKey> key;
  std::string problem;
  bool in_table = false;
  bool restrided = false;  // strides no layout reproduces: cut contiguous
};
OpCaseCut op_case_of(const ExecutedOp& e, bool train);
// The sizes of a record's tensor inputs, in order (None and tensor lists left out).
std::vector<Shape> record_tensor_shapes(const ExecutedOp& e);

// `gauntlet ops-from-models`'s options (Note [Options beside their fields]).
struct OpsFromModelsOptions {
  std::string suite, db, suites_dir, out;
  std::string name = "ops_from_models";  // the generated suite's name
  long long run = 0;
};
void describe_options(OptionSink& s, OpsFromModelsOptions& o);
// The suite file of op cases cut from what `o`'s models executed, and what the command says of it
// on stderr: `warnings` (models that could not be recorded) first, then `summary`. Throws
// gauntlet::Error for bad options or when no case could be cut.
struct CutSuite {
  std::string text;
  std::vector<std::string> warnings;
  std::string summary;  // lines
};
CutSuite cut_ops_suite(const OpsFromModelsOptions& o);

}  // namespace gauntlet
