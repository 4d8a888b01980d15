// gauntlet report --weekly: a database's releases of the last 7 days, per backend and suite
// (docs/regressions.md#a-weekly-report). It reads only, gates nothing: exit 0, or 2 on bad input.
#include <fmt/format.h>

#include <map>

#include "cli.h"
#include "gauntlet/run/reporters.h"
#include "gauntlet/waivers.h"
#include "gauntlet/weekly.h"

namespace gauntlet::cli {

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

int report(const ReportCommandOptions& o) {
  if (!o.weekly) throw UsageError("report: pass --weekly (the only report so far)");
  const std::string today = today_utc();
  ::gauntlet::WeeklyOptions opt;
  opt.window = weekly_window(o.since, o.until, today);
  opt.backend = o.backend;
  opt.suite = o.suite;
  const WeeklyReport r = weekly_report(o.db, opt);
  if (!o.markdown.empty()) write_report_file(o.markdown, weekly_markdown(r, GAUNTLET_VERSION_STRING), "Markdown");
  if (!o.json.empty()) write_report_file(o.json, weekly_json(r, GAUNTLET_VERSION_STRING), "JSON");

  if (r.groups.empty()) {
    fmt::print("report: {} to {}, {}: no runs in the window\n", r.window.since, r.window.until, o.db);
    return 0;
  }
  fmt::print("report: {} to {}, {}: {} runs in the window\n", r.window.since, r.window.until, o.db, r.runs_in_window);
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
    fmt::print(
        "  {} {}: {} release{} ({} .. {}), {} regression{} ({} accuracy, {} speed, {} coverage); "
        "{}\n",
        g.backend, g.suite, in_window, in_window == 1 ? "" : "s", release_title(first->run),
        release_title(g.releases.back().run), total, total == 1 ? "" : "s", by_gate[Gate::Accuracy],
        by_gate[Gate::Speed], by_gate[Gate::Coverage], change_points(g));
  }
  return 0;
}

}  // namespace gauntlet::cli
