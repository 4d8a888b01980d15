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
#include "gauntlet/op_spec.h"
#include "gauntlet/orchestrator.h"
#include "gauntlet/outcome_json.h"
#include "reduce_command.h"
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
  for (const auto& [name, value] : recorded_environment(record_env_patterns({})))
    cmd += name + "=" + shell_quote(value) + " ";
  cmd += "gauntlet repro " + shell_quote(key) + " --backend " + shell_quote(o.backend);
  const char* profile = std::getenv("GAUNTLET_PROFILE");
  if (profile && *profile && o.backend != profile) cmd += " --profile " + shell_quote(profile);
  if (!o.suites_dir.empty() && o.suites_dir != default_suites_dir())
    cmd += " --suites-dir " + shell_quote(o.suites_dir);
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
      if (!o.golden_release.empty())
        cfg_.worker_args.insert(cfg_.worker_args.end(), {"--golden-release", o.golden_release});
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

// Note [Model reduction]: a model case is not shrunk as a model (its sizes are the model's); its
// failure is taken to the op where it starts. A FAIL names its first divergent node (Note [First
// divergent node]: the op's kind and its tensor inputs' shapes, on the device); the case's
// executed-op records (Note [Executed ops]) hold that op's call with every argument, and the
// record whose op and tensor shapes are the node's becomes an op case of the table (Note [Ops
// from models]). That op case runs on its own; when it fails, it is reduced as any op case. When it
// passes, the model's values (not the shapes) make the node fail, and the op case is still printed.
struct DivergentNode {
  std::string text;  // as the error has it: "aten::gelu (mlp.py:12) inputs [2, 16]: 3 of 32 ..."
  std::string kind;  // "aten::gelu"
  std::vector<Shape> shapes;
  bool has_inputs = false;  // the text names the node's inputs (a value divergence, not a branch)
};

std::optional<DivergentNode> divergent_node(const std::string& error) {
  const std::string mark = "first divergent node: ";
  const std::size_t at = error.find(mark);
  if (at == std::string::npos) return std::nullopt;
  DivergentNode n;
  n.text = first_line(error.substr(at + mark.size()));
  n.kind = n.text.substr(0, n.text.find(' '));
  const std::string inputs = ") inputs ";
  const std::size_t in = n.text.find(inputs);
  if (in == std::string::npos) return n;
  n.has_inputs = true;
  const std::size_t from = in + inputs.size();
  const std::string list = n.text.substr(from, n.text.find(": ", from) - from);  // "[1, 3], [3]" or "-"
  for (std::size_t open = list.find('['); open != std::string::npos; open = list.find('[', open + 1)) {
    const std::size_t close = list.find(']', open);
    if (close == std::string::npos) break;
    Shape sh;
    const std::string inner = list.substr(open + 1, close - open - 1);
    for (std::size_t i = 0; i < inner.size();) {
      std::size_t j = inner.find(',', i);
      if (j == std::string::npos) j = inner.size();
      sh.push_back(std::stoll(inner.substr(i, j - i)));
      i = j + 1;
    }
    n.shapes.push_back(std::move(sh));
  }
  return n;
}

