// Note [Run session]: the cases of one `gauntlet run` invocation, run and stored. The session
// records the cases' keys in bulk, runs the cases in this process or in worker processes (the
// orchestrator), makes each result final, tells the run listeners (Note [Run listeners]) and
// commits it (Committer below), stops early when asked (an interrupt, --max-failures, the
// database failing), and closes the run's record when every case ran. What comes before (options,
// resume, the run's record) and after (the summary, run_ended, the gate) is PreparedRun's
// (gauntlet/core/session/run_request.h): prepare the session, run it, end the run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gauntlet/core/session/orchestrator.h"
#include "gauntlet/run/listener.h"

namespace gauntlet {

class Backend;
struct RunnerConfig;

// How the session runs its cases: in this process (backend and runner set), else in workers.
struct Execution {
  Backend* backend = nullptr;            // in this process: the backend the cases run on
  const RunnerConfig* runner = nullptr;  // and the runner's configuration
  OrchestratorConfig workers;            // else: the worker processes (exe, argv, count, timeouts)
  bool in_process() const { return backend != nullptr; }
};

struct SessionResult {
  std::string stopped;        // "" when every case ran, else why the run stopped (it resumes)
  bool failed_fast = false;   // stopped by --max-failures
  std::int64_t failures = 0;  // failing results stored by this invocation
  // Note [Stopped by the environment]: the database could not be written (a StoreError carrying
  // kExitEnvironment): its message, and how many results could not be stored (they run again on
  // resume). "" otherwise.
  std::string store_error;
  std::size_t lost = 0;
};

class RunSession {
 public:
  // `interrupted` is polled between cases (and by the orchestrator); `max_failures` > 0 stops the
  // run once this invocation stored that many failures (Note [Fail fast]).
  RunSession(Store& store, RunContext context, RunListeners& listeners, std::int64_t max_failures,
             std::function<bool()> interrupted);
  // Runs `todo` as `how` says: run_started, the cases, cases_ended, the last commit, and the run's
  // finish time when nothing stopped it. Throws what the store throws but environment failures.
  SessionResult run(const std::vector<const Case*>& todo, const Execution& how);
  const RunContext& context() const { return context_; }

 private:
  Store& store_;
  RunContext context_;
  RunListeners& listeners_;
  std::int64_t max_failures_;
  std::function<bool()> interrupted_;
};

}  // namespace gauntlet
