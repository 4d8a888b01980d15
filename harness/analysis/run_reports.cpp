#include "gauntlet/analysis/run_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "gauntlet/analysis/reports.h"
#include "gauntlet/base/stage.h"
#include "gauntlet/base/text.h"
#include "markdown.h"

namespace gauntlet {

namespace {

std::string plural(std::int64_t n, std::string_view noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

// The error without its stderr tail (that goes to <system-err> or its own block).
std::string error_head(const std::string& error) {
  const std::size_t at = stderr_tail_at(error);
  return at == std::string::npos ? error : error.substr(0, at);
}
std::string stderr_tail(const std::string& error) {
  const std::size_t at = stderr_tail_at(error);
  return at == std::string::npos ? "" : error.substr(at + kStderrMark.size());
}

// Why a case ended as it did, in one line: the error's first line, else the catalog's reason.
// An ERROR, CRASH or TIMEOUT names the stage it failed in (Note [Failing stage]): a crash while
// copying outputs back is not the op's.
std::string why(const Outcome& o) {
  std::string w = first_line(o.error);
  if (w.empty()) w = first_line(o.reason);
  const bool stopped = o.status == Status::Error || o.status == Status::Crash || o.status == Status::Timeout;
  if (stopped && !o.stage.empty()) w += " [stage: " + stage_text(o.stage) + "]";
  return w;
}

// The kind of a case: the first part of its key ("op", "model", "coll").
std::string kind_of(const std::string& key) {
  const std::size_t slash = key.find('/');
  return slash == std::string::npos || slash == 0 ? "other" : key.substr(0, slash);
}

// A case's JUnit classname, `<suite>.<kind>.<target>` ("smoke.op.add", "models_smoke.model.gru"):
// CI test views group by classname, so a suite's cases group by op, model or collective. Dots
// in the target (a model file's "name.hash") become '_': a dot nests a package in those views.
std::string junit_classname(const std::string& suite, const std::string& key) {
  const std::string kind = kind_of(key);
  const std::size_t from = key.find('/'), to = from == std::string::npos ? from : key.find('/', from + 1);
  std::string target = from == std::string::npos ? std::string() : key.substr(from + 1, to - from - 1);
  std::replace(target.begin(), target.end(), '.', '_');
  return target.empty() ? suite + "." + kind : suite + "." + kind + "." + target;
}

bool is_error(Status s) { return s == Status::Error || s == Status::Crash || s == Status::Timeout; }
bool is_skip(Status s) { return s == Status::Skip || s == Status::Unsupported; }

// Seconds as JUnit's xs:decimal wants them: no exponent, microseconds.
std::string junit_seconds(double s) { return fmt::format("{:.6f}", std::isfinite(s) && s > 0 ? s : 0.0); }

// "812.5 µs", "1.02 ms", "3.5 s" ("0" for nothing measured).
std::string format_seconds(double s) {
  if (!(s > 0) || !std::isfinite(s)) return "0";
  if (s < 1e-3) return fmt::format("{:.4g} µs", s * 1e6);
  if (s < 1) return fmt::format("{:.4g} ms", s * 1e3);
  return fmt::format("{:.4g} s", s);
}

std::string repro_of(const RunReport& r, const Outcome& o) { return repro_command(o.key, r.db_path, r.id, r.backend); }

// The numbers a failed comparison gives, one line; "" when nothing was compared.
std::string metrics_line(const Outcome& o) {
  const Metrics& m = o.metrics;
  if (m.numel == 0) return "";
  std::string s = fmt::format("max_abs_err {:.3g}, max_rel_err {:.3g}, {} of {} elements mismatched", m.max_abs_err,
                              m.max_rel_err, m.mismatches, m.numel);
  if (!m.worst.empty()) s += ", worst at " + m.worst;
  if (!m.nan_inf_ok) s += ", NaN/Inf pattern differs";
  s += fmt::format(" (rtol {:.3g}, atol {:.3g}", o.rtol, o.atol);
  if (!o.tolerance_profile.empty()) s += ", rule " + o.tolerance_profile;
  return s + ")";
}

// Results sorted by key: the same report whatever order the workers finished in.
std::vector<const Outcome*> sorted(const RunReport& r) {
  std::vector<const Outcome*> out;
  out.reserve(r.results.size());
  for (const Outcome& o : r.results) out.push_back(&o);
  std::stable_sort(out.begin(), out.end(), [](const Outcome* a, const Outcome* b) { return a->key < b->key; });
  return out;
}

std::map<Status, std::int64_t> counts_of(const RunReport& r) {
  std::map<Status, std::int64_t> n;
  for (const Outcome& o : r.results) ++n[o.status];
  return n;
}

std::string counts_text(const std::map<Status, std::int64_t>& counts, bool (*pick)(Status)) {
  std::vector<std::string> parts;
  for (Status s : kAllStatuses) {
    const auto it = counts.find(s);
    if (it != counts.end() && pick(s)) parts.push_back(fmt::format("{} {}", status_name(s), it->second));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string run_title(const RunReport& r) {
  std::string t = fmt::format("gauntlet run {}", r.id);
  if (!r.release.empty()) t += ": " + r.release;
  return t;
}

std::string show_command(const RunReport& r) {
  return fmt::format("gauntlet show --db {} --run {}", shell_argument(r.db_path), r.id);
}

// A fenced code block holding `text` as written: a fence longer than any run of backticks in it,
// control characters other than newline and tab as U+FFFD.
std::string code_block(const std::string& text) {
  std::size_t run = 0, longest = 0;
  for (char ch : text) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  std::string body;
  for (char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if ((u < 0x20 && ch != '\n' && ch != '\t') || u == 0x7F) {
      body += "\xEF\xBF\xBD";
    } else {
      body += ch;
    }
  }
  while (!body.empty() && body.back() == '\n') body.pop_back();
  return fence + "text\n" + body + "\n" + fence + "\n";
}

}  // namespace

std::size_t stderr_tail_at(const std::string& error) { return error.find(kStderrMark); }

double case_seconds(const Outcome& o) {
  const Timing& t = o.timing;
  const double us = t.first_us + t.median_us * std::max(t.reps, 0) + t.golden_us;
  return std::isfinite(us) && us > 0 ? us / 1e6 : 0.0;
}

RunVerdict run_verdict(const RunReport& r) {
  const auto counts = counts_of(r);
  std::int64_t failed = 0, passed = 0, skipped = 0;
  for (const auto& [s, n] : counts) {
    if (is_failure(s)) failed += n;
    if (s == Status::Pass || s == Status::XFail) passed += n;
    if (is_skip(s)) skipped += n;
  }
  const auto total = static_cast<std::int64_t>(r.results.size());
  RunVerdict v;
  std::string what;
  if (failed > 0) {
    what = fmt::format("{} of {} failed ({})", failed, plural(total, "case"), counts_text(counts, is_failure));
  } else {
    what = fmt::format("{} of {} passed", passed, plural(total, "case"));
    if (skipped > 0) what += fmt::format(", {} skipped or unsupported", skipped);
    what += ", none failed";
  }
  if (r.gate) {
    const bool fail = failed > 0 || !r.hollow.empty();
    v.exit_code = fail ? 1 : 0;
    v.summary = fmt::format("gate: {}: ", fail ? "FAIL" : "PASS");
    if (!r.hollow.empty()) v.summary += fmt::format("run {} is hollow: {}; ", r.id, r.hollow);
    v.summary += what;
  } else {
    v.summary = "no gate: " + what;
  }
  if (r.finished_at.empty()) {
    v.summary += r.planned > total ? fmt::format("; unfinished: {} of {} cases have results", total, r.planned)
                                   : std::string("; unfinished");
  }
  return v;
}

std::string run_junit_report(const RunReport& r) {
  const RunVerdict verdict = run_verdict(r);
  const std::string suite = r.suite.empty() ? "gauntlet" : r.suite;
  auto attr = [](std::string_view s) { return xml_escape(s, true); };
  auto text = [](std::string_view s) { return xml_escape(s, false); };

  // One testsuite per kind, in the order of the sorted keys' first appearance.
  std::vector<std::string> kinds;
  std::map<std::string, std::vector<const Outcome*>> by_kind;
  for (const Outcome* o : sorted(r)) {
    const std::string k = kind_of(o->key);
    if (!by_kind.count(k)) kinds.push_back(k);
    by_kind[k].push_back(o);
  }
  std::string body;
  std::int64_t all_tests = 0, all_failures = 0, all_errors = 0, all_skipped = 0;
  double all_time = 0;
  for (const std::string& kind : kinds) {
    std::string cases;
    std::int64_t failures = 0, errors = 0, skipped = 0;
    double time = 0;
    for (const Outcome* po : by_kind.at(kind)) {
      const Outcome& o = *po;
      const double seconds = case_seconds(o);
      time += seconds;
      cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{}\"",
                           attr(junit_classname(suite, o.key)), attr(o.key), junit_seconds(seconds));
      const std::string status(status_name(o.status));
      const std::string tail = stderr_tail(o.error);
      std::string inner;
      if (is_failure(o.status)) {
        const bool error = is_error(o.status);
        (error ? errors : failures) += 1;
        std::string message = why(o);
        if (o.status == Status::XPass) {
          message = "passed, but a failure was expected" + (message.empty() ? "" : ": " + message);
        }
        std::string detail = status;
        if (const std::string head = error_head(o.error); !head.empty()) detail += "\n" + head;
        if (!o.reason.empty() && o.reason != o.error) detail += "\nreason: " + o.reason;
        if (const std::string m = metrics_line(o); !m.empty()) detail += "\n" + m;
        if (o.attempt > 1) detail += fmt::format("\nattempt {}", o.attempt);
        detail += "\nrepro: " + repro_of(r, o);
        inner +=
            fmt::format("      <{} message=\"{}\" type=\"{}\">{}</{}>\n", error ? "error" : "failure",
                        attr(message.empty() ? status : message), status, text(detail), error ? "error" : "failure");
      } else if (is_skip(o.status)) {
        ++skipped;
        const std::string w = why(o);
        inner += fmt::format("      <skipped message=\"{}\"/>\n", attr(w.empty() ? status : status + ": " + w));
      } else if (o.status == Status::XFail) {
        std::string note = "XFAIL: failed as expected";
        if (!o.reason.empty()) note += "\nreason: " + o.reason;
        if (!o.error.empty()) note += "\n" + error_head(o.error);
        if (const std::string m = metrics_line(o); !m.empty()) note += "\n" + m;
        inner += fmt::format("      <system-out>{}</system-out>\n", text(note));
      }
      if (!tail.empty()) inner += fmt::format("      <system-err>{}</system-err>\n", text(tail));
      cases += inner.empty() ? "/>\n" : ">\n" + inner + "    </testcase>\n";
    }
    const auto tests = static_cast<std::int64_t>(by_kind.at(kind).size());
    body += fmt::format(
        "  <testsuite name=\"{}.{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">\n"
        "    <properties>\n",
        attr(suite), attr(kind), tests, failures, errors, skipped, junit_seconds(time));
    auto property = [&body, &attr](std::string_view name, const std::string& value) {
      body += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, attr(value));
    };
    property("json_schema_version", "1");
    property("gauntlet_version", r.gauntlet_version);
    property("run", std::to_string(r.id));
    property("release", r.release);
    property("backend", r.backend);
    property("backend_version", r.backend_version);
    property("suite", r.suite);
    property("started_at", r.started_at);
    property("finished_at", r.finished_at.empty() ? "unfinished" : r.finished_at);
    property("gated", r.gate ? "true" : "false");
    property("verdict", verdict.summary);
    body += "    </properties>\n" + cases + "  </testsuite>\n";
    all_tests += tests;
    all_failures += failures;
    all_errors += errors;
    all_skipped += skipped;
    all_time += time;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"gauntlet run {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
      "time=\"{}\">\n{}</testsuites>\n",
      r.id, all_tests, all_failures, all_errors, all_skipped, junit_seconds(all_time), body);
}

namespace {

void md_status_counts(std::string& out, const RunReport& r) {
  std::map<Status, double> seconds;
  for (const Outcome& o : r.results) seconds[o.status] += case_seconds(o);
  const auto counts = counts_of(r);
  out += "| Status | Cases | Time |\n|---|--:|--:|\n";
  for (Status s : kAllStatuses) {
    const auto it = counts.find(s);
    if (it == counts.end()) continue;
    out += fmt::format("| {} | {} | {} |\n", status_name(s), it->second, format_seconds(seconds[s]));
  }
  out += fmt::format("| total | {} | {} |\n\n", r.results.size(), [&] {
    double t = 0;
    for (const auto& [s, v] : seconds) t += v;
    return format_seconds(t);
  }());
}

std::string md_verdict(const RunReport& r) {
  const RunVerdict v = run_verdict(r);
  const bool failed = v.summary.find(" failed (") != std::string::npos || v.exit_code != 0;
  return fmt::format("**{}**{}: {}\n\n", r.gate ? (v.exit_code ? "FAIL" : "PASS") : (failed ? "FAILURES" : "CLEAN"),
                     r.gate ? fmt::format(" (exit code {})", v.exit_code) : "", markdown_text(v.summary));
}

std::vector<const Outcome*> failing(const RunReport& r) {
  std::vector<const Outcome*> out;
  for (const Outcome* o : sorted(r)) {
    if (is_failure(o->status)) out.push_back(o);
  }
  return out;
}

void md_failures(std::string& out, const RunReport& r, const std::vector<const Outcome*>& rows, int top,
                 std::string_view more) {
  constexpr std::string_view kHeader = "| Case | Status | Message | Time | Repro |\n|---|---|---|--:|---|\n";
  md_table(out, kHeader, rows, top, more, [&r](const Outcome& o) {
    return fmt::format("| {} | {} | {} | {} | {} |\n", markdown_code(o.key), status_name(o.status),
                       markdown_text(why(o)), format_seconds(case_seconds(o)), markdown_code(repro_of(r, o)));
  });
}

}  // namespace

std::string run_markdown_report(const RunReport& r, int top) {
  std::string out =
      fmt::format("# {} ({}, {})\n\n", markdown_text(run_title(r)), markdown_text(r.backend), markdown_text(r.suite));
  out += md_verdict(r);
  out += "| | |\n|---|---|\n";
  auto row = [&out](std::string_view what, const std::string& value) {
    out += fmt::format("| {} | {} |\n", what, value);
  };
  row("Run", std::to_string(r.id));
  row("Release", markdown_text(r.release));
  row("Backend", markdown_code(r.backend) + (r.backend_version.empty() ? "" : " " + markdown_text(r.backend_version)));
  row("Suite", markdown_text(r.suite));
  row("Started", markdown_text(r.started_at));
  row("Finished", r.finished_at.empty() ? "unfinished" : markdown_text(r.finished_at));
  const auto total = static_cast<std::int64_t>(r.results.size());
  row("Cases", r.planned > total ? fmt::format("{} of {}", total, r.planned) : std::to_string(total));
  if (!r.db_path.empty()) row("Database", markdown_code(r.db_path) + ": " + markdown_code(show_command(r)));
  out += "\n## Statuses\n\n";
  md_status_counts(out, r);

  std::vector<const Outcome*> fails = failing(r), xfails, skips, passes;
  for (const Outcome* o : sorted(r)) {
    if (o->status == Status::XFail) xfails.push_back(o);
    if (is_skip(o->status)) skips.push_back(o);
    if (o->status == Status::Pass) passes.push_back(o);
  }
  const std::string more = "see the JUnit report";
  out += fmt::format("## Failures ({})\n\n", fails.size());
  if (!fails.empty()) {
    out +=
        "FAIL and XPASS: the case ran and its result is wrong, or an expected failure passed; ERROR, CRASH and "
        "TIMEOUT: it could not run to a result. Each repro command reruns the case as this run ran it.\n\n";
  }
  md_failures(out, r, fails, top, more);

  out += fmt::format("## Expected failures ({})\n\n", xfails.size());
  md_table(out, "| Case | Reason | Error |\n|---|---|---|\n", xfails, top, more, [](const Outcome& o) {
    return fmt::format("| {} | {} | {} |\n", markdown_code(o.key), markdown_text(first_line(o.reason)),
                       markdown_text(first_line(o.error)));
  });
  out += fmt::format("## Skipped and unsupported ({})\n\n", skips.size());
  md_table(out, "| Case | Status | Reason |\n|---|---|---|\n", skips, top, more, [](const Outcome& o) {
    return fmt::format("| {} | {} | {} |\n", markdown_code(o.key), status_name(o.status), markdown_text(why(o)));
  });
  out += fmt::format("## Passed ({})\n\n", passes.size());
  md_table(out, "| Case | Time |\n|---|--:|\n", passes, top, more, [](const Outcome& o) {
    return fmt::format("| {} | {} |\n", markdown_code(o.key), format_seconds(case_seconds(o)));
  });

  std::vector<const Outcome*> tails;
  for (const Outcome* o : fails) {
    if (stderr_tail_at(o->error) != std::string::npos) tails.push_back(o);
  }
  if (!tails.empty()) {
    out += fmt::format("## Stderr of crashed and timed-out cases ({})\n\n", tails.size());
    const std::size_t shown = std::min(tails.size(), static_cast<std::size_t>(std::max(top, 0)));
    for (std::size_t i = 0; i < shown; ++i) {
      out += fmt::format("{} ({}):\n\n{}\n", markdown_code(tails[i]->key), status_name(tails[i]->status),
                         code_block(stderr_tail(tails[i]->error)));
    }
    if (shown < tails.size()) out += fmt::format("... and {} more ({})\n\n", tails.size() - shown, more);
  }
  out += fmt::format("---\ngauntlet {} · json_schema_version 1\n",
                     r.gauntlet_version.empty() ? "(unknown version)" : markdown_text(r.gauntlet_version));
  return out;
}

std::string run_step_summary(const RunReport& r, int top) {
  std::string out =
      fmt::format("### {} ({}, {})\n\n", markdown_text(run_title(r)), markdown_text(r.backend), markdown_text(r.suite));
  out += md_verdict(r);
  md_status_counts(out, r);
  const std::vector<const Outcome*> fails = failing(r);
  if (!fails.empty()) {
    out += fmt::format("Failures ({}):\n\n", fails.size());
    md_failures(out, r, fails, top,
                r.db_path.empty() ? "see the JUnit report" : "all of them: " + markdown_code(show_command(r)));
  }
  return out;
}

}  // namespace gauntlet
