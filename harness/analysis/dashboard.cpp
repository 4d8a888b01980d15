#include "gauntlet/analysis/dashboard.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "compile_reasons.h"
#include "dashboard_group.h"
#include "gauntlet/analysis/dates.h"
#include "gauntlet/analysis/reports.h"
#include "gauntlet/analysis/stats.h"
#include "gauntlet/analysis/triage.h"
#include "gauntlet/base/output_dir.h"
#include "gauntlet/base/stage.h"
#include "gauntlet/base/text.h"
#include "gauntlet/store/store_reader.h"

namespace gauntlet {

namespace fs = std::filesystem;
using nlohmann::json;

namespace dashboard_detail {

void raise(const std::string& message, int exit_code) { throw DashboardError(message, exit_code); }

// ---- JSON

// A number, or null for NaN and infinities.
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Text of a JSON string for the fast writer of the case files.
void append_string(std::string& out, std::string_view s) { out += dump(json(std::string(s))); }

void append_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
  } else {
    fmt::format_to(std::back_inserter(out), "{:.6g}", v);
  }
}

double ratio_or_nan(float a, float b) {
  return std::isfinite(a) && std::isfinite(b) && a > 0 && b > 0 ? double(b) / double(a) : NAN;
}

json interval_json(const stats::Interval& i, std::int64_t n) {
  if (n == 0 || !std::isfinite(i.estimate)) return nullptr;
  return {{"ratio", number(i.estimate)}, {"lo", number(i.lo)}, {"hi", number(i.hi)}, {"n", n}};
}

json counts_json(const std::vector<std::int64_t>& counts) {
  json j = json::object();
  for (std::size_t s = 0; s < counts.size(); ++s) {
    if (counts[s] > 0) j[std::string(status_name(static_cast<Status>(s)))] = counts[s];
  }
  return j;
}

json gates_json(const std::map<Gate, std::int64_t>& n) {
  json j = json::object();
  for (const auto& [gate, count] : n) j[std::string(gate_name(gate))] = count;
  return j;
}

void Writer::write(const std::string& name, const std::string& json_text) {
  const fs::path path = data_ / (name + ".js");
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) raise(fmt::format("{}: cannot create directory: {}", path.parent_path().string(), ec.message()));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const std::string script = dashboard_script(name, json_text);
  out << script;
  out.close();
  if (!out) raise(fmt::format("{}: cannot write", path.string()));
  ++summary_.files;
  summary_.bytes += static_cast<std::int64_t>(script.size());
}
// family, dtype, mode, status (in release r) and case file of a key, or nulls for a key that
// is not a case of the group.
void GroupData::add_case_facets(json& row, const std::string& key,
                                const std::unordered_map<std::string_view, std::uint32_t>& by_key,
                                std::size_t r) const {
  const auto it = by_key.find(key);
  if (it == by_key.end()) {
    row["family"] = row["dtype"] = row["mode"] = row["status"] = row["case_file"] = nullptr;
    return;
  }
  const std::uint32_t i = it->second;
  const std::uint8_t s = cols[r].status[i];
  row["family"] = family[i];
  row["dtype"] = cases[i].dtype;
  row["mode"] = cases[i].mode;
  row["status"] = s == kAbsent ? json(nullptr) : json(status_name(static_cast<Status>(s)));
  row["case_file"] = i / static_cast<std::uint32_t>(o.per_file);
}

}  // namespace dashboard_detail

namespace {

using namespace dashboard_detail;  // this file's own pieces

// ---- What is read from the database

struct RunRow {
  RunRef ref;
  std::int64_t day = 0;  // days since the epoch of started_at
  bool dated = false;
};

// Case id -> case slot, open addressing: ids are XXH64 values, so their low bits index the table
// directly. Five million lookups into std::unordered_map cost seconds in cache misses (perf).
class SlotMap {
 public:
  explicit SlotMap(std::size_t n) {
    std::size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    keys_.assign(cap, 0);
    values_.assign(cap, kEmpty);
    mask_ = cap - 1;
  }
  void insert(std::uint64_t id, std::uint32_t slot) {
    std::size_t i = static_cast<std::size_t>(id) & mask_;
    while (values_[i] != kEmpty && keys_[i] != id) i = (i + 1) & mask_;
    keys_[i] = id;
    values_[i] = slot;
  }
  // The slot of `id`, or kEmpty.
  std::uint32_t find(std::uint64_t id) const {
    for (std::size_t i = static_cast<std::size_t>(id) & mask_;; i = (i + 1) & mask_) {
      if (values_[i] == kEmpty || keys_[i] == id) return values_[i];
    }
  }
  static constexpr std::uint32_t kEmpty = 0xffffffffu;

