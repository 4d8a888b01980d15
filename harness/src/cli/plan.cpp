// gauntlet plan: assign a suite's cases to N shards by expected cost, into a plan file every host
// reads (`gauntlet run --plan plan.json --shard i`).
#include "gauntlet/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "cli.h"
#include "gauntlet/store.h"

namespace gauntlet::cli {

int plan(const PlanOptions& o) {
  if (o.shards < 1) throw UsageError("--shards must be at least 1");
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
  fmt::print("plan {}: suite {}, {} cases in {} shards ({})\n", o.out, suite.name, cases.size(), p.shards, source);
  for (int i = 0; i < p.shards; ++i) {
    fmt::print("  shard {:>3}: {:>7} cases, expected {:.1f} s\n", i, p.assignment[static_cast<std::size_t>(i)].size(),
               p.shard_cost_us[static_cast<std::size_t>(i)] / 1e6);
  }
  fmt::print("largest shard {:.2f}% above the mean\n", mean > 0 ? 100.0 * (largest - mean) / mean : 0.0);
  return 0;
}

}  // namespace gauntlet::cli
