// The worker protocol (Note [Worker protocol] in harness/run/worker_protocol.cpp): how a worker
// is started (its settings, written as its command line in one place), the lines it answers with,
// written and read here. `run`'s orchestrator, `reduce` and `compare --confirm` start workers;
// `gauntlet worker` is one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gauntlet/base/command_line.h"
#include "gauntlet/base/outcome.h"

namespace gauntlet {

inline constexpr int kWorkerProtocol = 1;

// How each case is timed (Note [Timing methodology] in runner.h): run and worker take the same.
struct TimingOptions {
  int reps = 5;             // --reps: repetitions at least (0: time the first call only)
  double min_time_ms = 0;   // --min-time
  double max_time_ms = 20;  // --max-time
  int warmup = 0;           // --warmup
};

// --reps, --min-time, --max-time, --warmup (Note [Options beside their fields]).
void describe_options(OptionSink& s, TimingOptions& t);

// What a worker runs cases with: the options of `gauntlet worker` (described in worker_loop.h).
struct WorkerSettings {
  std::string backend = "cpu", suites_dir, golden_store, golden_release;
  bool golden_always = false;
  TimingOptions timing;
  double collective_timeout = 40;  // seconds a collective case's group may take
};
// The arguments after `worker` that start a worker with `s` (options left empty are left out).
std::vector<std::string> worker_args(const WorkerSettings& s);

enum class WorkerMessageKind { Unreadable, Hello, Start, Result, Fatal, Other };

// A line of a worker, read with simdjson: the orchestrator reads one per case, and building a JSON
// tree for it cost more than running a trivial case (ci/orchestrator_bench.sh). Unreadable lines
// have kind Unreadable and type "".
struct WorkerMessage {
  WorkerMessageKind kind = WorkerMessageKind::Unreadable;
  std::string type;   // as written: hello, start, result, fatal
  std::string key;    // start, result
  std::string error;  // fatal
  Outcome outcome;    // result
};
// Throws std::runtime_error for a result whose outcome is malformed (a missing or mistyped field).
WorkerMessage parse_worker_message(std::string_view line);

// A worker's lines, without their newline.
struct WorkerHello {
  long long pid = 0;
  std::string backend, backend_version, backend_profile;
  std::string backend_config_json;  // the backend's configuration, as JSON text
};
std::string hello_message(const WorkerHello& h);
std::string start_message(std::string_view key);
std::string result_message(std::string_view key, const Outcome& o);
std::string fatal_message(std::string_view error);

}  // namespace gauntlet
