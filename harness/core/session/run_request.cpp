#include "gauntlet/core/session/run_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "gauntlet/analysis/reports.h"
#include "gauntlet/base/output_dir.h"
#include "gauntlet/base/text.h"
#include "gauntlet/core/backend/backend.h"
#include "gauntlet/core/backend/environment.h"
#include "gauntlet/core/cases/dispatch_probe.h"
#include "gauntlet/core/cases/runner.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/core/session/orchestrator.h"
#include "gauntlet/core/session/plan.h"
#include "gauntlet/core/session/run_setup.h"
#include "gauntlet/core/session/session.h"
#include "gauntlet/golden/golden_store.h"
#include "gauntlet/python/compiled.h"
#include "gauntlet/run/child_process.h"
#include "gauntlet/run/listener.h"
#include "gauntlet/run/recorded_env.h"
#include "gauntlet/run/reporters.h"
#include "gauntlet/run/run_config.h"
#include "gauntlet/run/run_lock.h"
#include "gauntlet/run/selection.h"
#include "gauntlet/run/stop_signals.h"
#include "gauntlet/store/store.h"

namespace gauntlet {

namespace {

// The end of a run the environment stopped (Note [Stopped by the environment] in
// harness/core/session/session.cpp): the error, what is stored, how to finish it.
int stopped_by_environment(Store& store, const RunRequest& o, std::int64_t run_id, const SessionResult& r) {
  fmt::print(stderr, "gauntlet: error: {}\n", r.store_error);
  std::string stored = "the results committed before it are stored";
  try {  // reading may work where writing did not (a full disk, a lock held by a writer)
    std::int64_t n = 0;
    for (const auto& [status, count] : store.status_counts(run_id)) n += count;
    stored = fmt::format("{} results are stored", n);
  } catch (const StoreError&) {
  }
  fmt::print(stderr,
             "gauntlet: run {} stopped: the database could not be written; {} ({} more could not be: their cases "
             "run again on resume). Once that is fixed, finish it with: gauntlet run --resume {} --db {}\n",
             run_id, stored, r.lost, run_id, shell_argument(o.db));
  return kExitEnvironment;
}

// What a resumed run takes from the run it resumes (Note [Run record]): everything that decides
// its cases, and the profile and timing it judged with.
void adopt_run(RunRequest& o, const RunInfo& info, std::optional<KeyList>& keys) {
  const RunConfig cfg = RunConfig::parse(info.config_json);
  auto take = [&](std::string& field, const std::string& stored, const char* name) {
    if (!field.empty() && field != stored) {
      throw Error(fmt::format("run {} used --{} {}, not {}: resume it as it was", info.id, name,
                              stored.empty() ? "''" : stored, field));
    }
    field = stored;
  };
  take(o.suite, cfg.suite_file.value_or(info.suite), "suite");
  take(o.filter, info.filter, "filter");
  // --keys-file: the keys the run was given (stored with it), not the file as it is now.
  if (cfg.keys) {
    KeyList stored;
    stored.file = cfg.keys_file.empty() ? "the stored run's keys" : cfg.keys_file;
    stored.keys = *cfg.keys;
    if (keys && keys->keys != stored.keys) {
      throw Error(fmt::format("run {} was given other keys (--keys-file {}, {} keys): resume it as it was", info.id,
                              stored.file, stored.keys.size()));
    }
    keys = std::move(stored);
  } else if (keys) {
    throw Error(fmt::format("run {} was not given --keys-file: resume it as it was", info.id));
  }
  take(o.backend_spec_resume, info.backend, "backend");
  o.backend = info.backend;
  take(o.plan, cfg.plan, "plan");
  take(o.shard, cfg.shard_spec, "shard");
  if (o.suites_dir.empty()) o.suites_dir = cfg.suites_dir;
  // The profile the run judged with (--profile travels in the environment).
  if (const char* env = std::getenv("GAUNTLET_PROFILE"); (!env || !*env) && !cfg.backend_profile.empty()) {
    setenv("GAUNTLET_PROFILE", cfg.backend_profile.c_str(), 1);
  }
  cfg.apply_timing(o.timing);
}

// Checked before anything is recorded: a bad option never leaves an empty run behind. Settles
// --workers; returns the price of a device-hour and the environment patterns to record.
struct CheckedOptions {
  std::optional<double> price;
  std::vector<std::string> env_patterns;
};
CheckedOptions check_options(RunRequest& o) {
  if (!o.model.empty()) {
    if (!o.suite.empty()) throw Error("--model and --suite: give one (--model FILE is the suite of that model)");
    o.suite = "model:" + o.model;
  }
  if (o.timing.reps < 0 || o.timing.warmup < 0) throw Error("--reps and --warmup must be >= 0");
  if (!(o.min_ran >= 0 && o.min_ran <= 1)) throw Error("--min-ran must be a fraction between 0 and 1");
  if (!(o.timing.min_time_ms >= 0) || !(o.timing.max_time_ms > 0)) {
    throw Error("--min-time must be >= 0 and --max-time > 0 (milliseconds)");
  }
  CheckedOptions checked;
  checked.price = price_per_device_hour(o.price);
  fallback_source_from_env();         // its workers read it: refused here, before the run is recorded
  python::dynamo_backend_from_env();  // the same
  python::dynamo_options_from_env();
  checked.env_patterns = record_env_patterns(o.record_env);
  if (o.in_process) o.workers = 0;
  if (o.workers < 0) {
    o.workers = !o.devices.empty() ? static_cast<int>(parse_slots(o.devices).size())
                                   : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  if (o.golden_add && o.workers > 0) {
    throw Error("--golden-add writes the golden store from one process: use it with --workers 0");
  }
  if (!o.devices.empty()) {
    parse_slots(o.devices);
    if (o.device_env.empty()) {
      throw Error("--devices needs --device-env NAME (e.g. NEURON_RT_VISIBLE_CORES) to bind workers to them");
    }
  }
  // Note [Run reporters]: a report file whose folder does not exist is refused before the run.
  check_run_reporter_paths(o.reports);
  if (!o.plan.empty() && o.shard.empty() && o.resume == 0 && parse_shard("").second == 1) {
    throw Error("--plan needs --shard i/N: which of the plan's shards this host runs");
  }
  return checked;
}

// The run to resume, when there is one (--resume, or --run-id naming a stored run), with its
// database open; `o` and `keys` take what decided its cases (adopt_run).
struct Resumed {
  std::unique_ptr<Store> store;
  std::optional<RunInfo> run;
};
Resumed find_resumed(RunRequest& o, std::optional<KeyList>& keys) {
  Resumed r;
  std::int64_t resume_id = o.resume;
  if (resume_id == 0 && o.run_id > 0 && std::filesystem::exists(o.db)) {
    r.store = Store::open(o.db, o.skip_db_check ? Store::OpenMode::ReadWriteUnverified : Store::OpenMode::ReadWrite);
    if (r.store->run(o.run_id)) resume_id = o.run_id;
  }
  if (resume_id > 0) {
    if (!r.store) {
      if (!std::filesystem::exists(o.db)) throw Error(o.db + ": no such database to resume a run in");
      r.store = Store::open(o.db, o.skip_db_check ? Store::OpenMode::ReadWriteUnverified : Store::OpenMode::ReadWrite);
    }
    r.run = r.store->run(resume_id);
    if (!r.run) throw Error(fmt::format("{}: no run {} to resume", o.db, resume_id));
    o.backend_spec_resume = o.backend_given ? o.backend : "";
    adopt_run(o, *r.run, keys);
  }
  return r;
}

// The suite's cases this invocation runs: a plan's shard, or --filter and --shard, and --keys-file.
std::vector<const Case*> run_cases(const RunRequest& o, const Suite& suite, const std::optional<KeyList>& keys) {
  if (o.plan.empty()) return select_cases(suite, o.filter, o.shard, keys ? &*keys : nullptr);
  const Plan plan = Plan::load(o.plan);
  if (plan.suite != suite.name) {
    throw Error(fmt::format("{}: the plan is for suite {}, not {}", o.plan, plan.suite, suite.name));
  }
  auto [shard, shards] = parse_shard(o.shard);
  if (shards != 1 && shards != plan.shards) {
    throw Error(fmt::format("--shard {}: the plan has {} shards", o.shard, plan.shards));
  }
  std::vector<const Case*> cases = plan.cases_of(suite, shard, o.filter);
  if (keys) cases = keep_keys(suite, cases, *keys);
  return cases;
}

// Note [Empty shards]: a shard with no case writes no run, but the report files asked for.
void write_empty_shard_reports(const RunRequest& o, const Suite& suite) {
  RunContext none;
  none.backend = o.backend;
  none.suite = suite.name;
  none.gauntlet_version = gauntlet_version();
  RunListeners reporters;
  add_run_reporters(o.reports, reporters);
  reporters.run_ended(none, RunEnd(none, "", ""));
}

// The database, opened last among the checks: a bad suite or backend never touches it.
std::unique_ptr<Store> open_store(const RunRequest& o) {
  check_database_path(o.db);
  return Store::open(o.db, o.skip_db_check ? Store::OpenMode::ReadWriteUnverified : Store::OpenMode::ReadWrite);
}

// A new run's record (Note [Recorded environment], Note [Repro from the record]): what decides its
// cases and how they are judged, so that --resume and `repro --db` can take it back.
RunInfo new_run_record(const RunRequest& o, const CheckedOptions& checked, const Backend& backend, const Suite& suite,
                       const std::string& dir, std::size_t cases, const std::optional<KeyList>& keys) {
  RunInfo info = new_run_info(backend, suite, o.release, o.build_id, o.filter);
  info.price_per_device_hour = checked.price;
  info.id = o.run_id;
  auto [shard, shards] = parse_shard(o.shard);
  info.shard = shards > 1 ? fmt::format("{}/{}", shard, shards) : "";
  RunConfig config;
  config.suites_dir = dir;
  config.suite_file = o.suite;
  config.cases = static_cast<std::int64_t>(cases);
  config.plan = o.plan;
  config.shard_spec = o.shard;
  if (keys) {
    config.keys_file = keys->file;
    config.keys = keys->keys;
  }
  config.set_timing(o.timing);
  config.golden_store = o.golden_store;
  config.golden_release = o.golden_release;
  config.backend_profile = backend.profile();
  config.set_backend_config(backend.config_json());
  config.environment = recorded_environment(checked.env_patterns);
  config.environment_patterns = checked.env_patterns;
  info.config_json = config.dump();
  return info;
}

// The worker processes' configuration (Note [Run session]): the runner's options as worker argv,
// slots, timeouts (an included suite's own, Note [Included suites], unless --timeout says
// otherwise) and retries.
OrchestratorConfig worker_config(const RunRequest& o, const std::string& dir, const Suite& suite,
                                 const std::vector<const Case*>& todo) {
  OrchestratorConfig oc;
  oc.exe = self_exe();
  WorkerSettings settings;
  settings.backend = o.backend;
  settings.suites_dir = dir;
  settings.collective_timeout = o.collective_timeout;
  settings.timing = o.timing;
  settings.golden_store = o.golden_store;
  settings.golden_release = o.golden_store.empty() ? "" : o.golden_release;
  settings.golden_always = !o.golden_store.empty() && o.golden_always;
  oc.worker_args = worker_args(settings);
  oc.workers = o.workers;
  if (!o.devices.empty()) oc.slots = parse_slots(o.devices);
  oc.device_env = o.device_env;
  oc.timeout_s = o.timeout > 0 ? o.timeout : suite.timeout_s;
  oc.retries = o.retries;
  for (const Case* c : todo) {
    if (o.timeout <= 0 && c->timeout_s > 0 && c->timeout_s != oc.timeout_s) oc.case_timeout_s[c->text] = c->timeout_s;
  }
  return oc;
}

// After the session: the summary, the reports (run_ended), and the exit code: 130 interrupted, 3
// stopped, 1 failed fast or gated with failures or hollow, else 0.
int finish_run(Store& store, const RunRequest& o, const RunContext& ctx, RunListeners& listeners,
               const SessionResult& result, const std::string& cannot_run) {
  const std::int64_t run_id = ctx.run_id;
  const std::string& stopped = result.stopped;
  std::vector<std::string> statuses;
  for (Status s : kAllStatuses) {
    if (is_failure(s)) statuses.emplace_back(status_name(s));
  }
  fmt::print("{}", run_summary_text(summarize_run(store, run_id, statuses), o.db));
  fmt::print("\ndatabase: {} (run {})\n", o.db, run_id);
  const std::string hollow = o.gate && stopped.empty() ? hollow_reason(ran_summary(store, run_id), o.min_ran) : "";
  listeners.run_ended(ctx, RunEnd(ctx, stopped, hollow));
  if (!stopped.empty()) {
    fmt::print(
        stderr,
        "gauntlet: run {} stopped: {}; stored results are kept. Finish it with: gauntlet run --resume {} --db {}\n",
        run_id, stopped, run_id, o.db);
    if (result.failed_fast) return 1;
    return interrupted() ? 130 : 3;
  }
  if (!o.gate) return 0;
  if (!hollow.empty()) {
    fmt::print("gate: FAIL: run {} is hollow: {}{}\n", run_id, hollow,
               cannot_run.empty() ? "" : "; the backend cannot take inputs");
    return 1;
  }
  // The gate counts the whole run, including what a resumed run stored before.
  std::int64_t failing = 0;
  for (const auto& [status, n] : store.status_counts(run_id)) {
    if (is_failure(status)) failing += n;
  }
  return failing > 0 ? 1 : 0;
}

}  // namespace

struct PreparedRun::Impl {
  RunRequest o;
  CheckedOptions checked;
  std::optional<KeyList> keys;
  std::string dir;
  std::unique_ptr<Suite> suite;
  std::vector<const Case*> cases, todo;
  std::unique_ptr<Expectations> expectations;
  std::unique_ptr<ToleranceTable> tolerances;
  std::unique_ptr<Backend> backend;
  std::string cannot_run;
  std::unique_ptr<GoldenStore> golden_store;
  std::unique_ptr<Store> store;
  std::optional<RunLock> lock;
  RunContext ctx;
  RunListeners listeners;
  RunnerConfig cfg;
  Execution how;
  bool empty_shard = false;
};

PreparedRun::PreparedRun() : impl_(std::make_unique<Impl>()) {}
PreparedRun::~PreparedRun() = default;

std::unique_ptr<PreparedRun> PreparedRun::prepare(const RunRequest& request) {
  std::unique_ptr<PreparedRun> prepared(new PreparedRun());
  Impl& p = *prepared->impl_;
  p.o = request;
  RunRequest& o = p.o;
  p.checked = check_options(o);
  if (!o.keys_file.empty()) p.keys = read_keys_file(o.keys_file);
  Resumed resumed = find_resumed(o, p.keys);
  if (o.suite.empty()) throw Error("--suite is required (or --resume RUN_ID)");

  p.dir = suites_dir_or_default(o.suites_dir);
  p.suite = std::make_unique<Suite>(load_suite(o.suite, p.dir));
  const Suite& suite = *p.suite;
  p.cases = run_cases(o, suite, p.keys);
  if (p.cases.empty() && o.plan.empty()) {  // Note [Empty shards]: said, nothing written but the empty reports
    p.empty_shard = true;
    return prepared;
  }
  p.expectations = std::make_unique<Expectations>(Expectations::load(p.dir + "/expectations.yaml"));
  p.tolerances = std::make_unique<ToleranceTable>(ToleranceTable::load(p.dir + "/tolerances.yaml"));
  p.backend = make_backend(o.backend);
  const CapabilityCheck capabilities = check_capabilities(*p.backend, p.cases);
  p.cannot_run = capabilities.cannot_run;
  if (!o.quiet && !resumed.run) {
    for (const std::string& w : capabilities.warnings) fmt::print(stderr, "gauntlet: warning: {}\n", w);
  }
  if (!p.cannot_run.empty() && !o.gate) throw Error(p.cannot_run);
  if (resumed.run && resumed.run->backend_version != p.backend->version()) {
    throw Error(
        fmt::format("run {} ran backend {} {}, this one is {}: resume it with the same backend release "
                    "and configuration",
                    resumed.run->id, resumed.run->backend, resumed.run->backend_version, p.backend->version()));
  }
  if (!o.golden_store.empty()) {
    p.golden_store =
        GoldenStore::open(o.golden_store, o.golden_add ? GoldenStore::Mode::ReadWrite : GoldenStore::Mode::ReadOnly);
  } else if (o.golden_add || o.golden_always || !o.golden_release.empty()) {
    throw Error("--golden-add, --golden-always and --golden-release need --golden-store DIR");
  }
  p.store = resumed.store ? std::move(resumed.store) : open_store(o);

  // Note [One orchestrator per run]: a run named by id (resumed, or --run-id) is locked for the
  // life of this process before anything is written to it.
  if (resumed.run || o.run_id > 0) p.lock.emplace(o.db, resumed.run ? resumed.run->id : o.run_id);
  std::int64_t run_id = 0;
  std::set<std::string> finished;
  if (resumed.run) {
    run_id = resumed.run->id;
    finished = p.store->finished_keys(run_id);
    p.store->reopen_run(run_id);
  } else {
    run_id = p.store->begin_run(new_run_record(o, p.checked, *p.backend, suite, p.dir, p.cases.size(), p.keys));
  }
  for (const Case* c : p.cases) {
    if (!finished.count(c->text)) p.todo.push_back(c);
  }
  if (!p.cannot_run.empty()) {
    // --gate on a backend that cannot take inputs: the run is recorded, hollow (Note [Hollow runs]).
    fmt::print(stderr, "gauntlet: {}\n", p.cannot_run);
    p.todo.clear();
  }
  if (resumed.run) {
    fmt::print(stderr, "gauntlet: resuming run {}: {} of {} cases have results, {} to run\n", run_id,
               p.cases.size() - p.todo.size(), p.cases.size(), p.todo.size());
  }

  // Note [Run listeners]: the progress display, then the reporters asked for.
  RunContext& ctx = p.ctx;
  ctx.run_id = run_id;
  ctx.store = p.store.get();
  ctx.db_path = o.db;
  ctx.backend = o.backend;
  ctx.suite = suite.name;
  ctx.suite_file = suite.file;
  ctx.gauntlet_version = gauntlet_version();
  ctx.resumed = resumed.run.has_value();
  ctx.gate = o.gate;
  if (!o.quiet) p.listeners.add(progress_display(expected_case_cost(*p.store, o.backend, suite.name, run_id)));
  add_run_reporters(o.reports, p.listeners);
  if (github_enabled(o.github)) p.listeners.add(github_run_reporter());

  // Note [Run session]: how the cases run, in this process or in workers.
  if (o.workers == 0) {
    p.cfg = runner_config(*p.tolerances, *p.expectations, o.timing, p.golden_store.get(), o.golden_add, o.golden_always,
                          o.golden_release);
    enable_collectives(p.cfg, o.backend, p.dir, o.collective_timeout);
    p.how.backend = p.backend.get();
    p.how.runner = &p.cfg;
  } else {
    p.how.workers = worker_config(o, p.dir, suite, p.todo);
  }
  return prepared;
}

int PreparedRun::run() {
  Impl& p = *impl_;
  if (p.empty_shard) {
    write_empty_shard_reports(p.o, *p.suite);
    return 0;
  }
  catch_stop_signals();
  catch_bus_errors(p.ctx.run_id, p.o.db, p.o.workers == 0);
  RunSession session(*p.store, p.ctx, p.listeners, p.o.max_failures, [] { return interrupted(); });
  const SessionResult result = session.run(p.todo, p.how);
  if (!result.store_error.empty()) return stopped_by_environment(*p.store, p.o, p.ctx.run_id, result);
  return finish_run(*p.store, p.o, p.ctx, p.listeners, result, p.cannot_run);
}

void describe_options(OptionSink& s, RunRequest& o) {
  s.option("--suite", o.suite, "suite name or .yaml path (required unless --resume)");
  s.option("--model", o.model,
           "qualify a TorchScript model file: a .pt with its manifest <stem>.yaml beside it, a manifest, or a folder "
           "of them (docs/models.md, \"Qualify your own model\"); instead of --suite");
  describe_backend(s, o.backend).show_default();
  s.option("--db", o.db, "SQLite database to write (created if missing)").required();
  s.option("--filter", o.filter, "gtest-style globs on case keys");
  s.option("--keys-file", o.keys_file,
           "run exactly the case keys in FILE, one a line (with --filter: those it matches)");
  s.option("--shard", o.shard, "i/N: only the i-th of N shards");
  s.option("--release", o.release, "release name recorded with the run");
  s.option("--build-id", o.build_id, "build id recorded with the run");
  describe_price(s, o.price);
  s.option("--suites-dir", o.suites_dir, "where suites live");
  describe_options(s, o.timing);
  s.flag("--gate", o.gate,
         "exit 1 when any case fails (FAIL, ERROR, CRASH, TIMEOUT, XPASS) or the run is hollow (--min-ran)");
  s.option("--min-ran", o.min_ran,
           "--gate: fail when fewer than this fraction of the cases ran (PASS, FAIL, XFAIL, XPASS), or none passed")
      .show_default();
  s.flag("--quiet", o.quiet, "no progress line");
  describe_skip_db_check(s, o.skip_db_check);
  for (const RunReporterEntry& e : run_reporters()) s.option("--" + e.flag, o.reports[e.flag], e.help);
  s.flag("--github", o.github,
         "GitHub Actions: append a summary to $GITHUB_STEP_SUMMARY and print ::error lines for failures (on by "
         "default when GITHUB_ACTIONS=true)");
  s.option("--max-failures", o.max_failures,
           "stop the run (resumable) once this many cases have failed (FAIL, ERROR, CRASH, TIMEOUT, XPASS)");
  s.option("--workers", o.workers,
           "worker processes (default: one per --devices slot, else one per core; 0: in-process)");
  s.flag("--in-process", o.in_process, "run cases in this process (same as --workers 0)");
  s.option("--timeout", o.timeout, "seconds a case may run in a worker (default: the suite's, else 60)");
  s.option("--collective-timeout", o.collective_timeout,
           "seconds a collective case's group of rank processes may take (below --timeout)")
      .show_default();
  s.option("--retries", o.retries, "times a crashed or timed-out case runs again, alone").show_default();
  s.option("--devices", o.devices, "device slots, e.g. 0-7 or 0,2,4: one worker per slot");
  s.option("--device-env", o.device_env, "variable binding a worker to its slot (NEURON_RT_VISIBLE_CORES)");
  s.option("--plan", o.plan, "run shard --shard i of this plan file (gauntlet plan)");
  s.option("--resume", o.resume, "finish run RUN_ID of --db: only the cases without a result");
  s.option("--run-id", o.run_id, "use this run id: resumes it when --db has it, else creates it");
  s.option("--golden-store", o.golden_store, "use precomputed goldens from this store when present and intact");
  s.flag("--golden-add", o.golden_add, "add the goldens the store lacks (opens it for writing)");
  s.option("--golden-release", o.golden_release, "judge against the goldens release R froze");
  s.option("--record-env", o.record_env,
           "also record these environment variables with the run, for repro (globs: 'NEURON_*,XLA_FLAGS'; "
           "GAUNTLET_* always)");
  s.flag("--golden-always", o.golden_always, "read every stored golden, even those cheaper to recompute than to read");
}

}  // namespace gauntlet
