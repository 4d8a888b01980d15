#include "gauntlet/core/reduce/reduce_report.h"

#include <fmt/format.h>

#include <map>

#include "gauntlet/base/error.h"
#include "gauntlet/base/text.h"
#include "gauntlet/core/session/orchestrator.h"
#include "gauntlet/run/child_process.h"
#include "gauntlet/run/outcome_json.h"

namespace gauntlet {

namespace {

std::string shapes_text(const CaseKey& k) {
  std::string s;
  for (const Shape& sh : k.shapes) s += (s.empty() ? "" : ",") + shape_str(sh);
  return s;
}

}  // namespace

RunCases worker_batches(const WorkerSettings& settings, int workers, double timeout_s, const std::string& log_dir) {
  OrchestratorConfig cfg;
  cfg.exe = self_exe();
  cfg.worker_args = worker_args(settings);
  cfg.workers = workers;
  cfg.timeout_s = timeout_s;
  cfg.retries = 0;
  cfg.log_dir = log_dir;
  return [cfg](const std::vector<std::string>& keys) {
    Orchestrator orch(cfg);
    std::map<std::string, Outcome> got;
    const std::string stop = orch.run(
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
        o.error = "not run: " + (stop.empty() ? std::string("no result") : stop);
        out.push_back(std::move(o));
      }
    }
    return out;
  };
}

void check_reducible(const Outcome& given, const CaseKey& key, const std::string& backend) {
  if (given.status == Status::Error && given.error.rfind("not run: ", 0) == 0) throw Error(first_line(given.error));
  if (given.status == Status::Pass) {
    throw Error(fmt::format("case passes; nothing to reduce ({} on {})", key.str(), backend));
  }
  if (!reducible_status(given.status)) {
    throw Error(fmt::format("case is {} on {}, not a failure; nothing to reduce ({})", status_name(given.status),
                            backend, key.str()));
  }
}

ModelStart model_start(const Outcome& given, const std::string& backend, const RunCases& run) {
  if (given.status != Status::Fail) {
    throw Error(
        fmt::format("model case is {} on {}: only a model case that FAILs names the first divergent node its "
                    "reduction starts from (docs/repro.md, Reduction)",
                    status_name(given.status), backend));
  }
  const std::optional<DivergentNode> node = divergent_node(given.error);
  if (!node) throw Error("the model case's failure names no first divergent node: " + first_line(given.error));
  if (!node->has_inputs) throw Error("the model's first divergent node is no op call to reduce: " + node->text);
  ModelStart m;
  m.node = *node;
  m.op_keys = op_cases_of_node(m.node, given.executed_ops, m.why);
  if (m.op_keys.empty()) return m;
  m.op_outcomes = run(m.op_keys);
  for (std::size_t i = 0; i < m.op_keys.size() && !m.failing; ++i) {
    if (reducible_status(m.op_outcomes[i].status)) m.failing = i;
  }
  return m;
}

std::string model_start_text(const CaseKey& key, const Outcome& given, const std::string& backend, const ModelStart& m,
                             bool with_op_cases) {
  const std::string error = first_line(given.error);
  std::string out =
      fmt::format("reduce   {} on {}\nfails    {}: {}\nnode     {}\n", key.str(), backend,
                  failure_signature(given).str(), error.substr(0, error.find("; first divergent node: ")), m.node.text);
  if (!with_op_cases) return out;
  for (std::size_t i = 0; i < m.op_keys.size(); ++i) {
    const Outcome& o = m.op_outcomes[i];
    out += fmt::format("op case  {}: {} on its own{}\n", m.op_keys[i], status_name(o.status),
                       o.error.empty() ? "" : " (" + first_line(o.error).substr(0, 200) + ")");
  }
  return out;
}

nlohmann::json model_start_json(const CaseKey& key, const Outcome& given, const ModelStart& m) {
  nlohmann::json j = {{"key", key.str()},
                      {"status", status_name(given.status)},
                      {"signature", failure_signature(given).str()},
                      {"divergent_node", m.node.text},
                      {"op_cases", nlohmann::json::array()}};
  for (std::size_t i = 0; i < m.op_keys.size(); ++i) {
    j["op_cases"].push_back({{"key", m.op_keys[i]}, {"status", status_name(m.op_outcomes[i].status)}});
  }
  return j;
}

std::string reduce_text(const ReduceResult& r, const ReduceShown& s) {
  const ReduceStats& st = r.stats;
  const std::string smallest = r.smallest.str();
  std::string out;
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    out += fmt::format("step {:<3} {} -> {}  ({})\n", i + 1, shapes_text(CaseKey::parse(r.steps[i].from)),
                       shapes_text(CaseKey::parse(r.steps[i].to)), r.steps[i].move);
  }
  if (r.steps.empty()) {
    out += fmt::format("smallest {} (the case itself: no smaller candidate fails the same way)\n", smallest);
  } else {
    out += fmt::format("smallest {}: {} elements in its largest input, {} in all (from {} and {})\n", smallest,
                       largest_input_elements(r.smallest), total_elements(r.smallest), largest_input_elements(s.start),
                       total_elements(s.start));
  }
  out += fmt::format("verdict  {}{}\n", status_name(r.outcome.status),
                     r.outcome.error.empty() ? "" : ": " + first_line(r.outcome.error));
  if (r.budget_spent) {
    out += fmt::format("note     stopped after --max-candidates {}: a smaller case may still fail the same way\n",
                       s.max_candidates);
  }
  out += fmt::format(
      "cost     {} candidates tried in {} rounds and {} batches of worker processes: {} failed the same way, {} "
      "passed, {} ended otherwise; {} rejected by validate_key (not run); {:.1f} s\n",
      st.tried, st.rounds, st.batches, st.reproduced, st.passed, st.other, st.invalid, s.seconds);
  out += fmt::format("repro    {}\n", s.repro);
  return out;
}

nlohmann::json reduce_json(const ReduceResult& r, const ReduceShown& s) {
  auto describe = [](const CaseKey& k, const Outcome& out) {
    return nlohmann::json{{"key", k.str()},
                          {"shapes", shapes_text(k)},
                          {"elements", total_elements(k)},
                          {"largest_input_elements", largest_input_elements(k)},
                          {"status", status_name(out.status)},
                          {"signature", failure_signature(out).str()},
                          {"error", first_line(out.error)}};
  };
  const ReduceStats& st = r.stats;
  nlohmann::json j = {{"json_schema_version", kJsonSchemaVersion},
                      {"backend", s.backend},
                      {"original", describe(s.start, s.start_outcome)},
                      {"smallest", describe(r.smallest, r.outcome)},
                      {"reduced", !r.steps.empty()},
                      {"budget_spent", r.budget_spent},
                      {"strategy", reduce_strategy()},
                      {"steps", nlohmann::json::array()},
                      {"cost",
                       {{"candidates", st.tried},
                        {"failed_same_way", st.reproduced},
                        {"passed", st.passed},
                        {"other", st.other},
                        {"invalid", st.invalid},
                        {"rounds", st.rounds},
                        {"batches", st.batches},
                        {"seconds", s.seconds}}},
                      {"repro", s.repro}};
  for (const ReduceStep& step : r.steps) {
    j["steps"].push_back({{"from", step.from}, {"to", step.to}, {"move", step.move}});
  }
  return j;
}

}  // namespace gauntlet