 private:
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> values_;
  std::size_t mask_ = 0;
};

class Db {
 public:
  explicit Db(const std::string& path) : path_(path), reader_(path, raise) {}

  std::vector<RunRow> runs() {
    std::vector<RunRow> out;
    for (RunRef& ref : reader_.runs()) {
      RunRow r;
      r.ref = std::move(ref);
      if (const auto d = dates::parse_date(r.ref.started_at.substr(0, 10))) {
        r.day = *d;
        r.dated = true;
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  // Every case of the database, sorted by key.
  std::vector<CaseRow> cases() {
    std::vector<CaseRow> out = reader_.cases();
    std::sort(out.begin(), out.end(), [](const CaseRow& a, const CaseRow& b) { return a.key < b.key; });
    return out;
  }

  // The results of the runs `columns` names (run id -> its column) into those columns, sized for
  // `cases` (whose positions `slot` gives), in one pass over the results table in storage order
  // (Note [One reader of results] in harness/store/store_reader.cpp).
  void fill(const std::map<std::int64_t, Column*>& columns, const SlotMap& slot, const std::vector<CaseRow>& cases,
            bool sim_metric) {
    FactScan scan;
    scan.errors = true;
    for (const auto& [run, col] : columns) {
      scan.runs.push_back(run);
      col->status.assign(cases.size(), kAbsent);
      col->fell_back.assign(cases.size(), false);
      col->time.assign(cases.size(), NAN);
      col->abs_err.assign(cases.size(), NAN);
      col->rel_err.assign(cases.size(), NAN);
      col->atol.assign(cases.size(), NAN);
    }
    std::int64_t last_run = -1;
    Column* col = nullptr;
    reader_.scan_facts(scan, [&](const ResultFacts& q) {
      const std::int64_t run = q.run_id;
      if (run != last_run) {
        col = columns.at(run);
        last_run = run;
      }
      const std::uint32_t s = slot.find(q.case_id);
      if (s == SlotMap::kEmpty) raise(fmt::format("{}: a result of run {} has no case", path_, run));
      const Status status = q.status;
      col->status[s] = static_cast<std::uint8_t>(status);
      col->time[s] = static_cast<float>(sim_metric ? q.sim_time_us : q.median_us);
      // Errors only of a result whose outputs were compared: a CRASH stores 0, which is no error
      // measured (the case page shows "—", not 0).
      const bool compared =
          status == Status::Pass || status == Status::Fail || status == Status::XFail || status == Status::XPass;
      col->abs_err[s] = compared ? static_cast<float>(q.max_abs_err) : NAN;
      col->rel_err[s] = compared ? static_cast<float>(q.max_rel_err) : NAN;
      const std::string_view ops = q.fallback_ops;
      if (!ops.empty() && ops != "[]") {
        ++col->fallback_results;
        col->fell_back[s] = true;
        const json parsed_ops = json::parse(ops, nullptr, false);
        if (!parsed_ops.is_array()) raise(fmt::format("{}: fallback_ops of run {} is not a JSON array", path_, run));
        for (const json& op : parsed_ops) {
          if (op.is_string()) ++col->fallback_cases[op.get<std::string>()];
        }
      }
      const double breaks = q.graph_breaks, recompiles = q.recompiles;
      col->breaks_measured += !std::isnan(breaks);
      if (!std::isnan(breaks) && breaks > 0) col->graph_breaks += static_cast<std::int64_t>(breaks);
      if (!std::isnan(recompiles)) col->recompiles += static_cast<std::int64_t>(recompiles);
      if ((!std::isnan(breaks) && breaks > 0) || (!std::isnan(recompiles) && recompiles > 0)) {
        Column::TargetCompile& t = col->compile_by_target[cases[s].target];
        if (breaks > 0) {
          ++t.cases;
          t.breaks += static_cast<std::int64_t>(breaks);
        }
        if (recompiles > 0) t.recompiles += static_cast<std::int64_t>(recompiles);
        for (std::string_view r : graph_break_reasons(q.compile_reasons)) ++t.reasons[std::string(r)];
        for (std::string_view g : recompile_guards(q.compile_reasons)) ++t.guards[std::string(g)];
      }
      if (!q.error.empty()) {
        // An ERROR, CRASH or TIMEOUT names its stage (Note [Failing stage]), as reports do.
        const bool stopped = status == Status::Error || status == Status::Crash || status == Status::Timeout;
        std::string error(q.error);
        if (stopped && !q.stage.empty()) {
          const std::size_t nl = error.find('\n');
          error.insert(nl == std::string::npos ? error.size() : nl, " [stage: " + stage_text(q.stage) + "]");
        }
        col->error.emplace(s, std::move(error));
      }
      col->atol[s] = compared && q.atol >= 0 ? static_cast<float>(q.atol) : NAN;
    });
  }

  // Which time the group's series use: simulated time when its newest release has it for most
  // of the cases it timed (Note [Dashboard aggregates]).
  bool mostly_sim(std::int64_t run) {
    const StoreReader::TimedCounts n = reader_.timed_counts(run);
    return n.sim > 0 && n.sim * 2 >= n.host;
  }

 private:
  std::string path_;
  StoreReader reader_;
};

// ---- A group: one backend and suite

std::vector<Group> select_groups(const std::vector<RunRow>& runs, const DashboardOptions& o) {
  std::optional<std::int64_t> since;
  if (!o.since.empty()) {
    since = dates::parse_date(o.since);
    if (!since) raise(fmt::format("--since: '{}' is not a date (YYYY-MM-DD)", o.since));
  }
  // Each release is its latest run (as compare picks them), ordered by that run's id.
  std::map<std::pair<std::string, std::string>, std::map<std::string, const RunRow*>> latest;
  for (const RunRow& r : runs) {
    if (!o.backend.empty() && r.ref.backend != o.backend) continue;
    if (!o.suite.empty() && r.ref.suite != o.suite) continue;
    if (since && (!r.dated || r.day < *since)) continue;
    latest[{r.ref.backend, r.ref.suite}][r.ref.release] = &r;
  }
  // Filters that select nothing are a mistake to say so (a suite's name mistyped), not an empty
  // site to publish; a database without runs at all gives the empty site (a first CI job).
  if (latest.empty() && !runs.empty()) {
    std::set<std::string> suites, backends;
    for (const RunRow& r : runs) {
      suites.insert(r.ref.suite);
      backends.insert(r.ref.backend);
    }
    std::string what;
    if (!o.suite.empty()) what += fmt::format(" of suite '{}'", o.suite);
    if (!o.backend.empty()) what += fmt::format(" on backend '{}'", o.backend);
    if (since) what += fmt::format(" since {}", o.since);
    raise(fmt::format("no runs{} among the database's {} (suites: {}; backends: {})", what, runs.size(),
                      fmt::join(suites, ", "), fmt::join(backends, ", ")));
  }
  std::vector<Group> groups;
  for (const auto& [name, releases] : latest) {
    Group g;
    g.id = "g" + std::to_string(groups.size());
    g.backend = name.first;
    g.suite = name.second;
    for (const auto& [release, r] : releases) g.releases.push_back({r->ref, r->day, r->dated});
    std::sort(g.releases.begin(), g.releases.end(),
              [](const Release& a, const Release& b) { return a.run.id < b.run.id; });
    groups.push_back(std::move(g));
  }
  return groups;
}

// Note [Dashboard aggregates]: everything the overview shows is computed here in one pass over
// each release's results, held as columns (a status byte and three floats per case and release:
// 50 releases of 100,000 cases take about 65 MB):
// - pass rate = PASS / results; the pass rate of the cases that ran = PASS / (PASS, FAIL, ERROR,
//   CRASH, TIMEOUT, XPASS), beside the share of results that ran (UNSUPPORTED, SKIP and XFAIL
//   results did not run to a verdict); fallback rate = results with a fallback op / results;
//   graph breaks and recompiles are null for a release none of whose results records them;
// - the speed ratio of a release = the geometric mean of time ratios over the cases both it and
//   the release before it timed, with a bootstrap interval (the same estimator as compare's suite
//   geomean); the index chains the ratios, the first release = 1. The time is simulated time
//   when the group's newest release has it for most cases, else the host median, for every case
//   and release alike, so that a series never mixes the two;
// - change points: E-Divisive on the log of the index, the pass rate of the cases that ran, the
//   fallback rate and the graph breaks, as the weekly report finds them (Note [Change points on
//   every series]);
// - the regressions of a release are compare_runs' verdicts against the release before it, with
//   the history compare uses, for the newest `compare_pairs` pairs (older ones cost a comparison
//   each and show null): those are the numbers `gauntlet compare` gives, the gate's numbers.
// The group's results as columns over the cases it ran (sorted by key), Note [Dashboard aggregates].
void load(GroupData& d, Db& db, DashboardSummary& summary) {
  std::vector<CaseRow> all = db.cases();
  SlotMap slot(all.size());
  for (std::uint32_t i = 0; i < all.size(); ++i) slot.insert(all[i].id, i);
  d.sim = db.mostly_sim(d.g.releases.back().run.id);
  d.cols.resize(d.g.releases.size());
  std::map<std::int64_t, Column*> by_run;
  for (std::size_t r = 0; r < d.g.releases.size(); ++r) by_run[d.g.releases[r].run.id] = &d.cols[r];
  db.fill(by_run, slot, all, d.sim);

  // Keep the cases some release ran.
  std::vector<std::uint32_t> kept;
  for (std::uint32_t i = 0; i < all.size(); ++i) {
    for (const Column& c : d.cols) {
      if (c.status[i] != kAbsent) {
        kept.push_back(i);
        break;
      }
    }
  }
  std::vector<std::uint32_t> to_kept(all.size(), SlotMap::kEmpty);
  for (std::uint32_t k = 0; k < kept.size(); ++k) to_kept[kept[k]] = k;
  for (Column& c : d.cols) {
    Column packed;
    packed.status.reserve(kept.size());
    for (std::uint32_t i : kept) {
      packed.status.push_back(c.status[i]);
      packed.time.push_back(c.time[i]);
      packed.abs_err.push_back(c.abs_err[i]);
      packed.rel_err.push_back(c.rel_err[i]);
      packed.atol.push_back(c.atol[i]);
    }
    for (auto& [i, text] : c.error) packed.error.emplace(to_kept[i], std::move(text));
    c.status = std::move(packed.status);
    c.time = std::move(packed.time);
    c.abs_err = std::move(packed.abs_err);
    c.rel_err = std::move(packed.rel_err);
    c.atol = std::move(packed.atol);
    c.error = std::move(packed.error);
    for (std::uint8_t st : c.status) summary.results += st != kAbsent;
  }
  d.cases.reserve(kept.size());
  for (std::uint32_t i : kept) d.cases.push_back(std::move(all[i]));
  d.family.resize(d.cases.size());
  for (std::size_t i = 0; i < d.cases.size(); ++i) {
    const std::string f = d.o.family ? d.o.family(d.cases[i].kind, d.cases[i].target) : "";
    d.family[i] = f.empty() ? d.cases[i].kind : f;
  }
}

void series(GroupData& d) {
  const std::size_t nr = d.g.releases.size();
  d.counts.assign(nr, std::vector<std::int64_t>(std::size(kAllStatuses), 0));
  d.results.assign(nr, 0);
  d.speed.assign(nr, stats::Interval{});
  d.compared.assign(nr, 0);
  d.index.assign(nr, 1.0);
  for (std::size_t r = 0; r < nr; ++r) {
    for (std::uint8_t s : d.cols[r].status) {
      if (s == kAbsent) continue;
      ++d.counts[r][s];
      ++d.results[r];
    }
    if (r == 0) continue;
    std::vector<double> ratios;
    for (std::size_t c = 0; c < d.cases.size(); ++c) {
      const double q = ratio_or_nan(d.cols[r - 1].time[c], d.cols[r].time[c]);
      if (std::isfinite(q)) ratios.push_back(q);
    }
    d.compared[r] = static_cast<std::int64_t>(ratios.size());
    // 200 resamples: an interval per release for the chart, not a verdict (compare's is).
    if (!ratios.empty()) d.speed[r] = stats::bootstrap_geomean(ratios, 200);
    const double step = d.speed[r].estimate;
    d.index[r] = d.index[r - 1] * (d.compared[r] > 0 && std::isfinite(step) && step > 0 ? step : 1.0);
  }
  // Note [Change points on every series]: E-Divisive on each series the overview draws, the
  // same way, and only on series of at least kMinChangePointSeries points (fewer cannot tell a
  // step from noise); a series with a gap (graph breaks not measured in some release) gets none.
  d.cps.assign(nr, {});
  if (nr >= kMinChangePointSeries) {
    std::vector<double> logs, pass, fallback, breaks;
    bool breaks_everywhere = true;
    for (std::size_t r = 0; r < nr; ++r) {
      logs.push_back(std::log(d.index[r]));
      pass.push_back(d.pass_rate_ran(r));
      fallback.push_back(d.fallback_rate(r));
      breaks.push_back(double(d.cols[r].graph_breaks));
      breaks_everywhere = breaks_everywhere && d.cols[r].breaks_measured > 0;
    }
    auto mark = [&](const std::vector<double>& series, bool ChangePoints::*flag) {
      for (const stats::ChangePoint& cp : stats::e_divisive(series)) d.cps[cp.index].*flag = true;
    };
    mark(logs, &ChangePoints::speed);
    mark(pass, &ChangePoints::pass);
    mark(fallback, &ChangePoints::fallback);
    if (breaks_everywhere) mark(breaks, &ChangePoints::breaks);
  }
}

// compare_runs on the newest pairs, a thread per core: each opens the database on its own.
// The newest `compare_pairs` releases, and every release at a change point of any series, so
// that a change point always leads to its culprits (Note [Release pages]).
void judge(GroupData& d, const std::string& db_path) {
  const std::size_t nr = d.g.releases.size();
  d.judged.assign(nr, std::nullopt);
  // The latest pair always: it is the latest release's page.
  const std::size_t pairs =
      std::min<std::size_t>(std::max<std::size_t>(static_cast<std::size_t>(d.o.compare_pairs), 1), nr ? nr - 1 : 0);
  std::vector<std::size_t> todo;
  for (std::size_t r = 1; r < nr; ++r) {
    const ChangePoints& cp = d.cps[r];
    if (r >= nr - pairs || cp.speed || cp.pass || cp.fallback || cp.breaks) todo.push_back(r);
  }
  std::vector<std::optional<RunComparison>> done(nr);
  // Note [Triage] in triage.cpp: acknowledged regressions are shown apart (never honoured here:
  // the counts are of every regression).
  const std::vector<Ack> acks = read_acks(db_path, raise);
  std::vector<RunRef> runs;
  for (const Release& rel : d.g.releases) runs.push_back(rel.run);
  std::vector<std::string> errors(nr);
  std::vector<int> error_codes(nr, kExitBadInput);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t k; (k = next++) < todo.size();) {
      const std::size_t r = todo[k];
      try {
        done[r] = compare_runs(db_path, d.g.releases[r].run.id, d.g.releases[r - 1].run.id, d.o.compare);
        apply_acks(*done[r], acks, runs, false);
      } catch (const CompareError& e) {
        errors[r] = e.what();
        error_codes[r] = e.exit_code();
      }
    }
  };
  std::vector<std::thread> threads;
  const std::size_t n = std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), todo.size());
  for (std::size_t t = 0; t < n; ++t) threads.emplace_back(work);
  for (std::thread& t : threads) t.join();
  for (std::size_t r : todo) {
    if (!errors[r].empty()) raise(errors[r], error_codes[r]);
    std::map<Gate, std::int64_t> counts;
    for (Gate gate : kAllGates) counts[gate] = 0;
    for (const Finding& f : done[r]->findings) {
      if (is_regression(f.change)) ++counts[change_gate(f.change)];
    }
    d.judged[r] = counts;
  }
  if (nr >= 2 && done[nr - 1]) d.latest_groups = groups_json(*done[nr - 1], 5);
  d.judged_pairs = std::move(done);
}

