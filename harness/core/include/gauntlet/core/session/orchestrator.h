// The orchestrator: runs cases in worker processes (Note [Worker protocol] in
// run/worker_protocol.cpp) so that a kernel that crashes or hangs costs one case, not the run. No
// torch here.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "gauntlet/base/outcome.h"

namespace gauntlet {

struct OrchestratorConfig {
  std::string exe;                       // the gauntlet binary
  std::vector<std::string> worker_args;  // after "worker": --backend ..., --suites-dir ...
  int workers = 1;
  // Device slots: worker i is bound to slots[i % slots.size()] through `device_env` (e.g.
  // NEURON_RT_VISIBLE_CORES=3). Empty: no binding.
  std::vector<std::string> slots;
  std::string device_env;
  double timeout_s = 60;  // per case, from its `start` line
  // Cases whose own timeout differs from timeout_s (an included suite's `timeout:`), by key.
  std::unordered_map<std::string, double> case_timeout_s;
  int retries = 1;    // a crashed or timed-out case runs again, alone, this many times
  int pipeline = 16;  // keys queued per worker ahead of the one it runs
  // A slot whose worker dies this many times in a row without finishing a case is retired; when
  // every slot is retired the run stops and says why.
  int max_consecutive_deaths = 4;
  std::string log_dir;  // where workers' stderr goes (one file per worker start)
};

struct CaseDone {
  std::string key;
  Outcome outcome;  // attempt set; CRASH and TIMEOUT made here
  std::string slot;
  bool flaky = false;  // failed (crash or timeout) first, passed on a retry
};

class Orchestrator {
 public:
  explicit Orchestrator(OrchestratorConfig cfg);
  // Runs every key; calls `done` once per key, in completion order, on the calling thread.
  // `interrupted` is polled; when it turns true the workers are stopped and run() returns with the
  // keys not yet done left undone. Returns "" or why the run stopped early.
  std::string run(const std::vector<std::string>& keys, const std::function<void(CaseDone&&)>& done,
                  const std::function<bool()>& interrupted);

 private:
  OrchestratorConfig cfg_;
};

// "0-3,6" -> {"0","1","2","3","6"}; throws std::invalid_argument naming the bad part.
std::vector<std::string> parse_slots(const std::string& spec);
// "SIGSEGV" for 11, "signal 77" for unknown numbers.
std::string signal_name(int sig);

}  // namespace gauntlet
