// The worker's side of Note [Worker protocol] (harness/run/worker_protocol.cpp): `gauntlet
// worker`, the process the orchestrator runs cases in.
#pragma once

#include <functional>
#include <istream>
#include <ostream>
#include <string>

#include "gauntlet/base/outcome.h"
#include "gauntlet/run/worker_protocol.h"

namespace gauntlet {

// Reads case keys from `in`, one a line, until it ends; for each writes `start`, runs it with
// `run` and writes its `result`, each message a line written at once (one write: the orchestrator
// sees `start` even when the case then kills the process). Note [One write per case]: a result
// goes out with the next case's `start` when that key is already waiting in `in`, and alone before
// the loop would wait for one. A key `run` cannot parse is an ERROR result.
void serve_keys(std::istream& in, std::ostream& out, const std::function<Outcome(const std::string& key)>& run);

// `gauntlet worker`: dies with its parent, loads the suites dir's expectations and tolerances,
// the backend and the golden store (a failure is a `fatal` line and exit 2), says `hello`, then
// serves the keys of stdin on stdout. The exit code.
int run_worker(const WorkerSettings& o);

// Note [Options beside their fields]: the options of `gauntlet worker`.
void describe_options(OptionSink& s, WorkerSettings& o);

}  // namespace gauntlet