// A group's files, and its entry of the overview.
json export_group(Db& db, const std::string& db_path, const Group& g, const DashboardOptions& o, Writer& w,
                  DashboardSummary& summary) {
  GroupData d(g, o);
  load(d, db, summary);
  series(d);
  judge(d, db_path);
  write_release_pages(d, w);
  write_breakdown(d, w);
  write_coverage(d, w);
  const std::int64_t files = write_cases(d, w);
  write_grid(d, w);
  summary.releases += static_cast<std::int64_t>(g.releases.size());
  summary.cases += static_cast<std::int64_t>(d.cases.size());
  return group_overview(d, files);
}

}  // namespace

std::string dashboard_script(std::string_view name, std::string_view json_text) {
  std::string out = "gauntletData(";
  append_string(out, name);
  out += ", ";
  out.reserve(out.size() + json_text.size() + 8);
  for (std::size_t i = 0; i < json_text.size(); ++i) {
    const char ch = json_text[i];
    if (ch == '<') {
      out += "\\u003c";
    } else if (ch == '>') {
      out += "\\u003e";
    } else if (ch == '&') {
      out += "\\u0026";
    } else if (ch == '\xe2' && i + 2 < json_text.size() && json_text[i + 1] == '\x80' &&
               (json_text[i + 2] == '\xa8' || json_text[i + 2] == '\xa9')) {
      out += json_text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += ch;
    }
  }
  out += ");\n";
  return out;
}

