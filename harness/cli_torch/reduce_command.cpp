// gauntlet reduce: the smallest case of the same op, dtype, layout, mode and arguments that still
// fails the same way (Note [Failing-shape reduction] in harness/core/reduce/reduce.cpp). Every case,
// the given one first, runs in worker processes (Note [Worker protocol]), so that a case that
// crashes its process reduces too. Stores nothing. No torch here.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "gauntlet/cli/cli.h"
#include "gauntlet/core/backend/backend.h"
#include "gauntlet/core/cases/dispatch_probe.h"
#include "gauntlet/core/reduce/reduce.h"
#include "gauntlet/core/reduce/reduce_report.h"
#include "gauntlet/run/outcome_json.h"
#include "gauntlet/run/recorded_env.h"
#include "gauntlet/run/restore.h"
#include "gauntlet/suites/op_spec.h"

namespace gauntlet::cli {

namespace {

// The command that reruns a case as this reduction ran it: the recorded environment (GAUNTLET_*
// and $GAUNTLET_RECORD_ENV's patterns, Note [Recorded environment]) in front, as `repro --db`'s
// `elsewhere` line.
std::string repro_line(const std::string& key, const ReduceOptions& o) {
  ReproSetup s = o;
  const char* profile = std::getenv("GAUNTLET_PROFILE");
  s.profile = profile ? profile : "";
  std::string line = standalone_repro_command(key, s, recorded_environment(record_env_patterns({})));
  // A smaller case is in no suite (Note [Keys no suite holds]).
  if (key != CaseKey::parse(o.key).str()) line += " --any-key";
  return line;
}

// A scratch folder for the workers' stderr, removed at the end.
struct ScratchDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / fmt::format("gauntlet-reduce-{}", static_cast<long long>(::getpid()));
  ~ScratchDir() {
    std::error_code e;
    std::filesystem::remove_all(path, e);
  }
};

}  // namespace

int reduce(const ReduceOptions& given) {
  ReduceOptions o = given;
  const CaseKey key = CaseKey::parse(o.key);
  // The run's configuration, as `repro --db` restores it (Note [Repro from the record]).
  const std::optional<Restored> restored = restore_run(o, o.db, o.run, key.str());
  if (o.backend.empty()) o.backend = "cpu";
  if (auto problem = validate_key(key)) throw UsageError(*problem);
  if (key.kind == "coll")
    throw UsageError("collective cases are not reduced (only op and model cases): reduce needs shapes to shrink");
  // A library that is not a backend is refused as `run` refuses it, before any worker starts.
  if (const CapabilityCheck c = check_capabilities(*make_backend(o.backend), {}, false); !c.cannot_run.empty()) {
    throw UsageError(c.cannot_run);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  ScratchDir logs;
  WorkerSettings settings;
  settings.backend = o.backend;
  settings.suites_dir = o.suites_dir;
  settings.timing.reps = 0;
  settings.golden_store = o.golden_store;
  settings.golden_always = !o.golden_store.empty();
  settings.golden_release = o.golden_release;
  const RunCases run = worker_batches(settings, o.workers, o.timeout, logs.path.string());
  nlohmann::json restored_from;
  if (restored) restored_from = {{"db", o.db}, {"run", restored->info.id}};

  if (restored && !o.json) {
    fmt::print("{}", restored_text(*restored, o.db));
    std::fflush(stdout);
  }
  const Outcome given_outcome = run({key.str()}).front();
  check_reducible(given_outcome, key, o.backend);
  CaseKey start = key;
  Outcome start_outcome = given_outcome;
  nlohmann::json model_json;
  if (key.kind == "model") {  // Note [Model reduction]
    const ModelStart m = model_start(given_outcome, o.backend, run);
    if (!o.json) fmt::print("{}", model_start_text(key, given_outcome, o.backend, m, true));
    if (m.op_keys.empty()) {
      throw UsageError(fmt::format("the model's first divergent node {} has no op case: {}", m.node.kind, m.why));
    }
    model_json = model_start_json(key, given_outcome, m);
    if (!m.failing) {
      const std::string note = fmt::format(
          "the node's op case passes on its own on {}: the values the model feeds it, not its shapes, make it fail; "
          "reproduce the model case",
          o.backend);
      if (!o.json) {
        fmt::print("note     {}\nrepro    {}\n", note, repro_line(key.str(), o));
        return 0;
      }
      nlohmann::json j = {{"json_schema_version", kJsonSchemaVersion},
                          {"backend", o.backend},
                          {"model", model_json},
                          {"original", nullptr},
                          {"smallest", nullptr},
                          {"reduced", false},
                          {"note", note},
                          {"cost", {{"seconds", seconds()}}},
                          {"repro", repro_line(key.str(), o)}};
      if (restored) j["restored_from"] = restored_from;
      std::cout << j.dump(1) << "\n";
      return 0;
    }
    start = CaseKey::parse(m.op_keys[*m.failing]);
    start_outcome = m.op_outcomes[*m.failing];
  }
  if (!o.json) {
    const std::string error = start_outcome.error.substr(0, start_outcome.error.find('\n'));
    fmt::print("reduce   {} on {}\nfails    {}: {}\nstrategy {} (docs/repro.md)\n", start.str(), o.backend,
               failure_signature(start_outcome).str(), error, reduce_strategy());
    std::fflush(stdout);
  }
  ReduceConfig rc;
  rc.max_candidates = o.max_candidates;
  const ReduceResult r = reduce_case(start, start_outcome, run, rc);
  const ReduceShown shown{
      o.backend, start, start_outcome, seconds(), o.max_candidates, repro_line(r.smallest.str(), o)};
  if (!o.json) {
    fmt::print("{}", reduce_text(r, shown));
    return 0;
  }
  nlohmann::json j = reduce_json(r, shown);
  if (!model_json.is_null()) j["model"] = model_json;
  if (restored) j["restored_from"] = restored_from;
  std::cout << j.dump(1) << "\n";
  return 0;
}

}  // namespace gauntlet::cli
