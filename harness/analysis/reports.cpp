#include "gauntlet/analysis/reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gauntlet/analysis/rollup.h"
#include "gauntlet/base/text.h"
#include "markdown.h"

namespace gauntlet {

namespace {

using Json = nlohmann::ordered_json;  // keys in the order written: the report reads top-down

std::string_view status_text(Status s) { return status_name(s); }

constexpr Change kAllChanges[] = {Change::StatusChange, Change::ErrorGrowth, Change::XPass,       Change::NewFallback,
                                  Change::GraphBreaks,  Change::Recompiles,  Change::CompileTime, Change::FirstRun,
                                  Change::PeakMemory,   Change::Missing,     Change::Slower,      Change::Faster,
                                  Change::Fixed,        Change::New,         Change::ErrorShift,  Change::SpeedShift};
static_assert(std::size(kAllChanges) == static_cast<std::size_t>(kLastChange) + 1);

// The changes in the order findings are sorted: by gate, then by change.
std::vector<Change> changes_by_gate() {
  std::vector<Change> out;
  for (Gate g : kAllGates) {
    for (Change ch : kAllChanges) {
      if (change_gate(ch) == g) out.push_back(ch);
    }
  }
  return out;
}

std::string plural(std::int64_t n, std::string_view noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Values.

std::string format_time(double us) {
  const double a = std::abs(us);
  if (a < 1e3) return fmt::format("{:.4g} µs", us);
  if (a < 1e6) return fmt::format("{:.4g} ms", us / 1e3);
  return fmt::format("{:.4g} s", us / 1e6);
}

// "1.23 M" (k, M, G, T), for rates.
std::string format_rate(double per_s) {
  constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P"};
  std::size_t p = 0;
  while (std::abs(per_s) >= 1000 && p + 1 < std::size(kPrefixes)) {
    per_s /= 1000;
    ++p;
  }
  return fmt::format("{:.4g}{}{}", per_s, p ? " " : "", kPrefixes[p]);
}

std::string format_bytes(double bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  while (std::abs(bytes) >= 1024 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.4g} {}", bytes, kUnits[unit]);
}

// A compared value in its unit; empty for the changes whose values mean nothing on their own
// (status changes, missing and new cases: their detail says what changed).
std::string format_value(Change c, double v) {
  switch (c) {
    case Change::StatusChange:
    case Change::XPass:
    case Change::Fixed:
    case Change::Missing:
    case Change::New:
      return "";
    default:
      break;
  }
  if (!std::isfinite(v)) return "n/a";
  switch (c) {
    case Change::ErrorGrowth:
    case Change::ErrorShift:
      return fmt::format("{:.3g}", v);
    case Change::Slower:
    case Change::Faster:
    case Change::SpeedShift:
    case Change::CompileTime:
    case Change::FirstRun:
      return format_time(v);
    case Change::PeakMemory:
      return format_bytes(v);
    default:  // fallback ops, graph breaks, recompiles: counts
      return fmt::format("{:.0f}", v);
  }
}

// "812.5 µs → 1.02 ms", or "" when the change's values mean nothing on their own.
std::string values_text(const Finding& f) {
  const std::string b = format_value(f.change, f.baseline);
  if (b.empty()) return "";
  return b + " → " + format_value(f.change, f.candidate);
}

bool meaningful_ratio(double r) { return std::isfinite(r) && r > 0; }
bool has_p_value(double p) { return std::isfinite(p) && p >= 0; }

std::string ratio_text(double r) {
  if (!meaningful_ratio(r)) return "";
  return r < 100 ? fmt::format("{:.3f}x", r) : fmt::format("{:.4g}x", r);
}

std::string p_text(double p) { return has_p_value(p) ? fmt::format("{:.2g}", p) : ""; }

// "reason (owner, until 2025-06-30, waivers.yaml:12)" / "expired 2024-01-31: reason (owner,
// waivers.yaml:7)"; empty parts left out.
std::string waiver_text(const WaiverRef& w) {
  std::vector<std::string> parts;
  if (!w.owner.empty()) parts.push_back(w.owner);
  if (!w.expired && !w.expires.empty()) parts.push_back("until " + w.expires);
  if (!w.where.empty()) parts.push_back(w.where);
  std::string out = w.expired ? "EXPIRED " + w.expires + ": " : "";
  out += w.reason.empty() ? "no reason given" : w.reason;
  if (!parts.empty()) out += " (" + join(parts, ", ") + ")";
  return out;
}

// ---------------------------------------------------------------------------------------------
// Gates.

// The gates asked for, each once, in kAllGates order.
std::vector<Gate> normalized(const std::vector<Gate>& gates) {
  std::vector<Gate> out;
  for (Gate g : kAllGates) {
    if (std::find(gates.begin(), gates.end(), g) != gates.end()) out.push_back(g);
  }
  return out;
}

bool asked(const std::vector<Gate>& gates, Gate g) { return std::find(gates.begin(), gates.end(), g) != gates.end(); }

// Fails the build: see "gating" at the top of reports.h.
bool gates_build(const Finding& f, const std::vector<Gate>& gates) {
  return f.gating() && asked(gates, change_gate(f.change));
}

bool waived(const Finding& f) { return is_regression(f.change) && f.waiver && !f.waiver->expired; }

// Findings of one change kind: how many, how many waived, how many fail the gates asked for.
struct ChangeCounts {
  std::int64_t findings = 0, waived = 0, gating = 0;
};
ChangeCounts change_counts(const RunComparison& c, Change ch, const std::vector<Gate>& gates) {
  ChangeCounts n;
  for (const Finding& f : c.findings) {
    if (f.change != ch) continue;
    ++n.findings;
    n.waived += waived(f);
    n.gating += gates_build(f, gates);
  }
  return n;
}

std::string gate_list(const std::vector<Gate>& gates) {
  std::vector<std::string> names;
  for (Gate g : gates) names.emplace_back(gate_name(g));
  return names.empty() ? "none" : join(names, ",");
}

std::string run_title(const RunRef& r) { return r.release.empty() ? fmt::format("run {}", r.id) : r.release; }

std::string show_command(const ReportOptions& o, std::int64_t run) {
  return fmt::format("gauntlet show --db {} --run {}", shell_argument(o.db_path), run);
}

// ---------------------------------------------------------------------------------------------
// Markdown.

using Rows = std::vector<const Finding*>;
constexpr std::string_view kSeeJson = "`--top N` shows more; the JSON report, `--json`, lists every one";

void md_regressions(std::string& out, const RunComparison& c, const Rows& rows, int top) {
  constexpr std::string_view kHeader =
      "| Case | Change | Detail | Baseline → Candidate | Ratio | p | Waiver | Repro |\n"
      "|---|---|---|---|--:|--:|---|---|\n";
  md_table(out, kHeader, rows, top, kSeeJson, [&c](const Finding& f) {
    return fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", markdown_code(f.key), change_name(f.change),
                       markdown_text(f.detail), values_text(f), ratio_text(f.ratio), p_text(f.p_value),
                       f.waiver ? markdown_text(waiver_text(*f.waiver)) : "", markdown_code(repro_command(c, f)));
  });
}

void md_header(std::string& out, const RunComparison& c, const ReportOptions& o) {
  const RunRef &b = c.baseline, &k = c.candidate;
  out += fmt::format("# gauntlet compare: {} vs {} ({}, {})\n\n", markdown_text(run_title(k)),
                     markdown_text(run_title(b)), markdown_text(k.backend), markdown_text(k.suite));
  out += "| | Baseline | Candidate |\n|---|---|---|\n";
  auto row = [&out](std::string_view what, const std::string& x, const std::string& y) {
    out += fmt::format("| {} | {} | {} |\n", what, x, y);
  };
  row("Release", markdown_text(b.release), markdown_text(k.release));
  row("Run", std::to_string(b.id), std::to_string(k.id));
  auto backend = [](const RunRef& r) {
    return markdown_code(r.backend) + (r.backend_version.empty() ? "" : " " + markdown_text(r.backend_version));
  };
  row("Backend", backend(b), backend(k));
  row("Suite", markdown_text(b.suite), markdown_text(k.suite));
  row("Started", markdown_text(b.started_at), markdown_text(k.started_at));
  row("Cases", std::to_string(c.baseline_cases), std::to_string(c.candidate_cases));
  out += fmt::format("\n{} in both runs.", plural(c.common_cases, "case"));
  if (!o.db_path.empty()) {
    out += fmt::format(" Database {}: {}, {}.", markdown_code(o.db_path), markdown_code(show_command(o, b.id)),
                       markdown_code(show_command(o, k.id)));
  }
  out += "\n\n";
}

void md_counts(std::string& out, const RunComparison& c, const std::vector<Gate>& gates) {
  out += "## Statuses\n\n| Status | Baseline | Candidate | Change |\n|---|--:|--:|--:|\n";
  for (Status s : kAllStatuses) {
    const auto b = c.baseline_counts.find(s), k = c.candidate_counts.find(s);
    if (b == c.baseline_counts.end() && k == c.candidate_counts.end()) continue;
    const std::int64_t nb = b == c.baseline_counts.end() ? 0 : b->second;
    const std::int64_t nk = k == c.candidate_counts.end() ? 0 : k->second;
    out += fmt::format("| {} | {} | {} | {} |\n", status_text(s), nb, nk,
                       nk == nb ? std::string("0") : fmt::format("{:+d}", nk - nb));
  }
  out += "\n## Findings by kind\n\n";
  if (c.findings.empty()) {
    out += "No findings: the candidate matches the baseline.\n\n";
    return;
  }
  out +=
      "Gating: a regression not waived (or whose waiver expired), in a gate asked for.\n\n"
      "| Change | Gate | Findings | Waived | Gating |\n|---|---|--:|--:|--:|\n";
  for (Change ch : changes_by_gate()) {
    const auto [n, w, g] = change_counts(c, ch, gates);
    if (n == 0) continue;
    const Gate gate = change_gate(ch);
    std::string gate_cell(gate_name(gate));
    if (!is_regression(ch)) {
      gate_cell += " (not a regression)";
    } else if (!asked(gates, gate)) {
      gate_cell += " (not asked)";
    }
    const bool reg = is_regression(ch);
    out += fmt::format("| {} | {} | {} | {} | {} |\n", change_name(ch), gate_cell, n, reg ? std::to_string(w) : "—",
                       reg ? std::to_string(g) : "—");
  }
  out += "\n";
  if (c.compile_cache_differs > 0) {
    out += fmt::format(
        "Compile time and first run of {} not judged: a compiler's cache served them in one run and not in the "
        "other (a cold compile against a cached one).\n\n",
        plural(c.compile_cache_differs, "compile case"));
  }
}

void md_speed(std::string& out, const SpeedSummary& s) {
  out += "## Speed\n\n";
  const stats::Interval& g = s.geomean;
  const std::string metric = s.metric.empty() ? "unknown" : markdown_text(s.metric);
  if (s.compared == 0 || !std::isfinite(g.estimate)) {
    out += fmt::format("Metric: {} time. No case was timed by both runs: no geomean.", metric);
  } else {
    std::string ratio = fmt::format("{:.3f}x", g.estimate);
    if (std::isfinite(g.lo) && std::isfinite(g.hi)) {
      ratio += fmt::format(" [{:.3f}, {:.3f}]", g.lo, g.hi);
    }
    const double pct = std::abs(g.estimate - 1) * 100;
    const std::string direction = fmt::format("{:.1f}", pct) == "0.0"
                                      ? "no change"
                                      : fmt::format("{:.1f}% {}", pct, g.estimate > 1 ? "slower" : "faster");
    out += fmt::format(
        "Metric: {} time. Geomean of candidate / baseline over the {} both runs timed: "
        "**{}** (95% confidence interval), {}.",
        metric, plural(s.compared, "case"), ratio, direction);
  }
  out += fmt::format(" {} unjudged (timed on one side only, or too few repetitions).", plural(s.unjudged, "case"));
  if (s.drift != 1) {
    out += fmt::format(" Host drift between the runs: {:+.1f}% (the median ratio; cases are judged relative to it).",
                       (s.drift - 1) * 100);
  }
  out += "\n\n";
  if (s.history.empty()) {
    out += "No history of earlier releases.\n\n";
    return;
  }
  out += "| Release | Index | |\n|---|--:|---|\n";
  for (const SpeedSummary::Point& p : s.history) {
    out += fmt::format("| {} | {:.3f} | {} |\n", markdown_text(p.release), p.index,
                       p.change_point ? "**change point**" : "");
  }
  out +=
      "\nIndex: the chained geomean of release-to-release ratios, the oldest release = 1; a change "
      "point is where the series shifts (E-Divisive).\n\n";
}

// Note [Throughput and cost] in regress.cpp.
void md_throughput(std::string& out, const RunComparison& c) {
  out += "## Throughput and cost\n\n";
  if (c.throughput.empty()) {
    out +=
        "No case timed by both runs records what a call processes (runs stored before schema 7 do "
        "not).\n\n";
    return;
  }
  auto price = [](const RunRef& r) {
    return r.price_per_device_hour ? fmt::format("{:g}", *r.price_per_device_hour) : std::string("none");
  };
  out += fmt::format(
      "Per second, on the speed metric: samples for model cases (the batch), elements for the others "
      "(every output compared); geomeans over the cases both runs timed. Price of a device-hour: "
      "baseline {}, candidate {}; cost per million = price × time of a call / 3600 s / items × 10⁶.\n\n",
      price(c.baseline), price(c.candidate));
  out +=
      "| Unit | Cases | Baseline /s | Candidate /s | Ratio | Cost per million, baseline | Candidate | Ratio |\n"
      "|---|--:|--:|--:|--:|--:|--:|--:|\n";
  auto interval = [](const stats::Interval& i) {
    if (!std::isfinite(i.estimate)) return std::string("—");
    std::string s = fmt::format("{:.3f}x", i.estimate);
    if (std::isfinite(i.lo) && std::isfinite(i.hi)) s += fmt::format(" [{:.3f}, {:.3f}]", i.lo, i.hi);
    return s;
  };
  auto cost = [](double v) { return std::isfinite(v) ? fmt::format("{:.4g}", v) : std::string("—"); };
  for (const ThroughputSummary& t : c.throughput) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", t.unit, t.cases, format_rate(t.baseline),
                       format_rate(t.candidate), interval(t.ratio), cost(t.baseline_cost), cost(t.candidate_cost),
                       interval(t.cost_ratio));
  }
  out += "\n";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public.

std::string repro_command(std::string_view key, std::string_view db_path, std::int64_t run, std::string_view backend) {
  std::string cmd = "gauntlet repro " + shell_quoted(key);
  if (!db_path.empty() && run > 0) return cmd + " --db " + shell_argument(db_path) + " --run " + std::to_string(run);
  if (!backend.empty()) cmd += " --backend " + shell_argument(backend);
  return cmd;
}

std::string repro_command(const RunComparison& c, const Finding& f) {
  // A whole-suite finding (key "suite:<name>") has no single case to rerun.
  if (f.key.rfind("suite:", 0) == 0) return "";
  return repro_command(f.key, c.db_path, c.candidate.id, c.candidate.backend);
}

GateVerdict gate_verdict(const RunComparison& c, const std::vector<Gate>& gates_asked) {
  const std::vector<Gate> gates = normalized(gates_asked);
  std::map<Gate, std::int64_t> failing;
  std::int64_t waived_n = 0, expired = 0, outside = 0, acked_gating = 0, acked_passing = 0;
  for (const Finding& f : c.findings) {
    if (!is_regression(f.change)) continue;
    const Gate g = change_gate(f.change);
    if (!asked(gates, g)) {
      outside += f.gating();
    } else if (f.gating()) {
      ++failing[g];
      expired += f.waiver.has_value();
      acked_gating += f.acknowledged();
    } else if (f.waiver && !f.waiver->expired) {
      ++waived_n;
    } else {
      ++acked_passing;  // acknowledged, and acks honoured (Note [Triage] in triage.cpp)
    }
  }
  std::vector<std::string> reasons;
  for (Gate g : gates) {
    if (failing[g] > 0) reasons.push_back(plural(failing[g], std::string(gate_name(g)) + " regression"));
  }
  std::vector<std::string> notes;
  if (waived_n > 0) notes.push_back(fmt::format("{} waived", waived_n));
  if (expired > 0) notes.push_back(fmt::format("{} with an expired waiver", expired));
  if (outside > 0) notes.push_back(plural(outside, "regression") + " outside the gates");
  if (acked_gating > 0) notes.push_back(fmt::format("{} acknowledged, gating without --honour-acks", acked_gating));
  if (acked_passing > 0) notes.push_back(fmt::format("{} acknowledged", acked_passing));

  GateVerdict v;
  v.exit_code = reasons.empty() ? 0 : 1;
  v.summary = fmt::format("gate {}: {}: {}", gate_list(gates), reasons.empty() ? "PASS" : "FAIL",
                          reasons.empty() ? "no gating regressions" : join(reasons, ", "));
  if (!notes.empty()) v.summary += " (" + join(notes, ", ") + ")";
  return v;
}

std::string markdown_report(const RunComparison& c, const ReportOptions& o) {
  const std::vector<Gate> gates = normalized(o.gates);
  std::string out;
  md_header(out, c, o);

  const GateVerdict verdict = gate_verdict(c, gates);
  out += fmt::format("**{}** (exit code {}): {}\n\n", verdict.exit_code ? "FAIL" : "PASS", verdict.exit_code,
                     markdown_text(verdict.summary));

  md_counts(out, c, gates);
  md_speed(out, c.speed);
  md_throughput(out, c);
  // Note [Rollups] in rollup.cpp: the regressions by group, before the per-case tables.
  out += fmt::format("## Regressions by group\n\n{}",
                     rollup_markdown(c, static_cast<std::size_t>(std::clamp(o.top, 0, 10))));

  // Each finding in exactly one section: waived regressions under Waived, whatever their kind.
  Rows by_gate[3], missing, waived_rows, others;
  std::int64_t missing_total = 0;
  for (const Finding& f : c.findings) {
    missing_total += f.change == Change::Missing;
    if (!is_regression(f.change)) {
      others.push_back(&f);
    } else if (waived(f)) {
      waived_rows.push_back(&f);
    } else if (f.change == Change::Missing) {
      missing.push_back(&f);
    } else {
      by_gate[static_cast<unsigned>(change_gate(f.change))].push_back(&f);
    }
  }
  constexpr std::string_view kTitles[] = {"Accuracy regressions", "Speed regressions", "Coverage regressions"};
  for (Gate g : kAllGates) {
    const Rows& rows = by_gate[static_cast<unsigned>(g)];
    out += fmt::format("## {} ({})\n\n", kTitles[static_cast<unsigned>(g)], rows.size());
    if (!asked(gates, g)) {
      out += fmt::format("Not gated: `--gate {}` was not asked for.\n\n", gate_name(g));
    }
    md_regressions(out, c, rows, o.top);
  }

  out += fmt::format("## Missing cases ({})\n\n", missing_total);
  if (missing_total == 0) {
    out += "Every case of the baseline has a result in the candidate.\n\n";
  } else {
    const std::int64_t waived_missing = missing_total - static_cast<std::int64_t>(missing.size());
    out += fmt::format(
        "{} of the baseline {} no result in the candidate{}. {}, "
        "and the speed geomean's denominator excludes {}: it is over the {} both runs "
        "timed.\n\n",
        plural(missing_total, "case"), missing_total == 1 ? "has" : "have",
        waived_missing ? fmt::format(" ({} waived, listed under Waived)", waived_missing) : "",
        missing_total == 1 ? "It counts as a coverage regression" : "They count as coverage regressions",
        missing_total == 1 ? "it" : "them", plural(c.speed.compared, "case"));
    if (!asked(gates, Gate::Coverage)) {
      out += "Not gated: `--gate coverage` was not asked for.\n\n";
    }
    md_regressions(out, c, missing, o.top);
  }

  // Failing in both runs: not regressions, but not to be forgotten (KnownFailure in regress.h).
  out += fmt::format("## Known failures ({})\n\n", c.known_failures.size());
  if (c.known_failures.empty()) {
    out += "No case fails in both runs.\n\n";
  } else {
    out += fmt::format(
        "Failing in the baseline and still failing in the candidate, no worse: not regressions, never gating.{}\n\n"
        "| Case | Baseline | Candidate | Detail | Repro |\n|---|---|---|---|---|\n",
        o.db_path.empty()
            ? ""
            : fmt::format(" Each: {}.", markdown_code(fmt::format(
                                            "gauntlet show --db {} --run {} --status FAIL,ERROR,CRASH,TIMEOUT,XPASS",
                                            shell_argument(o.db_path), c.candidate.id))));
    const std::size_t shown = std::min(c.known_failures.size(), static_cast<std::size_t>(std::max(o.top, 0)));
    for (std::size_t i = 0; i < shown; ++i) {
      const KnownFailure& k = c.known_failures[i];
      out += fmt::format("| {} | {} | {} | {} | {} |\n", markdown_code(k.key), status_text(k.baseline),
                         status_text(k.candidate), markdown_text(k.detail),
                         markdown_code(repro_command(k.key, c.db_path, c.candidate.id, c.candidate.backend)));
    }
    if (shown < c.known_failures.size()) {
      out += fmt::format("\n... and {} more ({})\n", c.known_failures.size() - shown, kSeeJson);
    }
    out += "\n";
  }

  out += fmt::format("## Waived ({})\n\n", waived_rows.size());
  md_regressions(out, c, waived_rows, o.top);

  // History shifts get their own section; the rest of the non-regressions share one.
  Rows shifts;
  others.erase(std::remove_if(others.begin(), others.end(),
                              [&shifts](const Finding* f) {
                                const bool shift = f->change == Change::ErrorShift || f->change == Change::SpeedShift;
                                if (shift) shifts.push_back(f);
                                return shift;
                              }),
               others.end());
  out += fmt::format("## Shifts in case histories ({})\n\n", shifts.size());
  if (c.options.history <= 0) {
    out += "Not looked for: no history asked for (`--history 0`).\n\n";
  } else if (c.speed.history.size() < 6) {
    out += fmt::format(
        "Not looked for: a case's series needs 6 releases, and these runs have {} (the baseline, the "
        "candidate and the history before them).\n\n",
        c.speed.history.size());
  } else if (!shifts.empty()) {
    out +=
        "Cases whose series across releases shifted for the worse at an earlier release and stayed "
        "there (E-Divisive); reported, never gating: each shift was judged when its release was "
        "compared.\n\n";
  }
  constexpr std::string_view kShiftsHeader =
      "| Case | Change | Detail | Before → Since | Ratio | p |\n"
      "|---|---|---|---|--:|--:|\n";
  // A row of the tables of findings that are not regressions (no waiver, no repro column).
  const auto plain_row = [](const Finding& f) {
    return fmt::format("| {} | {} | {} | {} | {} | {} |\n", markdown_code(f.key), change_name(f.change),
                       markdown_text(f.detail), values_text(f), ratio_text(f.ratio), p_text(f.p_value));
  };
  md_table(out, kShiftsHeader, shifts, o.top, kSeeJson, plain_row);

  out += fmt::format("## Fixed / faster / new ({})\n\n", others.size());
  if (!others.empty()) {
    std::int64_t n[3] = {0, 0, 0};
    for (const Finding* f : others) {
      ++n[f->change == Change::Fixed ? 0 : f->change == Change::Faster ? 1 : 2];
    }
    out += fmt::format("{} fixed, {} faster, {} new.\n\n", n[0], n[1], n[2]);
  }
  constexpr std::string_view kOthersHeader =
      "| Case | Change | Detail | Baseline → Candidate | Ratio | p |\n"
      "|---|---|---|---|--:|--:|\n";
  md_table(out, kOthersHeader, others, o.top, kSeeJson, plain_row);

  out += fmt::format("---\ngauntlet {} · json_schema_version {}\n",
                     o.gauntlet_version.empty() ? "(unknown version)" : markdown_text(o.gauntlet_version),
                     c.json_schema_version);
  return out;
}

std::string junit_report(const RunComparison& c, const ReportOptions& o) {
  const std::vector<Gate> gates = normalized(o.gates);
  const GateVerdict verdict = gate_verdict(c, gates);
  const std::string suite = c.candidate.suite.empty() ? "gauntlet" : c.candidate.suite;
  auto attr = [](std::string_view s) { return xml_escape(s, true); };
  auto text = [](std::string_view s) { return xml_escape(s, false); };

  std::string body;
  std::int64_t total_tests = 0, total_failures = 0, total_skipped = 0;
  for (Gate g : kAllGates) {
    std::string cases;
    std::int64_t tests = 0, failures = 0, skipped = 0;
    for (const Finding& f : c.findings) {
      if (change_gate(f.change) != g) continue;
      ++tests;
      cases += fmt::format("    <testcase classname=\"{}.{}\" name=\"{}\">\n", attr(suite), gate_name(g), attr(f.key));
      const std::string what = fmt::format("{}: {}", change_name(f.change), f.detail);
      if (!is_regression(f.change)) {
        cases += fmt::format("      <system-out>{}</system-out>\n", text(what));
      } else if (gates_build(f, gates)) {
        ++failures;
        std::string message = what;
        if (f.waiver) message += " (" + waiver_text(*f.waiver) + ")";
        std::string detail = f.detail;
        if (const std::string v = values_text(f); !v.empty()) detail += "\nvalues: " + v;
        if (meaningful_ratio(f.ratio)) detail += "\nratio: " + ratio_text(f.ratio);
        if (has_p_value(f.p_value)) detail += "\np-value: " + p_text(f.p_value);
        if (f.waiver) detail += "\nwaiver: " + waiver_text(*f.waiver);
        detail += "\nrepro: " + repro_command(c, f);
        cases += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", attr(message),
                             change_name(f.change), text(detail));
      } else {
        ++skipped;
        std::string message;
        if (waived(f)) {
          const WaiverRef& w = *f.waiver;
          std::vector<std::string> parts;
          if (!w.owner.empty()) parts.push_back(w.owner);
          if (!w.expires.empty()) parts.push_back("expires " + w.expires);
          if (!w.where.empty()) parts.push_back(w.where);
          message = "waived: " + (w.reason.empty() ? "no reason given" : w.reason);
          if (!parts.empty()) message += " (" + join(parts, ", ") + ")";
        } else {
          message = fmt::format("not gated (--gate {} not asked for): {}", gate_name(g), what);
        }
        cases += fmt::format("      <skipped message=\"{}\"/>\n", attr(message));
      }
      cases += "    </testcase>\n";
    }
    body += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n"
        "    <properties>\n",
        gate_name(g), tests, failures, skipped);
    auto property = [&body, &attr](std::string_view name, const std::string& value) {
      body += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, attr(value));
    };
    property("json_schema_version", std::to_string(c.json_schema_version));
    property("gauntlet_version", o.gauntlet_version);
    property("baseline_release", c.baseline.release);
    property("baseline_run", std::to_string(c.baseline.id));
    property("candidate_release", c.candidate.release);
    property("candidate_run", std::to_string(c.candidate.id));
    property("backend", c.candidate.backend);
    property("suite", c.candidate.suite);
    property("gated", asked(gates, g) ? "true" : "false");
    property("gate_verdict", verdict.summary);
    body += "    </properties>\n" + cases + "  </testsuite>\n";
    total_tests += tests;
    total_failures += failures;
    total_skipped += skipped;
  }
  // Known failures (failing in both runs) in a testsuite of their own, skipped: they do not gate
  // the comparison, and the run's own JUnit (run --junit) has them as failures.
  {
    std::string cases;
    for (const KnownFailure& k : c.known_failures) {
      cases += fmt::format(
          "    <testcase classname=\"{}.known-failures\" name=\"{}\">\n"
          "      <skipped message=\"{}\"/>\n    </testcase>\n",
          attr(suite), attr(k.key),
          attr(fmt::format("known failure: {} in baseline run {}, {} in candidate run {}{}; repro: {}",
                           status_text(k.baseline), c.baseline.id, status_text(k.candidate), c.candidate.id,
                           k.detail.empty() ? "" : ": " + k.detail,
                           repro_command(k.key, c.db_path, c.candidate.id, c.candidate.backend))));
    }
    const auto n = static_cast<std::int64_t>(c.known_failures.size());
    body += fmt::format(
        "  <testsuite name=\"known-failures\" tests=\"{}\" failures=\"0\" errors=\"0\" skipped=\"{}\">\n"
        "    <properties>\n"
        "      <property name=\"json_schema_version\" value=\"{}\"/>\n"
        "      <property name=\"gated\" value=\"false\"/>\n"
        "    </properties>\n{}  </testsuite>\n",
        n, n, c.json_schema_version, cases);
    total_tests += n;
    total_skipped += n;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"gauntlet compare\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
      "skipped=\"{}\">\n{}</testsuites>\n",
      total_tests, total_failures, total_skipped, body);
}

