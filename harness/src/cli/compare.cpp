// gauntlet compare: a run judged against a baseline release (docs/regressions.md).
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "gauntlet/github.h"
#include "gauntlet/regress.h"
#include "gauntlet/reports.h"
#include "gauntlet/run/reporters.h"
#include "gauntlet/store.h"
#include "gauntlet/waivers.h"

namespace gauntlet::cli {

namespace {

std::vector<Gate> parse_gates(const std::string& spec) {
  std::vector<Gate> gates;
  std::stringstream in(spec);
  for (std::string name; std::getline(in, name, ',');) {
    if (name.empty()) continue;
    if (name == "all") return {std::begin(kAllGates), std::end(kAllGates)};
    auto g = parse_gate(name);
    if (!g) throw UsageError(fmt::format("--gate: unknown kind '{}' (accuracy, speed, coverage or all)", name));
    if (std::find(gates.begin(), gates.end(), *g) == gates.end()) gates.push_back(*g);
  }
  return gates;
}

}  // namespace

int compare(const CompareOptions& o) {
  ::gauntlet::CompareOptions opt;
  const auto metric = parse_metric(o.metric);
  if (!metric) throw UsageError(fmt::format("--metric: unknown metric '{}' (auto, sim or host)", o.metric));
  opt.metric = *metric;
  if (!(o.min_effect >= 0)) throw UsageError("--min-effect must be >= 0");
  if (!(o.significance > 0 && o.significance < 1)) throw UsageError("--significance must be in (0, 1)");
  if (o.min_samples < 2) throw UsageError("--min-samples must be >= 2");
  if (!(o.error_growth > 1)) throw UsageError("--error-growth must be > 1");
  if (o.history < 0) throw UsageError("--history must be >= 0");
  opt.min_effect = o.min_effect;
  opt.significance = o.significance;
  opt.min_samples = o.min_samples;
  opt.error_growth = o.error_growth;
  opt.history = o.history;
  opt.population_noise = !o.confirm;  // Note [Population noise]
  if (o.confirm) {                    // Note [Confirmation]: a wide screen, the A/B re-runs decide
    opt.screen_effect = o.min_effect / 2;
    opt.screen_significance = std::max(o.significance, 0.05);
  }
  const std::vector<Gate> gates = parse_gates(o.gate);
  std::optional<std::int64_t> baseline;
  if (o.baseline != "auto") {
    try {
      std::size_t used = 0;
      baseline = std::stoll(o.baseline, &used);
      if (used != o.baseline.size()) throw std::invalid_argument(o.baseline);
    } catch (const std::exception&) {
      throw UsageError(fmt::format("--baseline: '{}' is neither a run id nor auto", o.baseline));
    }
  }
  // Waivers first: a malformed file is reported before any work.
  Waivers waivers;
  if (!o.waivers.empty()) waivers = Waivers::load(o.waivers);

  RunComparison c = compare_runs(o.db, o.run, baseline, opt);
  if (o.confirm) {
    if (o.confirm_rounds < 6) {
      throw UsageError(
          "--confirm-rounds must be >= 6 (fewer processes a side cannot reach the 0.2% significance a "
          "confirmation needs)");
    }
    ConfirmOptions co;
    co.baseline_backend = o.baseline_backend.empty() ? c.baseline.backend : o.baseline_backend;
    co.candidate_backend = o.candidate_backend.empty() ? c.candidate.backend : o.candidate_backend;
    co.baseline_env = o.baseline_env;
    co.candidate_env = o.candidate_env;
    co.rounds = o.confirm_rounds;
    co.timing = o.confirm_timing;
    co.verbose = !o.quiet;
    const ConfirmResult r = confirm_speed(c, opt, co);
    if (!o.quiet && r.confirmed + r.dropped > 0) {
      fmt::print("confirm: {} speed findings confirmed, {} dropped (A/B over {} rounds)\n", r.confirmed, r.dropped,
                 co.rounds);
    }
  }
  const std::string today = today_utc();
  for (Finding& f : c.findings) {
    if (is_regression(f.change)) f.waiver = waivers.match(f.key, f.change, change_gate(f.change), today);
  }

  ReportOptions ro;
  ro.gates = gates;
  ro.db_path = o.db;
  ro.top = o.top;
  ro.gauntlet_version = GAUNTLET_VERSION_STRING;
  if (!o.markdown.empty()) write_report_file(o.markdown, markdown_report(c, ro), "Markdown");
  if (!o.junit.empty()) write_report_file(o.junit, junit_report(c, ro), "JUnit");
  if (!o.json.empty()) write_report_file(o.json, json_report(c, ro), "JSON");

  GateVerdict verdict = gate_verdict(c, gates);
  std::string hollow;
  if (!gates.empty()) {  // Note [Hollow runs]
    if (!(o.min_ran >= 0 && o.min_ran <= 1) || !(o.max_ran_drop >= 0 && o.max_ran_drop <= 1)) {
      throw UsageError("--min-ran and --max-ran-drop must be fractions between 0 and 1");
    }
    const auto store = Store::open(o.db, Store::OpenMode::ReadOnly);
    const RanSummary cand = ran_summary(*store, c.candidate.id), base = ran_summary(*store, c.baseline.id);
    hollow = hollow_reason(cand, o.min_ran);
    if (hollow.empty() && base.cases > 0 && cand.fraction() < base.fraction() - o.max_ran_drop) {
      hollow = fmt::format(
          "its cases that ran fell from {:.1f}% (baseline run {}) to {:.1f}%, more than --max-ran-drop {:g}",
          100 * base.fraction(), c.baseline.id, 100 * cand.fraction(), o.max_ran_drop);
    }
    if (!hollow.empty()) {
      verdict.exit_code = 1;
      verdict.summary = fmt::format("gate: FAIL: run {} is hollow: {}\n{}", c.candidate.id, hollow, verdict.summary);
    }
  }
  if (github_enabled(o.github)) write_compare_github(c, ro, hollow);  // Note [GitHub Actions]
  if (!o.quiet) {
    std::map<Change, std::int64_t> by_change;
    for (const Finding& f : c.findings) ++by_change[f.change];
    auto count = [&](Change ch) { return by_change.count(ch) ? by_change.at(ch) : 0; };
    fmt::print("compare: run {} ({} {}) vs baseline run {} ({}), suite {}: {} cases in both, {} missing, {} new\n",
               c.candidate.id, c.candidate.backend, c.candidate.release, c.baseline.id, c.baseline.release,
               c.candidate.suite, c.common_cases, count(Change::Missing), count(Change::New));
    if (c.speed.compared > 0) {
      fmt::print("speed ({} time): geomean {:.4f}x [{:.4f}, {:.4f}] over {} cases ({} unjudged)\n", c.speed.metric,
                 c.speed.geomean.estimate, c.speed.geomean.lo, c.speed.geomean.hi, c.speed.compared, c.speed.unjudged);
    }
    for (const ThroughputSummary& t : c.throughput) {
      std::string cost;
      if (std::isfinite(t.baseline_cost) || std::isfinite(t.candidate_cost)) {
        cost = fmt::format("; cost per million {:.4g} -> {:.4g}", t.baseline_cost, t.candidate_cost);
      }
      fmt::print("throughput ({}/s): {:.4g} -> {:.4g}, {:.4f}x [{:.4f}, {:.4f}] over {} cases{}\n", t.unit, t.baseline,
                 t.candidate, t.ratio.estimate, t.ratio.lo, t.ratio.hi, t.cases, cost);
    }
    for (const auto& [change, n] : by_change) {
      if (change == Change::New) continue;
      fmt::print("  {:<14} {:>7}{}\n", change_name(change), n, is_regression(change) ? "" : "  (not a regression)");
    }
    for (const Waiver* w : waivers.unused(c.findings)) {
      fmt::print("note: waiver {} ({}) matched nothing: remove it?\n", w->where, w->pattern);
    }
  }
  fmt::print("{}\n", verdict.summary);
  return verdict.exit_code;
}

void write_compare_github(const RunComparison& c, const ReportOptions& ro, const std::string& hollow) {
  std::string verdict = gate_verdict(c, ro.gates).summary;
  std::vector<Annotation> annotations = compare_annotations(c, ro);
  if (!hollow.empty()) {
    verdict = fmt::format("gate: FAIL: run {} is hollow: {}; {}", c.candidate.id, hollow, verdict);
    annotations.insert(annotations.begin(), Annotation{Annotation::Level::Error, "",
                                                       fmt::format("gauntlet compare: run {} hollow", c.candidate.id),
                                                       fmt::format("run {} is hollow: {}", c.candidate.id, hollow)});
  }
  append_step_summary(compare_step_summary(c, ro, verdict));
  std::cout << annotation_lines(annotations, kMaxAnnotations,
                                fmt::format("gauntlet compare --db {} --run {} --baseline {} --markdown -",
                                            shell_argument(ro.db_path), c.candidate.id, c.baseline.id));
  std::cout.flush();
}

}  // namespace gauntlet::cli
