// gauntlet reduce: the smallest case of the same op, dtype, layout, mode and arguments that still
// fails the same way (Note [Failing-shape reduction] in harness/src/reduce.cpp). Every case,
// the given one first, runs in worker processes (Note [Worker protocol]), so that a case that
// crashes its process reduces too. Stores nothing. No torch here.
#include "gauntlet/reduce.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "gauntlet/backend.h"
#include "gauntlet/op_spec.h"
#include "gauntlet/ops_from_models.h"
#include "gauntlet/orchestrator.h"
#include "gauntlet/outcome_json.h"
#include "gauntlet/runner.h"
#include "reduce_command.h"

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
  ReproSetup s = o;
  const char* profile = std::getenv("GAUNTLET_PROFILE");
  s.profile = profile ? profile : "";
  return standalone_repro_command(key, s, recorded_environment(record_env_patterns({})));
}

// Runs batches of keys through worker processes: one Orchestrator run per batch, no retries (a
// crash is the answer, not an accident), each worker's stderr in a scratch folder.
class WorkerRunner {
 public:
  WorkerRunner(const ReduceOptions& o, std::string log_dir) {
    cfg_.exe = self_exe();
    WorkerSettings settings;
    settings.backend = o.backend;
    settings.suites_dir = o.suites_dir;
    settings.timing.reps = 0;
    settings.golden_store = o.golden_store;
    settings.golden_always = !o.golden_store.empty();
    settings.golden_release = o.golden_release;
    cfg_.worker_args = worker_args(settings);
    cfg_.workers = o.workers;
    cfg_.timeout_s = o.timeout;
    cfg_.retries = 0;
    cfg_.log_dir = std::move(log_dir);
  }

