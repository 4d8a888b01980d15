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
// " (did you mean X?)" for the candidate nearest to `word` when one is close enough, else "".
std::string nearest_hint(const std::string& word, const std::vector<std::string>& candidates);

// A word for a shell: as is when it needs no quoting, else in single quotes (repro.cpp).
std::string shell_quote(const std::string& s);

// Bad usage or input: main() prints "gauntlet: error: <what>" and exits 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

// Note [Hollow runs] (below): the gate's floors.
inline constexpr double kDefaultMinRan = 0.5;
inline constexpr double kDefaultMaxRanDrop = 0.05;

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

struct RunOptions {
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
  std::string backend_spec_resume;  // set by run(): the --backend a resume was given
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
};
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
struct ReproOptions {
  std::string key, backend, suites_dir, golden_store, golden_release;  // backend "": cpu, or the run's
  std::string profile;                                                 // --profile (also in $GAUNTLET_PROFILE by then)
  std::string db;      // --db: restore the configuration of a stored run (Note [Repro from the record])
  long long run = 0;   // --run: that run (0: the latest with a result for the key)
  std::string bundle;  // --bundle: write a standalone bundle of the case here (Note [Bundles])
  bool json = false;
  bool in_process = false;        // run the case in this process (default: in a child, Note [Crash-safe repro])
  bool child = false;             // this process is that child: the parent printed the header
  std::vector<std::string> argv;  // the command line, for the child and the debug command
  double collective_timeout = 40;
  TimingOptions timing;  // `run`'s defaults, or the stored run's
};
// `rank`: one rank of a collective case's group (Note [Collective groups]); started by the group.
struct RankOptions {
  std::string key, backend = "cpu", suites_dir;
  int rank = 0, port = 0;
  double store_timeout = 20;
  double startup_timeout = 60;
};
int rank(const RankOptions& o);
// Makes `cfg` run collective cases as groups of `gauntlet rank` processes on `backend`.
void enable_collectives(RunnerConfig& cfg, const std::string& backend, const std::string& suites_dir, double timeout_s);

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
struct ConfirmOptions {
  std::string baseline_backend, candidate_backend, suites_dir;
  std::vector<std::string> baseline_env, candidate_env;  // NAME=VALUE
  int rounds = 16;
  TimingOptions timing;
  bool verbose = true;
};
struct ConfirmResult {
  int confirmed = 0, dropped = 0;
};
// Re-measures the host-time speed findings of `c` and drops those not confirmed.
ConfirmResult confirm_speed(RunComparison& c, const ::gauntlet::CompareOptions& opt, const ConfirmOptions& o);

// Note [Recorded environment] (common.cpp): the globs of the variables a run records (GAUNTLET_*
// plus `extra` and $GAUNTLET_RECORD_ENV, each a list split at ',' or ':'); a UsageError for a
// pattern that is not a variable name with '*' and '?'.
std::vector<std::string> record_env_patterns(const std::vector<std::string>& extra);
// Whether variable `name` is one the patterns record.
bool env_recorded(const std::string& name, const std::vector<std::string>& patterns);
// The variables of this process's environment that `patterns` record, by name.
std::map<std::string, std::string> recorded_environment(const std::vector<std::string>& patterns);
// "i/N" (or GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS when `spec` is empty) -> {i, N}; {0, 1} for none.
std::pair<int, int> parse_shard(const std::string& spec);
std::string suites_dir_or_default(const std::string& dir);
// $GAUNTLET_FALLBACKS (auto | backend | dispatcher); a UsageError for anything else.
FallbackSource fallback_source_from_env();
// A --profile value: letters, digits, '_', '-', '.'; a UsageError otherwise.
void check_profile_name(const std::string& profile);
// The runner configuration `run` (in-process) and `worker` share: the suite files' judgement,
// the timing repetitions, and the golden store options (a null store: compute every golden).
std::string self_exe();  // this gauntlet binary
// A new run's record: the environment, the backend and the suite; the caller adds the rest.
RunInfo new_run_info(const Backend& backend, const Suite& suite, const std::string& release,
                     const std::string& build_id, const std::string& filter);
// What a device-hour costs, for cost per million samples: `--price-per-device-hour` when given
// (`flag`), else $GAUNTLET_PRICE_PER_DEVICE_HOUR, else none. A value that is not a positive finite
// number is a UsageError naming where it came from.
std::optional<double> price_per_device_hour(const std::string& flag);
RunnerConfig runner_config(const ToleranceTable& tolerances, const Expectations& expectations,
                           const TimingOptions& timing, GoldenStore* golden_store, bool golden_add, bool golden_always,
                           const std::string& golden_release);
// The cases of a suite after --filter and --shard; a filter that matches nothing is an error, a
// shard that holds none of what it matches is empty, with a note on stderr (Note [Empty shards]).
// run --keys-file (Note [Filters at scale] in glob.h): exact case keys, one a line; blank lines and
// lines starting with '#' are skipped, spaces around a key trimmed. `lines`: the line of each key
// (empty for keys restored from a stored run).
struct KeyList {
  std::string file;
  std::vector<std::string> keys;
  std::vector<int> lines;
};
// Throws UsageError naming the file (and line) when it cannot be read, holds no key, or a line
// holds more than one word.
KeyList read_keys_file(const std::string& path);
// The suite's cases in `shard` that match `filter` and, when `keys` is given, are among them
// (every key must be a case of the suite: else a UsageError naming the first that is not).
std::vector<const Case*> select_cases(const Suite& suite, const std::string& filter, const std::string& shard,
                                      const KeyList* keys = nullptr);
// The cases of `cases` among `keys` (the keys checked against the suite as select_cases does).
std::vector<const Case*> keep_keys(const Suite& suite, const std::vector<const Case*>& cases, const KeyList& keys);

}  // namespace gauntlet::cli

namespace gauntlet {
class Store;
struct ReportOptions;
}  // namespace gauntlet
namespace gauntlet::cli {
// Prints a run's counts by status, then each listed result with its repro command
// (`gauntlet repro KEY --db DB --run N`: Note [Repro from the record]).
void print_summary(const Store& store, const std::string& db_path, long long run_id,
                   const std::vector<std::string>& statuses);
// Note [Hollow runs]: a gate must not pass a qualification in which nothing was qualified. A run
// is hollow when no case passed, or when the cases that ran (PASS, FAIL, XFAIL, XPASS) are fewer
// than `min_ran` of its cases (those stored, or planned when more: a run stopped before its
// cases, e.g. a backend that cannot take inputs, counts every case it had). compare also calls a
// candidate hollow when its ran fraction fell more than `max_ran_drop` below the baseline's.
struct RanSummary {
  std::int64_t cases = 0, ran = 0, passed = 0;
  double fraction() const { return cases > 0 ? double(ran) / double(cases) : 0.0; }
};
RanSummary ran_summary(const Store& store, long long run_id);
// Why run `run_id` is hollow, or "" when it is not.
std::string hollow_reason(const RanSummary& s, double min_ran);
// The suites dir a run used, or "" when it was the default.
std::string run_suites_dir(const std::string& config_json);

// compare's step summary and annotations (Note [GitHub Actions] in src/run/github_reporter.cpp);
// `hollow`: Note [Hollow runs]'s reason when the candidate is hollow, else "".
void write_compare_github(const RunComparison& c, const ReportOptions& ro, const std::string& hollow);
}  // namespace gauntlet::cli
