// `gauntlet report --weekly` (gauntlet/run/weekly_command.h).
#include "gauntlet/run/weekly_command.h"

#include <fmt/format.h>

#include <map>

#include "gauntlet/analysis/waivers.h"
#include "gauntlet/analysis/weekly.h"
#include "gauntlet/base/error.h"
#include "gauntlet/run/reporters.h"

namespace gauntlet {

namespace {

std::string release_title(const RunRef& r) { return r.release.empty() ? fmt::format("run {}", r.id) : r.release; }

// "speed at r7, pass rate none"
std::string change_points(const WeeklyGroup& g) {
  if (!g.change_points_searched) return "too few releases for change points";
  auto at = [&g](bool WeeklyRelease::*flag) {
    std::string out;
    for (const WeeklyRelease& r : g.releases) {
      if (r.*flag) out += (out.empty() ? "at " : ", ") + release_title(r.run);
    }
    return out.empty() ? std::string("none") : out;
  };
  return fmt::format("change points: speed {}, pass rate {}", at(&WeeklyRelease::speed_change_point),
                     at(&WeeklyRelease::pass_change_point));
}

}  // namespace

void describe_options(OptionSink& s, ReportRequest& o) {
  s.flag("--weekly", o.weekly,
         "the releases of a week per backend and suite: rates, speed index, regressions, change points")
      .required();
  s.option("--db", o.db, "SQLite database, opened read-only").required();
  s.option("--since", o.since, "first day, YYYY-MM-DD (default: 6 days before --until)");
  s.option("--until", o.until, "last day, YYYY-MM-DD (default: today, UTC, or $GAUNTLET_TODAY)");
  s.option("--backend", o.backend, "only runs of this backend (runs.backend: sim, plugin:<path.so>)");
  s.option("--suite", o.suite, "only runs of this suite");
  s.option("--markdown", o.markdown, "write the Markdown report here (- for stdout)");
  s.option("--json", o.json, "write the JSON report here (- for stdout)");
}

std::string weekly_command(const ReportRequest& o) {
  if (!o.weekly) throw Error("report: pass --weekly (the only report so far)");
  const std::string today = today_utc();
  WeeklyOptions opt;
  opt.window = weekly_window(o.since, o.until, today);
  opt.backend = o.backend;
  opt.suite = o.suite;
  const WeeklyReport r = weekly_report(o.db, opt);
  if (!o.markdown.empty()) write_report_file(o.markdown, weekly_markdown(r, GAUNTLET_VERSION_STRING), "Markdown");
  if (!o.json.empty()) write_report_file(o.json, weekly_json(r, GAUNTLET_VERSION_STRING), "JSON");

  if (r.groups.empty()) {
    return fmt::format("report: {} to {}, {}: no runs in the window\n", r.window.since, r.window.until, o.db);
  }
  std::string text = fmt::format("report: {} to {}, {}: {} runs in the window\n", r.window.since, r.window.until, o.db,
                                 r.runs_in_window);
  for (const WeeklyGroup& g : r.groups) {
    std::int64_t in_window = 0, total = 0;
    std::map<Gate, std::int64_t> by_gate;
    for (const WeeklyRelease& rel : g.releases) in_window += !rel.before_window;
    for (const WeeklyPair& p : g.pairs) {
      for (const auto& [gate, n] : p.regressions) {
        by_gate[gate] += n;
        total += n;
      }
    }
    const WeeklyRelease* first = nullptr;
    for (const WeeklyRelease& rel : g.releases) {
      if (!rel.before_window) {
        first = &rel;
        break;
      }
    }
    text += fmt::format(
        "  {} {}: {} release{} ({} .. {}), {} regression{} ({} accuracy, {} speed, {} coverage); "
        "{}\n",
        g.backend, g.suite, in_window, in_window == 1 ? "" : "s", release_title(first->run),
        release_title(g.releases.back().run), total, total == 1 ? "" : "s", by_gate[Gate::Accuracy],
        by_gate[Gate::Speed], by_gate[Gate::Coverage], change_points(g));
  }
  return text;
}

}  // namespace gauntlet
