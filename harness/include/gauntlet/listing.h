// What `gauntlet list` shows of the catalogs, as the text it prints (one line a row) or, with
// `json`, the JSON document of `list --json` (json_schema_version first; docs/cli.md "list").
#pragma once

#include <string>

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

}  // namespace gauntlet
