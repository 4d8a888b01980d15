// `gauntlet compare` (gauntlet/run/compare_command.h).
#include "gauntlet/run/compare_command.h"

#include <fmt/format.h>

#include <algorithm>

#include "gauntlet/analysis/compare_console.h"
#include "gauntlet/analysis/regress.h"
#include "gauntlet/analysis/reports.h"
#include "gauntlet/analysis/triage.h"
#include "gauntlet/analysis/waivers.h"
#include "gauntlet/run/confirm.h"
#include "gauntlet/run/reporters.h"
#include "gauntlet/store/acks.h"
#include "gauntlet/store/store.h"
#include "gauntlet/store/store_reader.h"

namespace gauntlet {

void describe_options(OptionSink& s, CompareRequest& o) {
  s.option("--db", o.db, "SQLite database holding both runs").required();
  s.option("--run", o.run, "the candidate run id (default: the latest run)");
  s.option("--baseline", o.baseline, "baseline run id, or auto: the previous release of the same backend and suite")
      .show_default();
  s.option("--metric", o.metric,
           "speed judged on: auto (simulated time when both runs have it, else host time) | sim | host")
      .show_default();
  s.option("--min-effect", o.min_effect, "smallest speed change flagged (fraction)").show_default();
  s.option("--significance", o.significance, "Mann-Whitney U p-value below which a host-time change is significant")
      .show_default();
  s.option("--min-samples", o.min_samples, "host time: repetitions needed on each side to judge a case").show_default();
  s.option("--error-growth", o.error_growth, "flag a passing case whose max_abs_err grew more than this factor")
      .show_default();
  s.option("--history", o.history, "earlier releases used for noise bands and change points (0: none)").show_default();
  s.option("--waivers", o.waivers, "waivers file (docs/waivers.md)");
  s.option("--gate", o.gate, "exit 1 when regressions of these kinds remain: accuracy,speed,coverage");
  s.flag("--honour-acks", o.honour_acks,
         "--gate: regressions acknowledged with gauntlet triage ack do not fail it (by default they do)");
  s.option("--min-ran", o.min_ran, "--gate: the candidate is hollow below this fraction of cases that ran")
      .show_default();
  s.option("--max-ran-drop", o.max_ran_drop,
           "--gate: the candidate is hollow when its ran fraction fell more than this below the baseline's")
      .show_default();
  s.option("--markdown", o.markdown, "write the Markdown report here (- for stdout)");
  s.option("--junit", o.junit, "write the JUnit XML report here (- for stdout)");
  s.option("--json", o.json, "write the JSON report here (- for stdout)");
  s.option("--top", o.top, "rows per Markdown table").show_default();
  s.flag("--quiet", o.quiet, "print only the gate verdict");
  s.flag("--github", o.github,
         "GitHub Actions: append a summary to $GITHUB_STEP_SUMMARY and print ::error lines for gating regressions (on "
         "by default when GITHUB_ACTIONS=true)");
  s.flag("--confirm", o.confirm,
         "re-run flagged host-time speed cases alternating baseline and candidate (A B B A ...); keep confirmed flags");
  s.option("--baseline-backend", o.baseline_backend,
           "--confirm: the baseline release's backend (default: the baseline run's)");
  s.option("--candidate-backend", o.candidate_backend,
           "--confirm: the candidate release's backend (default: the run's)");
  s.option("--baseline-env", o.baseline_env, "--confirm: NAME=VALUE set for the baseline's worker (repeatable)");
  s.option("--candidate-env", o.candidate_env, "--confirm: NAME=VALUE set for the candidate's worker (repeatable)");
  s.option("--confirm-rounds", o.confirm_rounds, "--confirm: A/B rounds per case").show_default();
}

Judged judge_run(const CompareRequest& o) {
  CompareOptions opt;
  const auto metric = parse_metric(o.metric);
  if (!metric) throw Error(fmt::format("--metric: unknown metric '{}' (auto, sim or host)", o.metric));
  opt.metric = *metric;
  if (!(o.min_effect >= 0)) throw Error("--min-effect must be >= 0");
  if (!(o.significance > 0 && o.significance < 1)) throw Error("--significance must be in (0, 1)");
  if (o.min_samples < 2) throw Error("--min-samples must be >= 2");
  if (!(o.error_growth > 1)) throw Error("--error-growth must be > 1");
  if (o.history < 0) throw Error("--history must be >= 0");
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
      throw Error(fmt::format("--baseline: '{}' is neither a run id nor auto", o.baseline));
    }
  }
  // Waivers first: a malformed file is reported before any work.
  Waivers waivers;
  if (!o.waivers.empty()) waivers = Waivers::load(o.waivers);

  RunComparison c = compare_runs(o.db, o.run, baseline, opt);
  if (o.confirm) {
    if (o.confirm_rounds < 6) {
      throw Error(
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

  {  // Note [Triage] in analysis/triage.cpp: acknowledged regressions listed apart
    StoreReader reader(o.db, [](const std::string& message, int exit_code) { throw Error(message, exit_code); });
    apply_acks(c, read_acks(o.db, [](const std::string& message, int exit_code) { throw Error(message, exit_code); }),
               reader.runs(), o.honour_acks);
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
  return {(o.quiet ? "" : compare_console_text(c, waivers)) + verdict.summary + "\n", verdict.exit_code};
}

}  // namespace gauntlet
