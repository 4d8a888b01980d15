#include "gauntlet/core/session/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <queue>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "gauntlet/base/error.h"
#include "gauntlet/base/glob.h"
#include "gauntlet/base/output_dir.h"
#include "gauntlet/run/selection.h"
#include "gauntlet/store/store.h"
#include "gauntlet/suites/op_spec.h"

namespace gauntlet {

double estimated_case_us(const CaseKey& key) {
  if (key.kind == "coll") {
    // A group of processes: each starts libtorch (~0.7 s, Note [Collective groups]), on the cores
    // of one host; then the data, moved about twice per rank.
    const double bytes = double(numel(key.shapes.at(0))) * 4;
    return 700000.0 * key.world / 2 + bytes * key.world * 2 / 1000;
  }
  // A fixed cost per case (dispatch, golden, comparison) plus a cost per element touched; matrix
  // products and convolutions do O(K) work per output element. Only ratios matter for a plan.
  double elements = 0;
  for (const Shape& s : key.shapes) elements += double(std::max<std::int64_t>(numel(s), 1));
  const OpSpec* op = find_op(key.target);
  const std::string family = op ? op->family : "";
  double per_element = 0.002;
  if (family == "matmul" || family == "conv" || family == "attention") per_element = 0.05;
  double us = 40 + per_element * elements;
  if (key.mode == Mode::EagerBwd) us *= 3;
  return us;
}

std::map<std::uint64_t, double> history_costs(const Store& history, const std::string& backend) {
  std::map<std::uint64_t, std::vector<double>> samples;
  for (const RunInfo& run : history.runs()) {
    if (run.backend != backend) continue;
    for (const StoredResult& r : history.results(run.id)) {
      const Timing& t = r.outcome.timing;
      const double us = t.first_us + t.median_us * t.reps + t.golden_us;
      if (us > 0) samples[r.case_id].push_back(us);
    }
  }
  std::map<std::uint64_t, double> costs;
  for (auto& [id, v] : samples) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    costs[id] = v[v.size() / 2];
  }
  return costs;
}

// Note [ETA from history]: the progress model (Note [Progress model]) weighs the remaining cases
// by their expected cost. The size estimate gets the cost of whole kinds of case wrong by orders
// of magnitude (a compile case pays a compilation, a model case its layers, a collective its
// processes), so the first ETA of a run was 3-5x too high or low until the window had seen each
// kind. A database that holds a finished run of the same backend and suite knows better: each
// case is weighed by what it took there (first call, repetitions and golden), and a case that run
// lacks by its estimate times the median ratio of measured to estimated cost over the cases it
// has. One run is read (the latest), not the whole history: the display starts at once.
std::function<double(const CaseKey&)> expected_case_cost(const Store& store, const std::string& backend,
                                                         const std::string& suite, std::int64_t run) {
  std::optional<std::int64_t> previous;
  for (const RunInfo& r : store.runs()) {
    if (r.id != run && r.backend == backend && r.suite == suite && !r.finished_at.empty()) previous = r.id;
  }
  if (!previous) return estimated_case_us;
  auto costs = std::make_shared<std::unordered_map<std::uint64_t, double>>();
  std::vector<double> ratios;
  for (const StoredResult& r : store.results(*previous)) {
    const Timing& t = r.outcome.timing;
    const double us = t.first_us + t.median_us * t.reps + t.golden_us;
    if (!(us > 0)) continue;
    (*costs)[r.case_id] = us;
    try {
      ratios.push_back(us / estimated_case_us(CaseKey::parse(r.outcome.key)));
    } catch (const std::exception&) {
      // a key this build cannot parse (another version's): weighed by its measured cost only
    }
  }
  if (costs->empty()) return estimated_case_us;
  double scale = 1;
  if (!ratios.empty()) {
    std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2), ratios.end());
    scale = ratios[ratios.size() / 2];
  }
  return [costs, scale](const CaseKey& key) {
    const auto it = costs->find(key.id());
    return it != costs->end() ? it->second : estimated_case_us(key) * scale;
  };
}