DashboardSummary write_dashboard_data(const std::string& db_path, const std::string& out_dir,
                                      const DashboardOptions& options) {
  if (options.per_file < 1) raise("per_file must be at least 1");
  if (options.compare_pairs < 0) raise("--compare-pairs must not be negative");
  if (options.grid_releases < 1) raise("--grid-releases must be at least 1");
  Db db(db_path);
  const std::vector<RunRow> runs = db.runs();
  std::vector<Group> groups = select_groups(runs, options);

  // Earlier data is replaced as a whole: a stale case file of another export would show wrong
  // history. Only in a folder the dashboard wrote (Note [Output folders]).
  try {
    claim_output_dir(out_dir, "dashboard", {"index.html", "data/overview.js"});
  } catch (const Error& e) {
    raise(e.what());
  }
  const fs::path data = fs::path(out_dir) / "data";
  std::error_code ec;
  fs::remove_all(data, ec);
  if (ec) raise(fmt::format("{}: cannot remove earlier data: {}", data.string(), ec.message()));
  fs::create_directories(data, ec);
  if (ec) raise(fmt::format("{}: cannot create directory: {}", data.string(), ec.message()));

  DashboardSummary summary;
  Writer writer(data, summary);
  json overview_groups = json::array();
  for (Group& g : groups) {
    overview_groups.push_back(export_group(db, db_path, g, options, writer, summary));
    ++summary.groups;
  }
  json overview = {{"schema_version", kSchemaVersion},
                   {"generated_at", options.generated_at},
                   {"gauntlet_version", options.gauntlet_version},
                   {"db", fs::path(db_path).filename().string()},
                   {"db_path", db_path},
                   {"since", options.since.empty() ? json(nullptr) : json(options.since)},
                   {"groups", overview_groups}};
  writer.write("overview", dump(overview));
  return summary;
}

void describe_options(OptionSink& s, DashboardRequest& o) {
  s.option("--db", o.db, "SQLite database, opened read-only").required();
  s.option("--out", o.out, "directory of the site (created; its data/ is replaced; a folder of other files is refused)")
      .required();
  s.option("--since", o.since, "only runs started on this day or later, YYYY-MM-DD");
  s.option("--backend", o.backend, "only runs of this backend (runs.backend)");
  s.option("--suite", o.suite, "only runs of this suite");
  s.option("--metric", o.metric, "regressions judged on: auto | sim | host (as compare)").show_default();
  s.option("--compare-pairs", o.compare_pairs, "newest release pairs judged by compare (regression counts)")
      .show_default();
  s.option("--grid-releases", o.grid_releases, "newest releases in the status grid (cases x releases)").show_default();
}

}  // namespace gauntlet
