// What `gauntlet list` shows of the catalogs, as the text it prints (one line a row) or, with
// `json`, the JSON document of `list --json` (json_schema_version first; docs/cli.md "list").
#pragma once

#include <cstdint>
#include <string>

#include "gauntlet/base/command_line.h"

namespace gauntlet {

struct Suite;
struct ExecutedOpsOfModels;

// The op table: name, aten op, family, backward, dtypes, inputs and arguments.
std::string ops_listing(bool json);
// The collectives: c10d name, dtypes, arguments.
std::string colls_listing(bool json);
// The model zoo, then the model files this process knows (Note [Model file registry]).
std::string models_listing(bool json);
// Note [Executed ops], listed: the ops models execute, the models that execute them and their
// calls, and whether the op table has them or exempts them (Note [Exempt ops]).
std::string executed_ops_listing(const ExecutedOpsOfModels& g, bool json);
// Every suite of `dir` with its count and description (or why it cannot be loaded).
std::string suites_listing(const std::string& dir);
// The suites `suite` includes, each with its count, and what they share (Note [Included suites]).
std::string parts_listing(const Suite& suite, bool json);

// `gauntlet list`'s options.
struct ListOptions {
  std::string suite, filter, suites_dir, shard;
  bool count = false, json = false, ops = false, suites = false, colls = false, models = false;
  bool parts = false;                // --parts: the suites a suite includes, with their counts
  std::string ops_of_models;         // a suite: the ops its models execute (Note [Executed ops])
  bool ops_of_models_given = false;  // --ops-of-models, with or without a suite
  std::string db;                    // --db with --ops-of-models: a stored run's records
  long long run = 0;                 // --run: that run (0: the latest)
};
void describe_options(OptionSink& s, ListOptions& o);  // Note [Options beside their fields]
// What `gauntlet list` prints for `o`, and its exit code (1: a model of --ops-of-models could not
// be recorded). Throws gauntlet::Error for bad input.
struct Listing {
  std::string text;
  int exit_code = 0;
};
Listing listing(const ListOptions& o);

}  // namespace gauntlet