Plan Plan::make(const Suite& suite, const std::vector<const Case*>& cases, int shards,
                const std::map<std::uint64_t, double>& history, const std::string& cost_source) {
  if (shards < 1) throw std::invalid_argument("--shards must be at least 1");
  Plan p;
  p.suite = suite.name;
  p.suite_file = suite.file;
  p.shards = shards;
  p.cost_source = cost_source;
  p.assignment.assign(static_cast<std::size_t>(shards), {});
  p.shard_cost_us.assign(static_cast<std::size_t>(shards), 0.0);
  std::vector<std::pair<double, std::uint64_t>> costed;
  costed.reserve(cases.size());
  for (const Case* c : cases) {
    auto it = history.find(c->id);
    costed.emplace_back(it != history.end() ? it->second : estimated_case_us(c->key), c->id);
  }
  std::sort(costed.begin(), costed.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  using Load = std::pair<double, int>;  // (cost so far, shard): the least-loaded on top
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> heap;
  for (int i = 0; i < shards; ++i) heap.push({0.0, i});
  for (const auto& [cost, id] : costed) {
    auto [load, shard] = heap.top();
    heap.pop();
    p.assignment[static_cast<std::size_t>(shard)].push_back(id);
    p.shard_cost_us[static_cast<std::size_t>(shard)] = load + cost;
    heap.push({load + cost, shard});
  }
  return p;
}

void Plan::save(const std::string& path) const {
  nlohmann::json shards_json = nlohmann::json::array();
  for (std::size_t i = 0; i < assignment.size(); ++i) {
    std::vector<std::string> ids;
    ids.reserve(assignment[i].size());
    for (std::uint64_t id : assignment[i]) ids.push_back(fmt::format("{:016x}", id));
    shards_json.push_back(
        {{"index", i}, {"cases", assignment[i].size()}, {"expected_us", shard_cost_us[i]}, {"ids", ids}});
  }
  const nlohmann::json j = {{"format", "gauntlet-plan"}, {"version", kFormatVersion}, {"suite", suite},
                            {"suite_file", suite_file},  {"filter", filter},          {"cost_source", cost_source},
                            {"shards", shards},          {"assignment", shards_json}};
  std::ofstream out(path);
  if (!out) throw std::invalid_argument(path + ": cannot write the plan");
  out << j.dump(1) << '\n';
  if (!out) throw std::invalid_argument(path + ": cannot write the plan");
}

Plan Plan::load(const std::string& path) {
  try {
    check_input_file("--plan", path);  // Note [Input files]
  } catch (const Error& e) {
    throw std::invalid_argument(e.what());  // Plan's errors, as every other below
  }
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot read the plan");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw std::invalid_argument(path + ": not a JSON plan");
  if (j.value("format", "") != "gauntlet-plan") throw std::invalid_argument(path + ": not a gauntlet plan (format)");
  const int version = j.value("version", 0);
  if (version != kFormatVersion) {
    throw std::invalid_argument(
        fmt::format("{}: plan format version {} (this gauntlet reads {})", path, version, kFormatVersion));
  }
  Plan p;
  try {
    p.suite = j.at("suite").get<std::string>();
    p.suite_file = j.value("suite_file", "");
    p.filter = j.value("filter", "");
    p.cost_source = j.value("cost_source", "");
    p.shards = j.at("shards").get<int>();
    for (const auto& s : j.at("assignment")) {
      std::vector<std::uint64_t> ids;
      for (const auto& id : s.at("ids")) ids.push_back(std::stoull(id.get<std::string>(), nullptr, 16));
      p.assignment.push_back(std::move(ids));
      p.shard_cost_us.push_back(s.value("expected_us", 0.0));
    }
  } catch (const std::exception& e) {
    throw std::invalid_argument(path + ": malformed plan: " + e.what());
  }
  if (static_cast<int>(p.assignment.size()) != p.shards) {
    throw std::invalid_argument(fmt::format("{}: {} shards declared, {} listed", path, p.shards, p.assignment.size()));
  }
  return p;
}

std::vector<const Case*> Plan::cases_of(const Suite& suite, int shard, const std::string& filter_spec) const {
  if (shard < 0 || shard >= shards) {
    throw std::invalid_argument(fmt::format("shard {} is not in the plan (0..{})", shard, shards - 1));
  }
  std::map<std::uint64_t, const Case*> by_id;
  for (const Case& c : suite.cases) by_id[c.id] = &c;
  Filter filter = filter_spec.empty() ? Filter() : Filter(filter_spec);
  std::vector<const Case*> out;
  for (std::uint64_t id : assignment[static_cast<std::size_t>(shard)]) {
    auto it = by_id.find(id);
    if (it == by_id.end()) {
      throw std::invalid_argument(fmt::format(
          "the plan names case {:016x}, which suite {} no longer has: make the plan again", id, suite.name));
    }
    if (filter.matches(it->second->text)) out.push_back(it->second);
  }
  std::sort(out.begin(), out.end(), [](const Case* a, const Case* b) { return a->text < b->text; });
  return out;
}

void describe_options(OptionSink& s, PlanOptions& o) {
  s.option("--suite", o.suite, "suite name or .yaml path").required();
  s.option("--shards", o.shards, "number of shards").required();
  s.option("--out", o.out, "plan file to write").required();
  s.option("--history", o.history, "a results database: past durations of the cases");
  s.option("--backend", o.backend, "whose past runs the history uses").show_default();
  s.option("--filter", o.filter, "gtest-style globs on case keys");
  s.option("--suites-dir", o.suites_dir, "where suites live");
}

std::string write_plan(const PlanOptions& o) {
  if (o.shards < 1) throw Error("--shards must be at least 1");
  const std::string dir = suites_dir_or_default(o.suites_dir);
  Suite suite = load_suite(o.suite, dir);
  const std::vector<const Case*> cases = select_cases(suite, o.filter, "");
  std::map<std::uint64_t, double> history;
  std::string source = "estimate from case sizes";
  if (!o.history.empty()) {
    auto store = Store::open(o.history, Store::OpenMode::ReadOnly);
    history = history_costs(*store, o.backend);
    std::size_t known = 0;
    for (const Case* c : cases) known += history.count(c->id);
    source = fmt::format("median of past {} runs in {} for {} of {} cases, size estimate for the rest", o.backend,
                         o.history, known, cases.size());
  }
  Plan p = Plan::make(suite, cases, o.shards, history, source);
  p.filter = o.filter;
  p.suite_file = o.suite;
  p.save(o.out);
  const double total = std::accumulate(p.shard_cost_us.begin(), p.shard_cost_us.end(), 0.0);
  const double mean = total / p.shards;
  const double largest = *std::max_element(p.shard_cost_us.begin(), p.shard_cost_us.end());
  std::string text =
      fmt::format("plan {}: suite {}, {} cases in {} shards ({})\n", o.out, suite.name, cases.size(), p.shards, source);
  for (int i = 0; i < p.shards; ++i) {
    text += fmt::format("  shard {:>3}: {:>7} cases, expected {:.1f} s\n", i,
                        p.assignment[static_cast<std::size_t>(i)].size(),
                        p.shard_cost_us[static_cast<std::size_t>(i)] / 1e6);
  }
  return text + fmt::format("largest shard {:.2f}% above the mean\n", mean > 0 ? 100.0 * (largest - mean) / mean : 0.0);
}

}  // namespace gauntlet