// Note [Triage] in triage.cpp: a finding's or group's acknowledgement.
static Json ack_json(const std::optional<AckRef>& a) {
  if (!a) return nullptr;
  return Json{{"id", a->id},
              {"subject", a->subject},
              {"note", a->note},
              {"by", a->by},
              {"at", a->at},
              {"until", a->until.empty() ? Json(nullptr) : Json(a->until)},
              {"grown", a->grown},
              {"grown_why", a->grown ? Json(a->grown_why) : Json(nullptr)},
              {"honoured", a->honoured}};
}

std::string json_report(const RunComparison& c, const ReportOptions& o) {
  const std::vector<Gate> gates = normalized(o.gates);
  auto number = [](double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); };
  auto run = [&number](const RunRef& r, std::int64_t cases) {
    return Json{{"id", r.id},
                {"release", r.release},
                {"backend", r.backend},
                {"backend_version", r.backend_version},
                {"suite", r.suite},
                {"started_at", r.started_at},
                {"cases", cases},
                {"price_per_device_hour", r.price_per_device_hour ? number(*r.price_per_device_hour) : Json(nullptr)}};
  };
  auto interval = [&number](const stats::Interval& i) {
    return Json{{"estimate", number(i.estimate)}, {"lo", number(i.lo)}, {"hi", number(i.hi)}};
  };

  Json j;
  j["json_schema_version"] = c.json_schema_version;
  j["gauntlet_version"] = o.gauntlet_version;
  j["baseline"] = run(c.baseline, c.baseline_cases);
  j["candidate"] = run(c.candidate, c.candidate_cases);
  const CompareOptions& co = c.options;
  j["options"] = Json{{"metric", metric_name(co.metric)},
                      {"min_effect", co.min_effect},
                      {"significance", co.significance},
                      {"min_samples", co.min_samples},
                      {"error_growth", co.error_growth},
                      {"coverage_growth", co.coverage_growth},
                      {"memory_growth", co.memory_growth},
                      {"history", co.history},
                      {"noise_k", co.noise_k},
                      {"bootstrap_resamples", co.bootstrap_resamples},
                      {"db", o.db_path}};

  Json& counts = j["counts"];
  counts["cases"] = Json{{"baseline", c.baseline_cases}, {"candidate", c.candidate_cases}, {"common", c.common_cases}};
  counts["status"] = Json::object();
  for (Status s : kAllStatuses) {
    const auto b = c.baseline_counts.find(s), k = c.candidate_counts.find(s);
    if (b == c.baseline_counts.end() && k == c.candidate_counts.end()) continue;
    counts["status"][std::string(status_text(s))] = Json{{"baseline", b == c.baseline_counts.end() ? 0 : b->second},
                                                         {"candidate", k == c.candidate_counts.end() ? 0 : k->second}};
  }
  counts["changes"] = Json::object();
  for (Change ch : kAllChanges) {
    const auto [n, w, g] = change_counts(c, ch, gates);
    counts["changes"][std::string(change_name(ch))] = Json{{"gate", gate_name(change_gate(ch))},
                                                           {"regression", is_regression(ch)},
                                                           {"findings", n},
                                                           {"waived", w},
                                                           {"gating", g}};
  }
  counts["known_failures"] = c.known_failures.size();
  counts["gates"] = Json::object();
  const std::map<Gate, std::int64_t> unwaived = c.gating_counts();
  for (Gate g : kAllGates) {
    std::int64_t regressions = 0, w = 0;
    for (const Finding& f : c.findings) {
      if (change_gate(f.change) != g || !is_regression(f.change)) continue;
      ++regressions;
      w += waived(f);
    }
    const auto it = unwaived.find(g);
    const std::int64_t u = it == unwaived.end() ? 0 : it->second;
    counts["gates"][std::string(gate_name(g))] = Json{{"asked", asked(gates, g)},
                                                      {"regressions", regressions},
                                                      {"waived", w},
                                                      {"unwaived", u},
                                                      {"gating", asked(gates, g) ? u : 0}};
  }

  const SpeedSummary& s = c.speed;
  Json history = Json::array();
  for (const SpeedSummary::Point& p : s.history) {
    history.push_back(Json{{"release", p.release}, {"index", number(p.index)}, {"change_point", p.change_point}});
  }
  j["compile_cache_differs"] = c.compile_cache_differs;
  j["speed"] = Json{{"metric", s.metric},       {"compared", s.compared},         {"unjudged", s.unjudged},
                    {"drift", number(s.drift)}, {"geomean", interval(s.geomean)}, {"history", history}};
  Json throughput = Json::array();
  for (const ThroughputSummary& t : c.throughput) {
    throughput.push_back(Json{{"unit", t.unit},
                              {"cases", t.cases},
                              {"baseline_per_s", number(t.baseline)},
                              {"candidate_per_s", number(t.candidate)},
                              {"ratio", interval(t.ratio)},
                              {"baseline_cost_per_million", number(t.baseline_cost)},
                              {"candidate_cost_per_million", number(t.candidate_cost)},
                              {"cost_ratio", interval(t.cost_ratio)}});
  }
  j["throughput"] = std::move(throughput);

  const GateVerdict verdict = gate_verdict(c, gates);
  Json gate_names = Json::array();
  for (Gate g : gates) gate_names.push_back(gate_name(g));
  j["gate"] = Json{{"gates", gate_names}, {"exit_code", verdict.exit_code}, {"summary", verdict.summary}};

  Json findings = Json::array();
  for (const Finding& f : c.findings) {
    Json waiver = nullptr;
    if (f.waiver) {
      waiver = Json{{"where", f.waiver->where},
                    {"reason", f.waiver->reason},
                    {"owner", f.waiver->owner},
                    {"expires", f.waiver->expires},
                    {"expired", f.waiver->expired}};
    }
    findings.push_back(Json{{"key", f.key},
                            {"change", change_name(f.change)},
                            {"gate", gate_name(change_gate(f.change))},
                            {"regression", is_regression(f.change)},
                            {"gating", gates_build(f, gates)},
                            {"baseline", number(f.baseline)},
                            {"candidate", number(f.candidate)},
                            {"ratio", meaningful_ratio(f.ratio) ? Json(f.ratio) : Json(nullptr)},
                            {"p_value", has_p_value(f.p_value) ? Json(f.p_value) : Json(nullptr)},
                            {"detail", f.detail},
                            {"waiver", waiver},
                            {"ack", ack_json(f.ack)},
                            {"repro", repro_command(c, f)}});
    if (f.work_items > 0) {
      // Note [Throughput and cost]: a speed finding's times as throughput and cost.
      Json& w = findings.back();
      w["work"] = Json{{"items", f.work_items},
                       {"unit", f.samples ? "samples" : "elements"},
                       {"baseline_per_s", number(throughput_per_s(f.work_items, f.baseline))},
                       {"candidate_per_s", number(throughput_per_s(f.work_items, f.candidate))},
                       {"baseline_cost_per_million",
                        number(cost_per_million(c.baseline.price_per_device_hour, f.work_items, f.baseline))},
                       {"candidate_cost_per_million",
                        number(cost_per_million(c.candidate.price_per_device_hour, f.work_items, f.candidate))}};
    }
  }
  // Note [Rollups] in rollup.cpp: every group, regressions first; the findings' indices in "findings".
  Json groups = Json::array();
  for (const FindingGroup& g : group_findings(c)) {
    Json members = Json::array();
    for (const Finding* f : g.findings) members.push_back(f - c.findings.data());
    groups.push_back(Json{{"group", g.group},
                          {"change", change_name(g.change)},
                          {"gate", gate_name(change_gate(g.change))},
                          {"regression", is_regression(g.change)},
                          {"cause", g.cause.empty() ? Json(nullptr) : Json(g.cause)},
                          {"cases", g.cases > 0 ? Json(g.cases) : Json(nullptr)},
                          {"moved", g.moved},
                          {"waived", g.waived},
                          {"median_ratio", number(g.median)},
                          {"q1_ratio", number(g.q1)},
                          {"q3_ratio", number(g.q3)},
                          {"worst", g.findings.front()->key},
                          {"ack", g.ack != nullptr ? ack_json(*g.ack) : Json(nullptr)},
                          {"reopened", g.reopened},
                          {"findings", std::move(members)}});
  }
  j["groups"] = std::move(groups);
  j["findings"] = std::move(findings);
  Json known = Json::array();
  for (const KnownFailure& k : c.known_failures) {
    known.push_back(Json{{"key", k.key},
                         {"baseline", status_text(k.baseline)},
                         {"candidate", status_text(k.candidate)},
                         {"detail", k.detail},
                         {"repro", repro_command(k.key, c.db_path, c.candidate.id, c.candidate.backend)}});
  }
  j["known_failures"] = std::move(known);
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace gauntlet