  // Outcomes in the order of `keys`; a key the workers did not run is an ERROR saying why.
  std::vector<Outcome> operator()(const std::vector<std::string>& keys) {
    Orchestrator orch(cfg_);
    std::map<std::string, Outcome> got;
    last_stop_ = orch.run(
        keys, [&](CaseDone&& d) { got[d.key] = std::move(d.outcome); }, [] { return false; });
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

// The run's configuration, as `repro --db` restores it (Note [Repro from the record]): the backend,
// suites dir and goldens of `o` are those of the stored run when --db names one.
std::optional<Restored> restore_options(ReduceOptions& o, const CaseKey& key) {
  std::optional<Restored> restored = restore_run(o, o.db, o.run, key.str());
  if (o.backend.empty()) o.backend = "cpu";
  return restored;
}

// A UsageError unless the case, as run, fails in a way reduction can keep.
void check_reducible(const Outcome& given, const CaseKey& key, const std::string& backend) {
  if (given.status == Status::Error && given.error.rfind("not run: ", 0) == 0) {
    throw UsageError(first_line(given.error));
  }
  if (given.status == Status::Pass) {
    throw UsageError(fmt::format("case passes; nothing to reduce ({} on {})", key.str(), backend));
  }
  if (!reducible_status(given.status)) {
    throw UsageError(fmt::format("case is {} on {}, not a failure; nothing to reduce ({})", status_name(given.status),
                                 backend, key.str()));
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Where the reduction of a failing case starts: the case itself, or for a model case the op case
// of its first divergent node (Note [Model reduction]), with what was learnt of the model in
// `model_json`. None when the node's op cases pass on their own (said, in text or JSON).
struct Start {
  CaseKey key;
  Outcome outcome;
};
std::optional<Start> model_start(const CaseKey& key, const Outcome& given, const ReduceOptions& o,
                                 const std::function<std::vector<Outcome>(const std::vector<std::string>&)>& runner,
                                 const std::optional<Restored>& restored, std::chrono::steady_clock::time_point t0,
                                 nlohmann::json& model_json) {
  if (given.status != Status::Fail) {
    throw UsageError(
        fmt::format("model case is {} on {}: only a model case that FAILs names the first divergent node its "
                    "reduction starts from "
                    "(docs/repro.md, Reduction)",
                    status_name(given.status), o.backend));
  }
  const std::optional<DivergentNode> node = divergent_node(given.error);
  if (!node) throw UsageError("the model case's failure names no first divergent node: " + first_line(given.error));
  if (!node->has_inputs) throw UsageError("the model's first divergent node is no op call to reduce: " + node->text);
  std::string why;
  const std::vector<std::string> op_keys = op_cases_of_node(*node, given.executed_ops, why);
  if (!o.json) {
    fmt::print("reduce   {} on {}\nfails    {}: {}\nnode     {}\n", key.str(), o.backend,
               failure_signature(given).str(),
               first_line(given.error).substr(0, first_line(given.error).find("; first divergent node: ")), node->text);
  }
  if (op_keys.empty()) {
    throw UsageError(fmt::format("the model's first divergent node {} has no op case: {}", node->kind, why));
  }
  const std::vector<Outcome> op_outcomes = runner(op_keys);
  model_json = {{"key", key.str()},
                {"status", status_name(given.status)},
                {"signature", failure_signature(given).str()},
                {"divergent_node", node->text},
                {"op_cases", nlohmann::json::array()}};
  std::optional<std::size_t> failing;
  for (std::size_t i = 0; i < op_keys.size(); ++i) {
    model_json["op_cases"].push_back({{"key", op_keys[i]}, {"status", status_name(op_outcomes[i].status)}});
    if (!o.json) {
      fmt::print("op case  {}: {} on its own{}\n", op_keys[i], status_name(op_outcomes[i].status),
                 op_outcomes[i].error.empty() ? "" : " (" + first_line(op_outcomes[i].error).substr(0, 200) + ")");
    }
    if (!failing && reducible_status(op_outcomes[i].status)) failing = i;
  }
  if (failing) return Start{CaseKey::parse(op_keys[*failing]), op_outcomes[*failing]};
  const std::string note = fmt::format(
      "the node's op case passes on its own on {}: the values the model feeds it, not its shapes, make it fail; "
      "reproduce the model case",
      o.backend);
  if (o.json) {
    nlohmann::json j = {{"json_schema_version", kJsonSchemaVersion},
                        {"backend", o.backend},
                        {"model", model_json},
                        {"original", nullptr},
                        {"smallest", nullptr},
                        {"reduced", false},
                        {"note", note},
                        {"cost", {{"seconds", seconds_since(t0)}}},
                        {"repro", repro_line(key.str(), o)}};
    if (restored) j["restored_from"] = {{"db", o.db}, {"run", restored->info.id}};
    std::cout << j.dump(1) << "\n";
  } else {
    fmt::print("note     {}\nrepro    {}\n", note, repro_line(key.str(), o));
  }
  return std::nullopt;
}

// The reduction's result for --json.
void print_reduce_json(const ReduceOptions& o, const Start& start, const ReduceResult& r, double seconds,
                       const nlohmann::json& model_json, const std::optional<Restored>& restored) {
  auto describe = [](const CaseKey& k, const Outcome& out) {
    return nlohmann::json{{"key", k.str()},
                          {"shapes", shapes_text(k)},
                          {"elements", total_elements(k)},
                          {"largest_input_elements", largest_input_elements(k)},
                          {"status", status_name(out.status)},
                          {"signature", failure_signature(out).str()},
                          {"error", first_line(out.error)}};
  };
  const ReduceStats& s = r.stats;
  nlohmann::json j = {{"json_schema_version", kJsonSchemaVersion},
                      {"backend", o.backend},
                      {"original", describe(start.key, start.outcome)},
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
                      {"repro", repro_line(r.smallest.str(), o)}};
  for (const ReduceStep& st : r.steps) j["steps"].push_back({{"from", st.from}, {"to", st.to}, {"move", st.move}});
  if (!model_json.is_null()) j["model"] = model_json;
  if (restored) j["restored_from"] = {{"db", o.db}, {"run", restored->info.id}};
  std::cout << j.dump(1) << "\n";
}

// The reduction's result as text: the steps, the smallest case, its verdict, the cost, the repro.
void print_reduce_text(const ReduceOptions& o, const Start& start, const ReduceResult& r, double seconds) {
  const ReduceStats& s = r.stats;
  const std::string smallest = r.smallest.str();
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    fmt::print("step {:<3} {} -> {}  ({})\n", i + 1, shapes_text(CaseKey::parse(r.steps[i].from)),
               shapes_text(CaseKey::parse(r.steps[i].to)), r.steps[i].move);
  }
  if (r.steps.empty()) {
    fmt::print("smallest {} (the case itself: no smaller candidate fails the same way)\n", smallest);
  } else {
    fmt::print("smallest {}: {} elements in its largest input, {} in all (from {} and {})\n", smallest,
               largest_input_elements(r.smallest), total_elements(r.smallest), largest_input_elements(start.key),
               total_elements(start.key));
  }
  fmt::print("verdict  {}{}\n", status_name(r.outcome.status),
             r.outcome.error.empty() ? "" : ": " + first_line(r.outcome.error));
  if (r.budget_spent) {
    fmt::print("note     stopped after --max-candidates {}: a smaller case may still fail the same way\n",
               o.max_candidates);
  }
  fmt::print(
      "cost     {} candidates tried in {} rounds and {} batches of worker processes: {} failed the same way, {} "
      "passed, {} ended otherwise; {} rejected by validate_key (not run); {:.1f} s\n",
      s.tried, s.rounds, s.batches, s.reproduced, s.passed, s.other, s.invalid, seconds);
  fmt::print("repro    {}\n", repro_line(smallest, o));
}

}  // namespace

int reduce(const ReduceOptions& given) {
  ReduceOptions o = given;
  const CaseKey key = CaseKey::parse(o.key);
  const std::optional<Restored> restored = restore_options(o, key);
  if (auto problem = validate_key(key)) throw UsageError(*problem);
  if (key.kind == "coll")
    throw UsageError("collective cases are not reduced (only op and model cases): reduce needs shapes to shrink");

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
  const auto run_keys = [&](const std::vector<std::string>& keys) { return runner(keys); };
  const auto t0 = std::chrono::steady_clock::now();

  if (restored && !o.json) {
    fmt::print("{}", restored_text(*restored, o.db));
    std::fflush(stdout);
  }
  const Outcome given_outcome = runner({key.str()}).front();
  check_reducible(given_outcome, key, o.backend);
  Start start{key, given_outcome};
  nlohmann::json model_json;
  if (key.kind == "model") {
    std::optional<Start> from_model = model_start(key, given_outcome, o, run_keys, restored, t0, model_json);
    if (!from_model) return 0;
    start = std::move(*from_model);
  }
  if (!o.json) {
    fmt::print("reduce   {} on {}\nfails    {}: {}\nstrategy {} (docs/repro.md)\n", start.key.str(), o.backend,
               failure_signature(start.outcome).str(), first_line(start.outcome.error), reduce_strategy());
    std::fflush(stdout);
  }
  ReduceConfig rc;
  rc.max_candidates = o.max_candidates;
  const ReduceResult r = reduce_case(start.key, start.outcome, run_keys, rc);
  const double seconds = seconds_since(t0);
  if (o.json) {
    print_reduce_json(o, start, r, seconds, model_json, restored);
  } else {
    print_reduce_text(o, start, r, seconds);
  }
  return 0;
}

}  // namespace gauntlet::cli
