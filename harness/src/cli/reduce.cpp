// gauntlet reduce: the smallest case of the same op, dtype, layout, mode and arguments that still
// fails the same way (Note [Failing-shape reduction] in harness/src/reduce.cpp). Every case,
// the given one first, runs in worker processes (Note [Worker protocol]), so that a case that
// crashes its process reduces too. Stores nothing. No torch here.
#include "reduce_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "gauntlet/op_spec.h"
#include "gauntlet/orchestrator.h"
#include "gauntlet/outcome_json.h"
#include "gauntlet/reduce.h"
#include "restore.h"

namespace gauntlet::cli {

namespace {

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string shapes_text(const CaseKey& k) {
  std::string s;
  for (const Shape& sh : k.shapes) s += (s.empty() ? "" : ",") + shape_str(sh);
  return s;
}

// The command that reruns a case as this reduction ran it: the recorded environment (GAUNTLET_*
// and $GAUNTLET_RECORD_ENV's patterns, Note [Recorded environment]) in front, as `repro --db`'s
// `elsewhere` line.
std::string repro_line(const std::string& key, const ReduceOptions& o) {
  std::string cmd;
  for (const auto& [name, value] : recorded_environment(record_env_patterns({}))) cmd += name + "=" + shell_quote(value) + " ";
  cmd += "gauntlet repro " + shell_quote(key) + " --backend " + shell_quote(o.backend);
  const char* profile = std::getenv("GAUNTLET_PROFILE");
  if (profile && *profile && o.backend != profile) cmd += " --profile " + shell_quote(profile);
  if (!o.suites_dir.empty() && o.suites_dir != default_suites_dir()) cmd += " --suites-dir " + shell_quote(o.suites_dir);
  if (!o.golden_store.empty()) cmd += " --golden-store " + shell_quote(o.golden_store);
  if (!o.golden_release.empty()) cmd += " --golden-release " + shell_quote(o.golden_release);
  return cmd;
}

// Runs batches of keys through worker processes: one Orchestrator run per batch, no retries (a
// crash is the answer, not an accident), each worker's stderr in a scratch folder.
class WorkerRunner {
 public:
  WorkerRunner(const ReduceOptions& o, std::string log_dir) {
    cfg_.exe = self_exe();
    cfg_.worker_args = {"--backend", o.backend, "--reps", "0"};
    if (!o.suites_dir.empty()) cfg_.worker_args.insert(cfg_.worker_args.end(), {"--suites-dir", o.suites_dir});
    if (!o.golden_store.empty()) {
      cfg_.worker_args.insert(cfg_.worker_args.end(), {"--golden-store", o.golden_store, "--golden-always"});
      if (!o.golden_release.empty()) cfg_.worker_args.insert(cfg_.worker_args.end(), {"--golden-release", o.golden_release});
    }
    cfg_.workers = o.workers;
    cfg_.timeout_s = o.timeout;
    cfg_.retries = 0;
    cfg_.log_dir = std::move(log_dir);
  }

  // Outcomes in the order of `keys`; a key the workers did not run is an ERROR saying why.
  std::vector<Outcome> operator()(const std::vector<std::string>& keys) {
    Orchestrator orch(cfg_);
    std::map<std::string, Outcome> got;
    last_stop_ = orch.run(keys, [&](CaseDone&& d) { got[d.key] = std::move(d.outcome); }, [] { return false; });
    std::vector<Outcome> out;
    for (const std::string& k : keys) {
      auto it = got.find(k);
      if (it != got.end()) {
        out.push_back(std::move(it->second));
      } else {
        Outcome o;
        o.key = k;
        o.status = Status::Error;
        o.error = "not run: " + (last_stop_.empty() ? std::string("no result") : last_stop_);
        out.push_back(std::move(o));
      }
    }
    return out;
  }

