// `gauntlet golden build | verify | freeze | gc` (Note [Golden store] in
// golden/src/golden_store.cpp; the work itself is gauntlet/golden/golden_jobs.h): the suites' cases
// chosen, the store opened, and what the command says.
#pragma once

#include <string>

#include "gauntlet/base/command_line.h"

namespace gauntlet {

// Its options (Note [Options beside their fields]).
struct GoldenOptions {
  std::string action;  // build, verify, freeze, gc
  std::string store, suite, filter, suites_dir, release, shard;
  int workers = 1;
  long long sample = 100;
  unsigned long long seed = 0;
  bool quiet = false;
};
// The options of `golden <action>`.
void describe_options(OptionSink& s, GoldenOptions& o, const std::string& action);

// Runs o.action, showing progress on stderr when it is a terminal (unless quiet); what it prints
// and the exit code (verify: 1 when an object is corrupt or a golden drifted). Throws
// gauntlet::Error for bad input.
struct GoldenDone {
  std::string text;
  int exit_code = 0;
};
GoldenDone golden_command(const GoldenOptions& o);

}  // namespace gauntlet
