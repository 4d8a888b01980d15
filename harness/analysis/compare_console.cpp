#include "gauntlet/analysis/compare_console.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "gauntlet/analysis/rollup.h"

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
  // Note [Rollups] in rollup.cpp: the groups first, so that one fault reads as one line.
  std::vector<FindingGroup> groups = group_findings(c);
  std::erase_if(groups, [](const FindingGroup& g) { return !is_regression(g.change); });
  std::vector<FindingGroup> acked;  // Note [Triage] in triage.cpp: apart from the open ones
  for (FindingGroup& g : groups) {
    if (g.ack != nullptr) acked.push_back(std::move(g));
  }
  std::int64_t waived_findings = 0, waived_groups = 0;  // waived groups: counted, not listed
  for (const FindingGroup& g : groups) {
    if (!g.findings.empty() && g.ack == nullptr && g.waived == g.moved) waived_findings += g.moved, ++waived_groups;
  }
  std::erase_if(groups,
                [](const FindingGroup& g) { return g.findings.empty() || g.ack != nullptr || g.waived == g.moved; });
  if (!groups.empty()) {
    out += "regressions by group, worst first (each case: --markdown or --json):\n";
    // A few per gate: one fault of each kind stays in the first lines, however many groups
    // another fault spreads to.
    constexpr std::size_t kShown = 5;
    for (Gate gate : kAllGates) {
      std::vector<const FindingGroup*> in;
      std::int64_t cases = 0;
      for (const FindingGroup& g : groups) {
        if (change_gate(g.change) != gate) continue;
        in.push_back(&g);
        cases += g.moved;
      }
      if (in.empty()) continue;
      out += fmt::format("  {}: {} regressions in {} group{}\n", gate_name(gate), cases, in.size(),
                         in.size() == 1 ? "" : "s");
      for (std::size_t i = 0; i < std::min(in.size(), kShown); ++i) out += "    " + group_line(*in[i]) + "\n";
      if (in.size() > kShown) out += fmt::format("    ... and {} more\n", in.size() - kShown);
    }
  }
  if (waived_findings > 0) {
    out += fmt::format("waived: {} regressions in {} group{} (each: --markdown or --json)\n", waived_findings,
                       waived_groups, waived_groups == 1 ? "" : "s");
  }
  if (!acked.empty()) {
    std::int64_t n = 0;
    for (const FindingGroup& g : acked) n += g.moved;
    out += fmt::format("acknowledged ({} regressions in {} group{}; gauntlet triage list):\n", n, acked.size(),
                       acked.size() == 1 ? "" : "s");
    constexpr std::size_t kShownAcked = 10;
    for (std::size_t i = 0; i < std::min(acked.size(), kShownAcked); ++i) out += "  " + group_line(acked[i]) + "\n";
    if (acked.size() > kShownAcked) out += fmt::format("  ... and {} more\n", acked.size() - kShownAcked);
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
