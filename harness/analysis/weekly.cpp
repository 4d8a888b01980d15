#include "gauntlet/analysis/weekly.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "gauntlet/analysis/dates.h"
#include "gauntlet/analysis/reports.h"
#include "gauntlet/analysis/stats.h"
#include "gauntlet/base/text.h"
#include "gauntlet/store/store_reader.h"

namespace gauntlet {

namespace {

using dates::civil_from_days;
using dates::parse_date;

void raise(const std::string& message, int exit_code = kExitBadInput) { throw WeeklyError(message, exit_code); }

std::int64_t date_or_raise(const std::string& what, const std::string& s) {
  const auto days = parse_date(s);
  if (!days) raise(fmt::format("{}: '{}' is not a date (YYYY-MM-DD)", what, s));
  return *days;
}

// ---- The database

// A run with what the report shows of it.
struct RunRow {
  RunRef ref;
  std::string day;  // the date of started_at, "" when it has none
};

class WeeklyDb {
 public:
  explicit WeeklyDb(const std::string& path) : reader_(path, raise) {}

  std::vector<RunRow> runs() {
    std::vector<RunRow> out;
    for (RunRef& ref : reader_.runs()) {
      RunRow r;
      r.ref = std::move(ref);
      // ISO 8601 UTC ("2026-11-29T23:44:35Z"): the date is its first ten characters.
      const std::string day = r.ref.started_at.substr(0, 10);
      if (parse_date(day)) r.day = day;
      out.push_back(std::move(r));
    }
    return out;
  }

  // Counts by status and results with fallbacks, in one pass over the run's results.
  void fill(WeeklyRelease& rel) {
    for (const auto& [status, tally] : reader_.status_tally(rel.run.id)) {
      rel.counts[status] += tally.results;
      rel.cases += tally.results;
      rel.fallback_cases += tally.with_fallbacks;
    }
    if (rel.cases > 0) {
      const auto pass = rel.counts.find(Status::Pass);
      rel.pass_rate = pass == rel.counts.end() ? 0 : double(pass->second) / double(rel.cases);
      rel.fallback_rate = double(rel.fallback_cases) / double(rel.cases);
    }
  }