// The op cases the node's records cut to (most records one; the same op and shapes called with
// other arguments more), and why none when none.
std::vector<std::string> op_cases_of_node(const DivergentNode& n, const std::vector<std::string>& records,
                                          std::string& why) {
  std::vector<std::string> keys;
  std::size_t matched = 0;
  for (const std::string& text : records) {
    const std::optional<ExecutedOp> e = parse_executed_op(text);
    if (!e || e->op.substr(0, e->op.find('.')) != n.kind || record_tensor_shapes(*e) != n.shapes) continue;
    ++matched;
    const OpCaseCut cut = op_case_of(*e, /*train=*/false);  // the node diverged in the forward
    if (cut.key) {
      const std::string k = cut.key->str();
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    } else if (why.empty()) {
      why = cut.problem;
    }
  }
  if (matched == 0 && why.empty()) {
    why = records.empty() ? "the case recorded no executed ops"
                          : "no executed-op record of the case has that op and those shapes";
  }
  return keys;
}

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
  const auto t0 = std::chrono::steady_clock::now();

  if (restored && !o.json) print_restored(*restored, o.db);
  const Outcome given_outcome = runner({key.str()}).front();
  if (given_outcome.status == Status::Error && given_outcome.error.rfind("not run: ", 0) == 0) {
    throw UsageError(first_line(given_outcome.error));
  }
  if (given_outcome.status == Status::Pass) {
    throw UsageError(fmt::format("case passes; nothing to reduce ({} on {})", key.str(), o.backend));
  }
  if (!reducible_status(given_outcome.status)) {
    throw UsageError(fmt::format("case is {} on {}, not a failure; nothing to reduce ({})",
                                 status_name(given_outcome.status), o.backend, key.str()));
  }

  // A model case: its first divergent node's op case is what gets reduced (Note [Model reduction]).
  CaseKey op_key = key;
  Outcome first = given_outcome;
  nlohmann::json model_json;
  if (key.kind == "model") {
    if (given_outcome.status != Status::Fail) {
      throw UsageError(
          fmt::format("model case is {} on {}: only a model case that FAILs names the first divergent node its "
                      "reduction starts from "
                      "(docs/repro.md, Reduction)",
                      status_name(given_outcome.status), o.backend));
    }
    const std::optional<DivergentNode> node = divergent_node(given_outcome.error);
    if (!node)
      throw UsageError("the model case's failure names no first divergent node: " + first_line(given_outcome.error));
    if (!node->has_inputs) throw UsageError("the model's first divergent node is no op call to reduce: " + node->text);
    std::string why;
    const std::vector<std::string> op_keys = op_cases_of_node(*node, given_outcome.executed_ops, why);
    if (!o.json) {
      fmt::print(
          "reduce   {} on {}\nfails    {}: {}\nnode     {}\n", key.str(), o.backend,
          failure_signature(given_outcome).str(),
          first_line(given_outcome.error).substr(0, first_line(given_outcome.error).find("; first divergent node: ")),
          node->text);
    }
    if (op_keys.empty())
      throw UsageError(fmt::format("the model's first divergent node {} has no op case: {}", node->kind, why));
    const std::vector<Outcome> op_outcomes = runner(op_keys);
    model_json = {{"key", key.str()},
                  {"status", status_name(given_outcome.status)},
                  {"signature", failure_signature(given_outcome).str()},
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
    if (!failing) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
                            {"cost", {{"seconds", seconds}}},
                            {"repro", repro_line(key.str(), o)}};
        if (restored) j["restored_from"] = {{"db", o.db}, {"run", restored->info.id}};
        std::cout << j.dump(1) << "\n";
      } else {
        fmt::print("note     {}\nrepro    {}\n", note, repro_line(key.str(), o));
      }
      return 0;
    }
    op_key = CaseKey::parse(op_keys[*failing]);
    first = op_outcomes[*failing];
  }

  const FailureSignature sig = failure_signature(first);
  if (!o.json) {
    fmt::print("reduce   {} on {}\nfails    {}: {}\nstrategy {} (docs/repro.md)\n", op_key.str(), o.backend, sig.str(),
               first_line(first.error), reduce_strategy());
    std::fflush(stdout);
  }

  ReduceConfig rc;
  rc.max_candidates = o.max_candidates;
  const ReduceResult r = reduce_case(
      op_key, first, [&](const std::vector<std::string>& keys) { return runner(keys); }, rc);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const ReduceStats& s = r.stats;
  const std::string smallest = r.smallest.str();
  const std::string repro = repro_line(smallest, o);
  const std::string cost = fmt::format(
      "{} candidates tried in {} rounds and {} batches of worker processes: {} failed the same way, {} passed, {} "
      "ended "
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
                        {"original", describe(op_key, first)},
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
    if (!model_json.is_null()) j["model"] = model_json;
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
               largest_input_elements(r.smallest), total_elements(r.smallest), largest_input_elements(op_key),
               total_elements(op_key));
  }
  fmt::print("verdict  {}{}\n", status_name(r.outcome.status),
             r.outcome.error.empty() ? "" : ": " + first_line(r.outcome.error));
  if (r.budget_spent) {
    fmt::print("note     stopped after --max-candidates {}: a smaller case may still fail the same way\n",
               o.max_candidates);
  }
  fmt::print("cost     {}\n", cost);
  fmt::print("repro    {}\n", repro);
  return 0;
}

}  // namespace gauntlet::cli
