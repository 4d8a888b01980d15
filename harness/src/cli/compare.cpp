// gauntlet compare: a run judged against a baseline release (docs/regressions.md).
#include <fmt/format.h>

#include "cli.h"
#include "gauntlet/compare_console.h"
#include "gauntlet/regress.h"
#include "gauntlet/reports.h"
#include "gauntlet/run/reporters.h"
#include "gauntlet/store.h"
#include "gauntlet/waivers.h"

namespace gauntlet::cli {

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
    const auto store = Store::open(o.db, Store::OpenMode::ReadOnly);
    hollow = hollow_against(*store, c.candidate.id, c.baseline.id, o.min_ran, o.max_ran_drop);
    if (!hollow.empty()) {
      verdict.exit_code = 1;
      verdict.summary = fmt::format("gate: FAIL: run {} is hollow: {}\n{}", c.candidate.id, hollow, verdict.summary);
    }
  }
  if (github_enabled(o.github)) write_compare_github(c, ro, hollow);  // Note [GitHub Actions]
  if (!o.quiet) fmt::print("{}", compare_console_text(c, waivers));
  fmt::print("{}\n", verdict.summary);
  return verdict.exit_code;
}

}  // namespace gauntlet::cli