 private:
  StoreReader reader_;
};

// Note [Weekly window]: a run belongs to the window when the date of its start (UTC) is within
// [since, until], both days inclusive. Within a backend and suite, each release is its latest run
// in the window, and releases are ordered by that run's id, as compare orders them (ids grow in
// the order runs were stored). The first baseline is the release just before the window: the
// latest run of the group that started before `since`, of a release the window does not have.
// Runs without a start date cannot be placed and are left out.
std::vector<WeeklyGroup> select_groups(const std::vector<RunRow>& runs, const WeeklyOptions& o,
                                       std::int64_t& in_window) {
  std::map<std::pair<std::string, std::string>, std::vector<const RunRow*>> by_group;
  for (const RunRow& r : runs) {
    if (!o.backend.empty() && r.ref.backend != o.backend) continue;
    if (!o.suite.empty() && r.ref.suite != o.suite) continue;
    by_group[{r.ref.backend, r.ref.suite}].push_back(&r);
  }
  std::vector<WeeklyGroup> groups;
  for (const auto& [name, group_runs] : by_group) {
    std::map<std::string, const RunRow*> latest;  // release -> its latest run in the window
    const RunRow* before = nullptr;
    for (const RunRow* r : group_runs) {
      if (r->day.empty() || r->day > o.window.until) continue;
      if (r->day >= o.window.since) {
        ++in_window;
        latest[r->ref.release] = r;  // runs come in id order
      }
    }
    if (latest.empty()) continue;
    for (const RunRow* r : group_runs) {
      if (!r->day.empty() && r->day < o.window.since && !latest.count(r->ref.release)) before = r;
    }
    std::vector<const RunRow*> ordered;
    for (const auto& [release, r] : latest) ordered.push_back(r);
    std::sort(ordered.begin(), ordered.end(), [](const RunRow* a, const RunRow* b) { return a->ref.id < b->ref.id; });
    WeeklyGroup g;
    g.backend = name.first;
    g.suite = name.second;
    if (before) {
      WeeklyRelease rel;
      rel.run = before->ref;
      rel.before_window = true;
      g.releases.push_back(std::move(rel));
    }
    for (const RunRow* r : ordered) {
      WeeklyRelease rel;
      rel.run = r->ref;
      g.releases.push_back(std::move(rel));
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

WeeklyPair compare_pair(const std::string& db_path, const RunRef& baseline, const RunRef& candidate,
                        const WeeklyOptions& o) {
  RunComparison c;
  try {
    c = compare_runs(db_path, candidate.id, baseline.id, o.compare);
  } catch (const CompareError& e) {
    throw WeeklyError(e.what(), e.exit_code());
  }
  WeeklyPair p;
  p.baseline = baseline;
  p.candidate = candidate;
  for (Gate g : kAllGates) p.regressions[g] = 0;
  p.geomean = c.speed.geomean;
  p.compared = c.speed.compared;
  for (const Finding& f : c.findings) {  // compare's order: by gate and change, the worst first
    if (!is_regression(f.change)) continue;
    ++p.regressions[change_gate(f.change)];
    if (static_cast<int>(p.top.size()) < o.top) {
      p.top.push_back({f.key, f.change, f.detail, f.ratio, repro_command(c, f)});
    } else {
      ++p.more;
    }
  }
  return p;
}

// Note [Weekly series]: the speed index chains the pairs' geomeans (compare's, over the cases
// both releases timed), the group's first release = 1; a pair without a case timed by both
// leaves the index where it was. E-Divisive looks for change points on the index's logarithm
// and, separately, on the pass rate, over every release shown (the one before the window
// included), when there are at least 4: with fewer it finds nothing (Note [E-Divisive]).
void series(WeeklyGroup& g) {
  double index = 1;
  for (std::size_t i = 0; i < g.releases.size(); ++i) {
    if (i > 0) {
      const double step = g.pairs[i - 1].geomean.estimate;
      if (g.pairs[i - 1].compared > 0 && std::isfinite(step) && step > 0) index *= step;
    }
    g.releases[i].speed_index = index;
  }
  g.change_points_searched = g.releases.size() >= 4;
  if (!g.change_points_searched) return;
  std::vector<double> logs, pass;
  for (const WeeklyRelease& r : g.releases) {
    logs.push_back(std::log(r.speed_index));
    pass.push_back(r.pass_rate);
  }
  for (const stats::ChangePoint& cp : stats::e_divisive(logs)) g.releases[cp.index].speed_change_point = true;
  for (const stats::ChangePoint& cp : stats::e_divisive(pass)) g.releases[cp.index].pass_change_point = true;
}

}  // namespace

Window weekly_window(const std::string& since, const std::string& until, const std::string& today) {
  const std::int64_t now = date_or_raise("today", today);
  const std::int64_t to = until.empty() ? now : date_or_raise("--until", until);
  const std::int64_t from = since.empty() ? to - 6 : date_or_raise("--since", since);
  if (from > to) raise(fmt::format("--since {} is after --until {}", civil_from_days(from), civil_from_days(to)));
  return {civil_from_days(from), civil_from_days(to)};
}

WeeklyReport weekly_report(const std::string& db_path, const WeeklyOptions& o) {
  if (!parse_date(o.window.since) || !parse_date(o.window.until) || o.window.since > o.window.until) {
    raise(fmt::format("bad window '{}' .. '{}'", o.window.since, o.window.until));
  }
  if (o.top < 0) raise("top must be >= 0");
  WeeklyReport r;
  r.window = o.window;
  r.db_path = db_path;
  WeeklyDb db(db_path);
  r.groups = select_groups(db.runs(), o, r.runs_in_window);
  for (WeeklyGroup& g : r.groups) {
    for (WeeklyRelease& rel : g.releases) db.fill(rel);
    for (std::size_t i = 1; i < g.releases.size(); ++i) {
      g.pairs.push_back(compare_pair(db_path, g.releases[i - 1].run, g.releases[i].run, o));
    }
    series(g);
  }
  return r;
}

// ---- Markdown

namespace {

std::string title(const RunRef& r) { return r.release.empty() ? fmt::format("run {}", r.id) : r.release; }
std::string percent(double x) { return std::isfinite(x) ? fmt::format("{:.2f}%", x * 100) : "n/a"; }
std::string plural(std::int64_t n, std::string_view noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }
std::int64_t total(const WeeklyPair& p) {
  std::int64_t n = 0;
  for (const auto& [gate, count] : p.regressions) n += count;
  return n;
}
std::string compare_command(const WeeklyReport& r, const WeeklyPair& p) {
  return fmt::format("gauntlet compare --db {} --run {} --baseline {}", shell_argument(r.db_path), p.candidate.id,
                     p.baseline.id);
}
std::string geomean_text(const WeeklyPair& p) {
  if (p.compared == 0 || !std::isfinite(p.geomean.estimate)) return "no case timed by both";
  std::string out = fmt::format("{:.3f}x", p.geomean.estimate);
  if (std::isfinite(p.geomean.lo) && std::isfinite(p.geomean.hi)) {
    out += fmt::format(" [{:.3f}, {:.3f}]", p.geomean.lo, p.geomean.hi);
  }
  return out + " over " + plural(p.compared, "case");
}
// "speed at r7, pass rate at r9" for the releases marked.
std::string marked(const WeeklyGroup& g, bool WeeklyRelease::*flag) {
  std::vector<std::string> at;
  for (const WeeklyRelease& r : g.releases) {
    if (r.*flag) at.push_back(markdown_text(title(r.run)));
  }
  if (at.empty()) return "none";
  std::string out = "at " + at[0];
  for (std::size_t i = 1; i < at.size(); ++i) out += ", " + at[i];
  return out;
}

void md_group(std::string& out, const WeeklyReport& r, const WeeklyGroup& g) {
  out += fmt::format("## {}, {}\n\n", markdown_code(g.backend), markdown_text(g.suite));
  out +=
      "| Release | Run | Started | Cases | Pass rate | Fallback rate | Speed index | Change point "
      "| "
      "Regressions a/s/c |\n"
      "|---|--:|---|--:|--:|--:|--:|---|--:|\n";
  for (std::size_t i = 0; i < g.releases.size(); ++i) {
    const WeeklyRelease& rel = g.releases[i];
    std::vector<std::string> marks;
    if (rel.speed_change_point) marks.emplace_back("speed");
    if (rel.pass_change_point) marks.emplace_back("pass rate");
    std::string mark;
    if (!marks.empty()) mark = "**" + (marks.size() == 1 ? marks[0] : marks[0] + ", " + marks[1]) + "**";
    std::string regressions;
    if (i > 0) {
      const WeeklyPair& p = g.pairs[i - 1];
      regressions = fmt::format("{}/{}/{}", p.regressions.at(Gate::Accuracy), p.regressions.at(Gate::Speed),
                                p.regressions.at(Gate::Coverage));
    }
    out +=
        fmt::format("| {}{} | {} | {} | {} | {} | {} | {:.3f} | {} | {} |\n", markdown_text(title(rel.run)),
                    rel.before_window ? " (before the window)" : "", rel.run.id, markdown_text(rel.run.started_at),
                    rel.cases, percent(rel.pass_rate), percent(rel.fallback_rate), rel.speed_index, mark, regressions);
  }
  out +=
      "\nPass rate: PASS / cases. Fallback rate: cases that ran an op on the CPU / cases. Speed "
      "index: the chained "
      "geomean of release-to-release speed ratios, the first release = 1. Regressions: "
      "accuracy/speed/coverage, "
      "against the release above (no waivers).\n\n";
  if (!g.change_points_searched) {
    out +=
        fmt::format("Change points: too few releases for change points ({} of the 4 needed).\n\n", g.releases.size());
  } else {
    out += fmt::format("Change points (E-Divisive): speed {}; pass rate {}.\n\n",
                       marked(g, &WeeklyRelease::speed_change_point), marked(g, &WeeklyRelease::pass_change_point));
  }

  // Statuses: a row per release, a column per status any release has.
  std::vector<Status> present;
  for (Status s : kAllStatuses) {
    for (const WeeklyRelease& rel : g.releases) {
      if (rel.counts.count(s)) {
        present.push_back(s);
        break;
      }
    }
  }
  if (!present.empty()) {
    out += "| Release |";
    for (Status s : present) out += fmt::format(" {} |", status_name(s));
    out += "\n|---|";
    for (std::size_t i = 0; i < present.size(); ++i) out += "--:|";
    out += "\n";
    for (const WeeklyRelease& rel : g.releases) {
      out += "| " + markdown_text(title(rel.run)) + " |";
      for (Status s : present) {
        const auto it = rel.counts.find(s);
        out += fmt::format(" {} |", it == rel.counts.end() ? 0 : it->second);
      }
      out += "\n";
    }
    out += "\n";
  }

  for (const WeeklyPair& p : g.pairs) {
    out += fmt::format("### {} vs {} (run {} vs run {})\n\n", markdown_text(title(p.candidate)),
                       markdown_text(title(p.baseline)), p.candidate.id, p.baseline.id);
    const std::int64_t n = total(p);
    if (n == 0) {
      out += "No regressions. ";
    } else {
      out += fmt::format("{}: {} accuracy, {} speed, {} coverage. ", plural(n, "regression"),
                         p.regressions.at(Gate::Accuracy), p.regressions.at(Gate::Speed),
                         p.regressions.at(Gate::Coverage));
    }
    out += fmt::format("Speed: {}. Compare: {}.\n\n", geomean_text(p), markdown_code(compare_command(r, p)));
    if (p.top.empty()) continue;
    out += "| Case | Change | Detail | Repro |\n|---|---|---|---|\n";
    for (const WeeklyFinding& f : p.top) {
      out += fmt::format("| {} | {} | {} | {} |\n", markdown_code(f.key), change_name(f.change),
                         markdown_text(f.detail), markdown_code(f.repro));
    }
    if (p.more > 0) out += fmt::format("\n... and {} more (see the compare command above)\n", p.more);
    out += "\n";
  }
}

}  // namespace

std::string weekly_markdown(const WeeklyReport& r, const std::string& gauntlet_version) {
  std::string out = fmt::format("# gauntlet weekly report: {} to {}\n\n", r.window.since, r.window.until);
  out += fmt::format("Database {}: {} in the window", markdown_code(r.db_path), plural(r.runs_in_window, "run"));
  if (r.groups.empty()) {
    out += ".\n\nNo runs in the window.\n\n";
  } else {
    out += fmt::format(
        ", {} (backend and suite). Each release is its latest run in the window, in the order runs "
        "were "
        "stored, and is compared with the release before it (the first with the release before the "
        "window) "
        "as `gauntlet compare --run RUN --baseline RUN` compares them.\n\n",
        plural(static_cast<std::int64_t>(r.groups.size()), "group"));
    for (const WeeklyGroup& g : r.groups) md_group(out, r, g);
  }
  out += fmt::format("---\ngauntlet {} · json_schema_version {}\n",
                     gauntlet_version.empty() ? "(unknown version)" : markdown_text(gauntlet_version),
                     r.json_schema_version);
  return out;
}

// ---- JSON

std::string weekly_json(const WeeklyReport& r, const std::string& gauntlet_version) {
  using Json = nlohmann::ordered_json;
  auto number = [](double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); };
  auto run = [](const RunRef& ref) {
    return Json{{"id", ref.id},
                {"release", ref.release},
                {"backend_version", ref.backend_version},
                {"started_at", ref.started_at}};
  };
  Json j;
  j["json_schema_version"] = r.json_schema_version;
  j["gauntlet_version"] = gauntlet_version;
  j["db"] = r.db_path;
  j["window"] = Json{{"since", r.window.since}, {"until", r.window.until}};
  j["runs_in_window"] = r.runs_in_window;
  Json groups = Json::array();
  for (const WeeklyGroup& g : r.groups) {
    Json releases = Json::array();
    for (const WeeklyRelease& rel : g.releases) {
      Json status = Json::object();
      for (const auto& [s, n] : rel.counts) status[std::string(status_name(s))] = n;
      Json one = run(rel.run);
      one["before_window"] = rel.before_window;
      one["cases"] = rel.cases;
      one["status"] = std::move(status);
      one["pass_rate"] = number(rel.pass_rate);
      one["fallback_cases"] = rel.fallback_cases;
      one["fallback_rate"] = number(rel.fallback_rate);
      one["speed_index"] = number(rel.speed_index);
      one["change_point"] = Json{{"speed", rel.speed_change_point}, {"pass_rate", rel.pass_change_point}};
      releases.push_back(std::move(one));
    }
    Json pairs = Json::array();
    for (const WeeklyPair& p : g.pairs) {
      Json regressions = Json::object();
      for (const auto& [gate, n] : p.regressions) regressions[std::string(gate_name(gate))] = n;
      Json top = Json::array();
      for (const WeeklyFinding& f : p.top) {
        top.push_back(Json{{"key", f.key},
                           {"change", change_name(f.change)},
                           {"gate", gate_name(change_gate(f.change))},
                           {"detail", f.detail},
                           {"ratio", std::isfinite(f.ratio) && f.ratio > 0 ? Json(f.ratio) : Json(nullptr)},
                           {"repro", f.repro}});
      }
      pairs.push_back(Json{{"baseline", run(p.baseline)},
                           {"candidate", run(p.candidate)},
                           {"regressions", std::move(regressions)},
                           {"speed", Json{{"compared", p.compared},
                                          {"geomean", Json{{"estimate", number(p.geomean.estimate)},
                                                           {"lo", number(p.geomean.lo)},
                                                           {"hi", number(p.geomean.hi)}}}}},
                           {"top", std::move(top)},
                           {"more", p.more},
                           {"compare", compare_command(r, p)}});
    }
    Json cps = Json{{"searched", g.change_points_searched}, {"speed", Json::array()}, {"pass_rate", Json::array()}};
    for (const WeeklyRelease& rel : g.releases) {
      const Json at{{"release", rel.run.release}, {"run", rel.run.id}};
      if (rel.speed_change_point) cps["speed"].push_back(at);
      if (rel.pass_change_point) cps["pass_rate"].push_back(at);
    }
    groups.push_back(Json{{"backend", g.backend},
                          {"suite", g.suite},
                          {"releases", std::move(releases)},
                          {"change_points", std::move(cps)},
                          {"pairs", std::move(pairs)}});
  }
  j["groups"] = std::move(groups);
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace gauntlet
