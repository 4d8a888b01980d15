#include "gauntlet/analysis/compare_console.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace gauntlet {

std::string compare_console_text(const RunComparison& c, const Waivers& waivers) {
  std::map<Change, std::int64_t> by_change;
  for (const Finding& f : c.findings) ++by_change[f.change];
  auto count = [&](Change ch) { return by_change.count(ch) ? by_change.at(ch) : 0; };
  std::string out =
      fmt::format("compare: run {} ({} {}) vs baseline run {} ({}), suite {}: {} cases in both, {} missing, {} new\n",
                  c.candidate.id, c.candidate.backend, c.candidate.release, c.baseline.id, c.baseline.release,
                  c.candidate.suite, c.common_cases, count(Change::Missing), count(Change::New));
  if (c.speed.compared > 0) {
    out += fmt::format("speed ({} time): geomean {:.4f}x [{:.4f}, {:.4f}] over {} cases ({} unjudged)\n",
                       c.speed.metric, c.speed.geomean.estimate, c.speed.geomean.lo, c.speed.geomean.hi,
                       c.speed.compared, c.speed.unjudged);
  }
  if (c.compile_cache_differs > 0) {
    out += fmt::format(
        "compile time: {} compile cases not judged: a compiler's cache served them in one run and not in the other\n",
        c.compile_cache_differs);
  }
  for (const ThroughputSummary& t : c.throughput) {
    std::string cost;
    if (std::isfinite(t.baseline_cost) || std::isfinite(t.candidate_cost)) {
      cost = fmt::format("; cost per million {:.4g} -> {:.4g}", t.baseline_cost, t.candidate_cost);
    }
    out += fmt::format("throughput ({}/s): {:.4g} -> {:.4g}, {:.4f}x [{:.4f}, {:.4f}] over {} cases{}\n", t.unit,
                       t.baseline, t.candidate, t.ratio.estimate, t.ratio.lo, t.ratio.hi, t.cases, cost);
  }
  for (const auto& [change, n] : by_change) {
    if (change == Change::New) continue;
    out +=
        fmt::format("  {:<14} {:>7}{}\n", change_name(change), n, is_regression(change) ? "" : "  (not a regression)");
  }
  for (const Waiver* w : waivers.unused(c.findings)) {
    out += fmt::format("note: waiver {} ({}) matched nothing: remove it?\n", w->where, w->pattern);
  }
  return out;
}

}  // namespace gauntlet