 private:
  OrchestratorConfig cfg_;
  std::string last_stop_;
};

}  // namespace

int reduce(const ReduceOptions& given) {
  ReduceOptions o = given;
  const CaseKey key = CaseKey::parse(o.key);
  // The run's configuration, as `repro --db` restores it (Note [Repro from the record]).
  ReproOptions ro;
  ro.key = o.key;
  ro.backend = o.backend;
  ro.suites_dir = o.suites_dir;
  ro.golden_store = o.golden_store;
  ro.golden_release = o.golden_release;
  ro.profile = o.profile;
  ro.db = o.db;
  ro.run = o.run;
  const std::optional<Restored> restored = restore_run(ro, key.str());
  o.backend = ro.backend.empty() ? "cpu" : ro.backend;
  o.suites_dir = ro.suites_dir;
  o.golden_store = ro.golden_store;
  o.golden_release = ro.golden_release;
  if (auto problem = validate_key(key)) throw UsageError(*problem);
  if (key.kind == "model") {
    throw UsageError(fmt::format(
        "model cases are not reduced: `gauntlet repro {} --backend {}` names a failing model case's first divergent node "
        "(its op and input shapes): reduce that op's case",
        shell_quote(key.str()), o.backend));
  }
  if (key.kind == "coll") throw UsageError("collective cases are not reduced (only op cases): reduce needs shapes to shrink");

  const std::filesystem::path logs =
      std::filesystem::temp_directory_path() / fmt::format("gauntlet-reduce-{}", static_cast<long long>(::getpid()));
  struct Cleanup {
    std::filesystem::path p;
    ~Cleanup() {
      std::error_code e;
      std::filesystem::remove_all(p, e);
    }
  } cleanup{logs};
  WorkerRunner runner(o, logs.string());
  const auto t0 = std::chrono::steady_clock::now();

  if (restored && !o.json) print_restored(*restored, o.db);
  const Outcome first = runner({key.str()}).front();
  if (first.status == Status::Error && first.error.rfind("not run: ", 0) == 0) throw UsageError(first_line(first.error));
  if (first.status == Status::Pass) {
    throw UsageError(fmt::format("case passes; nothing to reduce ({} on {})", key.str(), o.backend));
  }
  if (!reducible_status(first.status)) {
    throw UsageError(fmt::format("case is {} on {}, not a failure; nothing to reduce ({})", status_name(first.status),
                                 o.backend, key.str()));
  }
  const FailureSignature sig = failure_signature(first);
  if (!o.json) {
    fmt::print("reduce   {} on {}\nfails    {}: {}\nstrategy {} (docs/repro.md)\n", key.str(), o.backend, sig.str(),
               first_line(first.error), reduce_strategy());
    std::fflush(stdout);
  }

  ReduceConfig rc;
  rc.max_candidates = o.max_candidates;
  const ReduceResult r = reduce_case(key, first, [&](const std::vector<std::string>& keys) { return runner(keys); }, rc);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const ReduceStats& s = r.stats;
  const std::string smallest = r.smallest.str();
  const std::string repro = repro_line(smallest, o);
  const std::string cost = fmt::format(
      "{} candidates tried in {} rounds and {} batches of worker processes: {} failed the same way, {} passed, {} ended "
      "otherwise; {} rejected by validate_key (not run); {:.1f} s",
      s.tried, s.rounds, s.batches, s.reproduced, s.passed, s.other, s.invalid, seconds);

  if (o.json) {
    auto describe = [](const CaseKey& k, const Outcome& out) {
      return nlohmann::json{{"key", k.str()},
                            {"shapes", shapes_text(k)},
                            {"elements", total_elements(k)},
                            {"largest_input_elements", largest_input_elements(k)},
                            {"status", status_name(out.status)},
                            {"signature", failure_signature(out).str()},
                            {"error", first_line(out.error)}};
    };
    nlohmann::json j = {{"json_schema_version", kJsonSchemaVersion},
                        {"backend", o.backend},
                        {"original", describe(key, first)},
                        {"smallest", describe(r.smallest, r.outcome)},
                        {"reduced", !r.steps.empty()},
                        {"budget_spent", r.budget_spent},
                        {"strategy", reduce_strategy()},
                        {"steps", nlohmann::json::array()},
                        {"cost",
                         {{"candidates", s.tried},
                          {"failed_same_way", s.reproduced},
                          {"passed", s.passed},
                          {"other", s.other},
                          {"invalid", s.invalid},
                          {"rounds", s.rounds},
                          {"batches", s.batches},
                          {"seconds", seconds}}},
                        {"repro", repro}};
    for (const ReduceStep& st : r.steps) j["steps"].push_back({{"from", st.from}, {"to", st.to}, {"move", st.move}});
    if (restored) j["restored_from"] = {{"db", o.db}, {"run", restored->info.id}};
    std::cout << j.dump(1) << "\n";
    return 0;
  }

  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    fmt::print("step {:<3} {} -> {}  ({})\n", i + 1, shapes_text(CaseKey::parse(r.steps[i].from)),
               shapes_text(CaseKey::parse(r.steps[i].to)), r.steps[i].move);
  }
  if (r.steps.empty()) {
    fmt::print("smallest {} (the case itself: no smaller candidate fails the same way)\n", smallest);
  } else {
    fmt::print("smallest {}: {} elements in its largest input, {} in all (from {} and {})\n", smallest,
               largest_input_elements(r.smallest), total_elements(r.smallest), largest_input_elements(key),
               total_elements(key));
  }
  fmt::print("verdict  {}{}\n", status_name(r.outcome.status), r.outcome.error.empty() ? "" : ": " + first_line(r.outcome.error));
  if (r.budget_spent) {
    fmt::print("note     stopped after --max-candidates {}: a smaller case may still fail the same way\n", o.max_candidates);
  }
  fmt::print("cost     {}\n", cost);
  fmt::print("repro    {}\n", repro);
  return 0;
}

}  // namespace gauntlet::cli
