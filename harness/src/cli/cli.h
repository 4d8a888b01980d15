// The `gauntlet` subcommands. Each takes its options as a plain struct and returns an exit
// code: 0 clean, 1 failures found where gating was asked (or a repro that fails), 2 bad input.
#pragma once

#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gauntlet/catalog.h"
#include "gauntlet/error.h"
#include "gauntlet/regress.h"
#include "gauntlet/reports.h"
#include "gauntlet/run/child_process.h"
#include "gauntlet/run/confirm.h"
#include "gauntlet/run/recorded_env.h"
#include "gauntlet/run/restore.h"
#include "gauntlet/run/run_request.h"
#include "gauntlet/run/run_setup.h"
#include "gauntlet/run/run_summary.h"
#include "gauntlet/run/selection.h"
#include "gauntlet/run/worker_protocol.h"
#include "gauntlet/store.h"

namespace CLI {
class App;
}

// Named only (gauntlet/runner.h and backend.h include torch; this header serves the torch-free
// commands too: Note [Two binaries] in front.cpp).
namespace gauntlet {
class Backend;
class GoldenStore;
struct RunnerConfig;
enum class FallbackSource;
}  // namespace gauntlet

namespace gauntlet::cli {

// Note [Option values] (checks.cpp): range and emptiness checks on every subcommand's options, by
// name; call after declaring them, before parsing.
void add_value_checks(CLI::App& app);
// A --profile value: letters, digits, '_', '-', '.'; a UsageError otherwise (checks.cpp).
void check_profile_name(const std::string& profile);
// " (did you mean X?)" for the candidate nearest to `word` when one is close enough, else "".
std::string nearest_hint(const std::string& word, const std::vector<std::string>& candidates);

// Bad usage or input: main() prints "gauntlet: error: <what>" and exits 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

struct ListOptions {
  std::string suite, filter, suites_dir, shard;
  bool count = false, json = false, ops = false, suites = false, colls = false, models = false;
  bool parts = false;                // --parts: the suites a suite includes, with their counts
  std::string ops_of_models;         // a suite: the ops its models execute (Note [Executed ops])
  bool ops_of_models_given = false;  // --ops-of-models, with or without a suite
  std::string db;                    // --db with --ops-of-models: a stored run's records
  long long run = 0;                 // --run: that run (0: the latest)
};
// Note [Ops from models]: op cases cut from what models execute, as a suite file.
struct OpsFromModelsOptions {
  std::string suite, db, suites_dir, out;
  std::string name = "ops_from_models";  // the generated suite's name
  long long run = 0;
};
int ops_from_models(const OpsFromModelsOptions& o);

// How a writing command opens an existing database: verified unless --skip-db-check (Note
// [Verified on open] in store.cpp).
inline Store::OpenMode write_mode(bool skip_db_check) {
  return skip_db_check ? Store::OpenMode::ReadWriteUnverified : Store::OpenMode::ReadWrite;
}

using RunOptions = RunRequest;  // gauntlet/run/run_request.h
struct GoldenOptions {
  std::string action;  // build, verify, freeze, gc
  std::string store, suite, filter, suites_dir, release, shard;
  int workers = 1;
  long long sample = 100;
  unsigned long long seed = 0;
  bool quiet = false;
};
struct ShowOptions {
  std::string db, statuses;
  long long run = 0;  // 0: the latest
  bool json = false;
};
// ReproSetup (gauntlet/run/restore.h): --backend, --profile, --suites-dir, --golden-store,
// --golden-release and the timing, as given or restored from --db.
struct ReproOptions : ReproSetup {
  std::string key;
  std::string db;      // --db: restore the configuration of a stored run (Note [Repro from the record])
  long long run = 0;   // --run: that run (0: the latest with a result for the key)
  std::string bundle;  // --bundle: write a standalone bundle of the case here (Note [Bundles])
  bool json = false;
  bool in_process = false;        // run the case in this process (default: in a child, Note [Crash-safe repro])
  bool child = false;             // this process is that child: the parent printed the header
  std::vector<std::string> argv;  // the command line, for the child and the debug command
  double collective_timeout = 40;
};
// `rank`: one rank of a collective case's group (Note [Collective groups]); started by the group.
struct RankOptions {
  std::string key, backend = "cpu", suites_dir;
  int rank = 0, port = 0;
  double store_timeout = 20;
  double startup_timeout = 60;
};
int rank(const RankOptions& o);

int list(const ListOptions& o);
int run(const RunOptions& o);
int show(const ShowOptions& o);
int repro(const ReproOptions& o);
int golden(const GoldenOptions& o);
struct BackendInfoOptions {
  std::string backend = "cpu";
  bool json = false;
  bool list = false;  // the registered backends instead (Note [Backend registry])
};
int backend_info(const BackendInfoOptions& o);
// Note [Worker protocol] in harness/src/run/worker_protocol.cpp.
using WorkerOptions = WorkerSettings;
int worker(const WorkerOptions& o);
struct PlanOptions {
  std::string suite, filter, suites_dir, history, backend = "cpu", out;
  int shards = 1;
};
int plan(const PlanOptions& o);
struct MergeOptions {
  std::vector<std::string> inputs;
  std::string into;
  bool skip_db_check = false;
};
int merge(const MergeOptions& o);
struct CompareOptions {
  std::string db;
  std::int64_t run = 0;           // 0: the latest run
  std::string baseline = "auto";  // a run id, or auto: the previous release
  std::string metric = "auto";    // auto | sim | host
  double min_effect = 0.05;
  double significance = 0.01;
  int min_samples = 5;
  double error_growth = 4.0;
  int history = 8;
  std::string waivers;                                                 // waivers file (none: nothing is waived)
  std::string gate;                                                    // accuracy,speed,coverage (empty: report only)
  double min_ran = kDefaultMinRan, max_ran_drop = kDefaultMaxRanDrop;  // Note [Hollow runs]
  std::string markdown, junit, json;                                   // report files ("-": stdout)
  int top = 50;
  bool quiet = false;
  bool github = false;  // --github (also when GITHUB_ACTIONS=true): Note [GitHub Actions] (src/run/github_reporter.cpp)
  // --confirm (Note [Confirmation] in confirm.cpp)
  bool confirm = false;
  std::string baseline_backend, candidate_backend;  // default: the runs' backends
  std::vector<std::string> baseline_env, candidate_env;
  int confirm_rounds = 16;
  TimingOptions confirm_timing{10, 5, 200, 1};
};
int compare(const CompareOptions& o);
struct BenchOptions {
  std::string suite, backend = "cpu", db, filter, shard, release, build_id, suites_dir;
  std::string price;  // --price-per-device-hour
  std::string out;    // Google Benchmark's JSON
  bool skip_db_check = false;
  int repetitions = 10;
  double min_time_s = 0.01;
  bool quiet = false;
};
int bench(const BenchOptions& o);
// `report` (named apart from gauntlet::ReportOptions, the compare reports' options).
struct ReportCommandOptions {
  bool weekly = false;  // the only report so far
  std::string db;
  std::string since, until;  // YYYY-MM-DD; default: the 7 days ending today (GAUNTLET_TODAY)
  std::string backend, suite;
  std::string markdown, json;  // report files ("-": stdout)
};
int report(const ReportCommandOptions& o);
// `dashboard` (named apart from gauntlet::DashboardOptions, the exporter's options).
struct DashboardCommandOptions {
  std::string db, out, since, backend, suite;
  std::string metric = "auto";
  int compare_pairs = 8;
  int grid_releases = 50;
};
int dashboard(const DashboardCommandOptions& o);
}  // namespace gauntlet::cli
