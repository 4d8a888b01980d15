// `gauntlet run` as the library runs it (Note [Run session] in harness/core/include/gauntlet/core/session/session.h):
// the options of a run, and a run prepared from them (checked, resumed or recorded, locked, its listeners and workers
// set up) that then runs its cases and ends with the summary, the reports and the gate. The command line only parses
// into a RunRequest.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gauntlet/base/command_line.h"
#include "gauntlet/run/run_summary.h"
#include "gauntlet/run/worker_protocol.h"

namespace gauntlet {

// `run`'s options (docs/cli.md "run").
struct RunRequest {
  std::string suite, backend = "cpu", db, filter, release, build_id, suites_dir, shard;
  std::string price;  // --price-per-device-hour
  bool skip_db_check = false;
  int workers = -1;  // -1: one per device slot, else one per core; 0: in-process
  bool in_process = false;
  double timeout = 0;              // 0: the suite's
  double collective_timeout = 40;  // seconds a collective case's group may take
  int retries = 1;
  std::string devices, device_env, plan;
  long long resume = 0, run_id = 0;
  bool backend_given = false;       // --backend was on the command line
  std::string backend_spec_resume;  // set when resuming: the --backend a resume was given
  std::string golden_store, golden_release;
  bool golden_add = false, golden_always = false;
  bool gate = false, quiet = false;
  double min_ran = kDefaultMinRan;  // Note [Hollow runs]
  long long max_failures = 0;       // --max-failures: stop after this many (0: never; Note [Fail fast])
  TimingOptions timing;
  std::vector<std::string> record_env;  // --record-env: globs of variables to record (Note [Recorded environment])
  // Note [Run reporters] (gauntlet/run/reporters.h): report files and GitHub Actions output.
  std::map<std::string, std::string> reports;  // --junit FILE...: reporter flag -> file ("": none)
  bool github = false;                         // --github (also when GITHUB_ACTIONS=true)
  std::string keys_file;                       // --keys-file: exact keys to run
  std::string model;                           // --model FILE: the suite "model:FILE" (instead of --suite)
};
// Note [Options beside their fields]: the options of `gauntlet run` (and --junit and the other
// registered reporters' files, Note [Run reporters]).
void describe_options(OptionSink& s, RunRequest& o);

class PreparedRun {
 public:
  // Checks the request, adopts the run it resumes, selects the suite's cases, loads and checks the
  // backend, then records the run (or reopens it) and locks it. Throws gauntlet::Error for bad
  // input before anything is written: a bad option never leaves an empty run behind.
  static std::unique_ptr<PreparedRun> prepare(const RunRequest& request);
  ~PreparedRun();
  PreparedRun(const PreparedRun&) = delete;
  PreparedRun& operator=(const PreparedRun&) = delete;

  // Runs the cases and ends the run: the summary, the reports and the gate. The exit code: 0; 1
  // failed fast, or gated with failures or hollow; 3 stopped; 4 the database could not be
  // written (Note [Stopped by the environment]); 130 interrupted.
  int run();

 private:
  PreparedRun();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gauntlet
