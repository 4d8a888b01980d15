#include "gauntlet/dashboard.h"

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

#include "gauntlet/dates.h"
#include "gauntlet/reports.h"
#include "gauntlet/stats.h"
#include "gauntlet/store_reader.h"

namespace gauntlet {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kSchemaVersion = 1;

void raise(const std::string& message, int exit_code = kExitBadInput) { throw DashboardError(message, exit_code); }

// ---- What is read from the database

struct RunRow {
  RunRef ref;
  std::int64_t day = 0;  // days since the epoch of started_at
  bool dated = false;
};

// A release's results, one slot per case of the group (Note [Dashboard aggregates]).
constexpr std::uint8_t kAbsent = 0xff;
struct Column {
  std::vector<std::uint8_t> status;                      // Status, or kAbsent
  std::vector<bool> fell_back;                           // the case fell back to the CPU on some op
  std::vector<float> time, abs_err, rel_err, atol;       // NaN: none (errors: not compared)
  std::unordered_map<std::uint32_t, std::string> error;  // error texts, by case slot
  std::map<std::string, std::int64_t> fallback_cases;    // op -> cases where it fell back
  std::int64_t fallback_results = 0, graph_breaks = 0, recompiles = 0;
  std::int64_t breaks_measured = 0;  // results that record graph breaks (compile-path cases)
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> breaks_by_target;  // cases, breaks
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
    ResultScan scan;
    for (const auto& [run, col] : columns) {
      scan.runs.push_back(run);
      col->status.assign(cases.size(), kAbsent);
      col->fell_back.assign(cases.size(), false);
      col->time.assign(cases.size(), NAN);
      col->abs_err.assign(cases.size(), NAN);
      col->rel_err.assign(cases.size(), NAN);
      col->atol.assign(cases.size(), NAN);
    }
    scan.columns = {"status",       "median_us",    "sim_time_us", "max_abs_err", "max_rel_err",
                    "fallback_ops", "graph_breaks", "recompiles",  "error",       "atol"};
    std::int64_t last_run = -1;
    Column* col = nullptr;
    reader_.scan(scan, [&](ResultRow& q) {
      const std::int64_t run = q.run_id();
      if (run != last_run) {
        col = columns.at(run);
        last_run = run;
      }
      const std::uint32_t s = slot.find(q.case_id());
      if (s == SlotMap::kEmpty) raise(fmt::format("{}: a result of run {} has no case", path_, run));
      const Status status = q.status();
      col->status[s] = static_cast<std::uint8_t>(status);
      const double host = q.real(), sim = q.real();
      col->time[s] = static_cast<float>(sim_metric ? sim : host);
      // Errors only of a result whose outputs were compared: a CRASH stores 0, which is no error
      // measured (the case page shows "—", not 0).
      const bool compared =
          status == Status::Pass || status == Status::Fail || status == Status::XFail || status == Status::XPass;
      const double abs_err = q.real(), rel_err = q.real();
      col->abs_err[s] = compared ? static_cast<float>(abs_err) : NAN;
      col->rel_err[s] = compared ? static_cast<float>(rel_err) : NAN;
      const std::string_view ops = q.text();
      if (!ops.empty() && ops != "[]") {
        ++col->fallback_results;
        col->fell_back[s] = true;
        const json parsed_ops = json::parse(ops, nullptr, false);
        if (!parsed_ops.is_array()) raise(fmt::format("{}: fallback_ops of run {} is not a JSON array", path_, run));
        for (const json& op : parsed_ops) {
          if (op.is_string()) ++col->fallback_cases[op.get<std::string>()];
        }
      }
      const double breaks = q.real(), recompiles = q.real();
      col->breaks_measured += !std::isnan(breaks);
      if (!std::isnan(breaks) && breaks > 0) {
        col->graph_breaks += static_cast<std::int64_t>(breaks);
        auto& t = col->breaks_by_target[cases[s].target];
        ++t.first;
        t.second += static_cast<std::int64_t>(breaks);
      }
      if (!std::isnan(recompiles)) col->recompiles += static_cast<std::int64_t>(recompiles);
      if (const std::string_view error = q.text(); !error.empty()) col->error.emplace(s, std::string(error));
      const double atol = q.real();
      col->atol[s] = compared && atol >= 0 ? static_cast<float>(atol) : NAN;
    });
  }

  // Which time the group's series use: simulated time when its newest release has it for most
  // of the cases it timed (Note [Dashboard aggregates]).
  bool mostly_sim(std::int64_t run) {
    const std::vector<std::int64_t> n = reader_.counts_set(run, {"sim_time_us", "median_us"});
    const std::int64_t sim = n[0], host = n[1];
    return sim > 0 && sim * 2 >= host;
  }

 private:
  std::string path_;
  StoreReader reader_;
};

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

// The first line of an error text, at most 200 bytes (cut on a UTF-8 boundary).
std::string first_line(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  if (line.size() > 200) {
    std::size_t n = 200;
    while (n > 0 && (static_cast<unsigned char>(line[n]) & 0xc0) == 0x80) --n;
    line = line.substr(0, n);
  }
  return std::string(line);
}

// An error's first line with every number written as '#' (digits with their sign, point and
// exponent, and hexadecimal numbers): "max_abs_err 0.51 at [3, 7]" and "max_abs_err 0.49 at
// [0, 1]" are one cause (Note [Release pages]).
std::string blank_numbers(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto digit = [&](std::size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  auto word = [&](std::size_t i) {
    return i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_');
  };
  for (std::size_t i = 0; i < text.size();) {
    // Every run of digits, inside words too ("2x4x8", "f32"): shapes and dtypes that differ do
    // not make a different cause; a sign or point only where a number starts.
    const bool starts = digit(i) || ((text[i] == '-' || text[i] == '.') && digit(i + 1) && !(i > 0 && word(i - 1)));
    if (!starts) {
      out += text[i++];
      continue;
    }
    if (text[i] == '-') ++i;
    if (text.substr(i, 2) == "0x" || text.substr(i, 2) == "0X") {
      i += 2;
      while (i < text.size() && std::isxdigit(static_cast<unsigned char>(text[i]))) ++i;
    } else {
      while (digit(i) || (i < text.size() && text[i] == '.' && digit(i + 1))) ++i;
      if (i < text.size() && (text[i] == 'e' || text[i] == 'E') &&
          (digit(i + 1) || ((text[i + 1] == '-' || text[i + 1] == '+') && digit(i + 2)))) {
        i += 2;
        while (digit(i)) ++i;
      }
    }
    out += '#';
  }
  return out;
}

double ratio_or_nan(float a, float b) {
  return std::isfinite(a) && std::isfinite(b) && a > 0 && b > 0 ? double(b) / double(a) : NAN;
}

// ---- A group: one backend and suite

struct Release {
  RunRef run;
  std::int64_t day = 0;
  bool dated = false;
};

struct Group {
  std::string id, backend, suite;
  std::vector<Release> releases;  // oldest first
};

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

class Writer {
 public:
  Writer(fs::path data, DashboardSummary& summary) : data_(std::move(data)), summary_(summary) {}

  void write(const std::string& name, const std::string& json_text) {
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

 private:
  fs::path data_;
  DashboardSummary& summary_;
};

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
class GroupExport {
 public:
  GroupExport(Db& db, const std::string& db_path, Group& g, const DashboardOptions& o, Writer& w,
              DashboardSummary& summary)
      : db_(db), db_path_(db_path), g_(g), o_(o), w_(w), summary_(summary) {}

  json run() {
    load();
    const std::size_t nr = g_.releases.size();
    series();
    judge();
    json releases = json::array();
    for (std::size_t r = 0; r < nr; ++r) releases.push_back(release_json(r));
    write_release_pages();
    write_breakdown();
    write_coverage();
    const std::int64_t files = write_cases();
    write_grid();
    json overview = {{"id", g_.id},
                     {"backend", g_.backend},
                     {"suite", g_.suite},
                     {"metric", sim_ ? "sim" : "host"},
                     {"releases", releases},
                     {"weeks", weeks_json()},
                     {"latest", nr >= 2 ? json{{"release", g_.releases[nr - 1].run.release},
                                               {"baseline", g_.releases[nr - 2].run.release}}
                                        : json(nullptr)},
                     {"facets", facets_json()},
                     {"cases", cases_.size()},
                     {"case_files", files}};
    summary_.releases += static_cast<std::int64_t>(nr);
    summary_.cases += static_cast<std::int64_t>(cases_.size());
    return overview;
  }

 private:
  // The group's results as columns over the cases it ran (sorted by key), Note [Dashboard aggregates].
  void load() {
    std::vector<CaseRow> all = db_.cases();
    SlotMap slot(all.size());
    for (std::uint32_t i = 0; i < all.size(); ++i) slot.insert(all[i].id, i);
    sim_ = db_.mostly_sim(g_.releases.back().run.id);
    cols_.resize(g_.releases.size());
    std::map<std::int64_t, Column*> by_run;
    for (std::size_t r = 0; r < g_.releases.size(); ++r) by_run[g_.releases[r].run.id] = &cols_[r];
    db_.fill(by_run, slot, all, sim_);

    // Keep the cases some release ran.
    std::vector<std::uint32_t> kept;
    for (std::uint32_t i = 0; i < all.size(); ++i) {
      for (const Column& c : cols_) {
        if (c.status[i] != kAbsent) {
          kept.push_back(i);
          break;
        }
      }
    }
    std::vector<std::uint32_t> to_kept(all.size(), SlotMap::kEmpty);
    for (std::uint32_t k = 0; k < kept.size(); ++k) to_kept[kept[k]] = k;
    for (Column& c : cols_) {
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
      for (std::uint8_t st : c.status) summary_.results += st != kAbsent;
    }
    cases_.reserve(kept.size());
    for (std::uint32_t i : kept) cases_.push_back(std::move(all[i]));
    family_.resize(cases_.size());
    for (std::size_t i = 0; i < cases_.size(); ++i) {
      const std::string f = o_.family ? o_.family(cases_[i].kind, cases_[i].target) : "";
      family_[i] = f.empty() ? cases_[i].kind : f;
    }
  }

  void series() {
    const std::size_t nr = g_.releases.size();
    counts_.assign(nr, std::vector<std::int64_t>(std::size(kAllStatuses), 0));
    results_.assign(nr, 0);
    speed_.assign(nr, stats::Interval{});
    compared_.assign(nr, 0);
    index_.assign(nr, 1.0);
    for (std::size_t r = 0; r < nr; ++r) {
      for (std::uint8_t s : cols_[r].status) {
        if (s == kAbsent) continue;
        ++counts_[r][s];
        ++results_[r];
      }
      if (r == 0) continue;
      std::vector<double> ratios;
      for (std::size_t c = 0; c < cases_.size(); ++c) {
        const double q = ratio_or_nan(cols_[r - 1].time[c], cols_[r].time[c]);
        if (std::isfinite(q)) ratios.push_back(q);
      }
      compared_[r] = static_cast<std::int64_t>(ratios.size());
      // 200 resamples: an interval per release for the chart, not a verdict (compare's is).
      if (!ratios.empty()) speed_[r] = stats::bootstrap_geomean(ratios, 200);
      const double step = speed_[r].estimate;
      index_[r] = index_[r - 1] * (compared_[r] > 0 && std::isfinite(step) && step > 0 ? step : 1.0);
    }
    // Note [Change points on every series]: E-Divisive on each series the overview draws, the
    // same way, and only on series of at least kMinChangePointSeries points (fewer cannot tell a
    // step from noise); a series with a gap (graph breaks not measured in some release) gets none.
    cps_.assign(nr, {});
    if (nr >= kMinChangePointSeries) {
      std::vector<double> logs, pass, fallback, breaks;
      bool breaks_everywhere = true;
      for (std::size_t r = 0; r < nr; ++r) {
        logs.push_back(std::log(index_[r]));
        pass.push_back(pass_rate_ran(r));
        fallback.push_back(fallback_rate(r));
        breaks.push_back(double(cols_[r].graph_breaks));
        breaks_everywhere = breaks_everywhere && cols_[r].breaks_measured > 0;
      }
      auto mark = [&](const std::vector<double>& series, bool ChangePoints::*flag) {
        for (const stats::ChangePoint& cp : stats::e_divisive(series)) cps_[cp.index].*flag = true;
      };
      mark(logs, &ChangePoints::speed);
      mark(pass, &ChangePoints::pass);
      mark(fallback, &ChangePoints::fallback);
      if (breaks_everywhere) mark(breaks, &ChangePoints::breaks);
    }
  }

  struct ChangePoints {
    bool speed = false, pass = false, fallback = false, breaks = false;
    ChangePoints& operator|=(const ChangePoints& o) {
      speed |= o.speed;
      pass |= o.pass;
      fallback |= o.fallback;
      breaks |= o.breaks;
      return *this;
    }
    json to_json() const { return {{"speed", speed}, {"pass", pass}, {"fallback", fallback}, {"breaks", breaks}}; }
  };
  static constexpr std::size_t kMinChangePointSeries = 4;

  // Results that ran to a verdict on the op: PASS, FAIL, ERROR, CRASH, TIMEOUT, XPASS (not
  // UNSUPPORTED, SKIP or XFAIL).
  static bool ran_to_a_verdict(Status s) {
    return s == Status::Pass || s == Status::Fail || s == Status::Error || s == Status::Crash || s == Status::Timeout ||
           s == Status::XPass;
  }
  std::int64_t ran(std::size_t r) const {
    std::int64_t n = 0;
    for (Status s : kAllStatuses) n += ran_to_a_verdict(s) ? counts_[r][static_cast<std::size_t>(s)] : 0;
    return n;
  }
  // 0 when nothing ran, for the change-point series; pass_rate_ran_json is null then.
  double pass_rate_ran(std::size_t r) const {
    const std::int64_t n = ran(r);
    return n ? double(counts_[r][static_cast<std::size_t>(Status::Pass)]) / double(n) : 0;
  }
  json pass_rate_ran_json(std::size_t r) const { return ran(r) ? json(pass_rate_ran(r)) : json(nullptr); }
  double ran_share(std::size_t r) const { return results_[r] ? double(ran(r)) / double(results_[r]) : 0; }
  // Graph breaks and recompiles: null where no result of the release records them (an eager-only
  // suite), not 0.
  json breaks_json(std::size_t r) const {
    return cols_[r].breaks_measured ? json(cols_[r].graph_breaks) : json(nullptr);
  }
  json recompiles_json(std::size_t r) const {
    return cols_[r].breaks_measured ? json(cols_[r].recompiles) : json(nullptr);
  }

  double pass_rate(std::size_t r) const {
    return results_[r] ? double(counts_[r][static_cast<std::size_t>(Status::Pass)]) / double(results_[r]) : 0;
  }
  double fallback_rate(std::size_t r) const {
    return results_[r] ? double(cols_[r].fallback_results) / double(results_[r]) : 0;
  }

  // compare_runs on the newest pairs, a thread per core: each opens the database on its own.
  // The newest `compare_pairs` releases, and every release at a change point of any series, so
  // that a change point always leads to its culprits (Note [Release pages]).
  void judge() {
    const std::size_t nr = g_.releases.size();
    judged_.assign(nr, std::nullopt);
    // The latest pair always: it is the latest release's page.
    const std::size_t pairs =
        std::min<std::size_t>(std::max<std::size_t>(static_cast<std::size_t>(o_.compare_pairs), 1), nr ? nr - 1 : 0);
    std::vector<std::size_t> todo;
    for (std::size_t r = 1; r < nr; ++r) {
      const ChangePoints& cp = cps_[r];
      if (r >= nr - pairs || cp.speed || cp.pass || cp.fallback || cp.breaks) todo.push_back(r);
    }
    std::vector<std::optional<RunComparison>> done(nr);
    std::vector<std::string> errors(nr);
    std::vector<int> error_codes(nr, kExitBadInput);
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t k; (k = next++) < todo.size();) {
        const std::size_t r = todo[k];
        try {
          done[r] = compare_runs(db_path_, g_.releases[r].run.id, g_.releases[r - 1].run.id, o_.compare);
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
      judged_[r] = counts;
    }
    judged_pairs_ = std::move(done);
  }

  static json gates_json(const std::map<Gate, std::int64_t>& n) {
    json j = json::object();
    for (const auto& [gate, count] : n) j[std::string(gate_name(gate))] = count;
    return j;
  }

  json release_json(std::size_t r) const {
    const Release& rel = g_.releases[r];
    return {{"release", rel.run.release},
            {"run_id", rel.run.id},
            {"started_at", rel.run.started_at},
            {"week", rel.dated ? json(dates::iso_week(rel.day).name) : json(nullptr)},
            {"backend_version", rel.run.backend_version},
            {"cases", results_[r]},
            {"counts", counts_json(counts_[r])},
            {"pass_rate", pass_rate(r)},
            {"pass_rate_ran", pass_rate_ran_json(r)},
            {"ran_share", ran_share(r)},
            {"fallback_rate", fallback_rate(r)},
            {"graph_breaks", breaks_json(r)},
            {"recompiles", recompiles_json(r)},
            {"speed", r == 0 ? json(nullptr) : interval_json(speed_[r], compared_[r])},
            {"speed_index", index_[r]},
            {"change_point", cps_[r].to_json()},
            {"regressions", judged_[r] ? gates_json(*judged_[r]) : json(nullptr)}};
  }

  // A week's figures are its last release's; releases without a date belong to no week. A change
  // point of a release marks its week, when the weekly series is long enough for one
  // (kMinChangePointSeries weeks).
  json weeks_json() const {
    json weeks = json::array();
    std::vector<ChangePoints> week_cps;
    std::string current;
    for (std::size_t r = 0; r < g_.releases.size(); ++r) {
      const Release& rel = g_.releases[r];
      if (!rel.dated) continue;
      const dates::IsoWeek w = dates::iso_week(rel.day);
      json point = {{"week", w.name},
                    {"start", dates::civil_from_days(w.start)},
                    {"release", rel.run.release},
                    {"releases", 1},
                    {"pass_rate", pass_rate(r)},
                    {"pass_rate_ran", pass_rate_ran_json(r)},
                    {"ran_share", ran_share(r)},
                    {"fallback_rate", fallback_rate(r)},
                    {"graph_breaks", breaks_json(r)},
                    {"speed_index", index_[r]}};
      if (w.name == current) {
        point["releases"] = weeks.back()["releases"].get<int>() + 1;
        weeks.back() = std::move(point);
        week_cps.back() |= cps_[r];
      } else {
        weeks.push_back(std::move(point));
        week_cps.push_back(cps_[r]);
        current = w.name;
      }
    }
    for (std::size_t k = 0; k < weeks.size(); ++k)
      weeks[k]["change_point"] = (weeks.size() >= kMinChangePointSeries ? week_cps[k] : ChangePoints{}).to_json();
    return weeks;
  }

  json facets_json() const {
    std::set<std::string> family, dtype, mode, status;
    const Column& latest = cols_.back();
    for (std::size_t c = 0; c < cases_.size(); ++c) {
      if (latest.status[c] == kAbsent) continue;
      family.insert(family_[c]);
      dtype.insert(cases_[c].dtype);
      mode.insert(cases_[c].mode);
      status.insert(std::string(status_name(static_cast<Status>(latest.status[c]))));
    }
    return {{"family", family}, {"dtype", dtype}, {"mode", mode}, {"status", status}};
  }

  std::string name(const std::string& file) const { return g_.id + "/" + file; }

  // Note [Release pages]: every judged release has a page, data/<g>/releases/<r>.js (r: its index
  // in the overview's releases), holding what changed against the release before it: compare's
  // regressions, its fixes, the cases failing in both, and the failures grouped by cause (op,
  // status and the error's first line with its numbers blanked: one row, a count and one repro
  // for sixteen cases that fail the same way). latest.js is the newest page, under its old name.
  // The judged releases are the newest --compare-pairs and every change point's; the others have
  // no page, the overview's `regressions` is null for them and the site says so.
  void write_release_pages() {
    for (std::size_t r = 1; r < judged_pairs_.size(); ++r) {
      if (!judged_pairs_[r]) continue;
      const std::string text = dump(release_page(r, *judged_pairs_[r]));
      w_.write(name(fmt::format("releases/{}", r)), text);
      if (r + 1 == judged_pairs_.size()) w_.write(name("latest"), text);
      judged_pairs_[r].reset();  // the findings of 50 pairs need not stay in memory together
    }
  }

  json release_page(std::size_t r, const RunComparison& c) const {
    std::unordered_map<std::string_view, std::uint32_t> by_key;
    for (std::uint32_t i = 0; i < cases_.size(); ++i) by_key.emplace(cases_[i].key, i);
    json regressions = json::array(), missing = json::array();
    std::map<Gate, std::int64_t> counts;
    for (Gate gate : kAllGates) counts[gate] = 0;
    std::int64_t total = 0, missing_total = 0;
    std::map<std::string, std::int64_t> new_fallbacks;
    for (const Finding& f : c.findings) {
      if (!is_regression(f.change)) continue;
      ++counts[change_gate(f.change)];
      ++total;
      if (f.change == Change::Missing) {
        if (missing_total++ < o_.max_regressions) missing.push_back(f.key);
      }
      if (f.change == Change::NewFallback) {
        // compare's detail names the ops the baseline did not fall back on (regress.cpp).
        constexpr std::string_view kPrefix = "falls back to the CPU: ";
        std::string_view ops(f.detail);
        if (ops.substr(0, kPrefix.size()) == kPrefix) {
          ops.remove_prefix(kPrefix.size());
          while (!ops.empty()) {
            const std::size_t comma = ops.find(", ");
            ++new_fallbacks[std::string(ops.substr(0, comma))];
            ops.remove_prefix(comma == std::string_view::npos ? ops.size() : comma + 2);
          }
        }
      }
      if (static_cast<int>(regressions.size()) >= o_.max_regressions) continue;
      json row = {{"key", f.key},
                  {"gate", gate_name(change_gate(f.change))},
                  {"change", change_name(f.change)},
                  {"detail", f.detail},
                  {"ratio", f.ratio > 0 ? number(f.ratio) : json(nullptr)},
                  {"baseline", number(f.baseline)},
                  {"candidate", number(f.candidate)},
                  {"repro", repro_command(c, f)}};
      add_case_facets(row, f.key, by_key, r);
      regressions.push_back(std::move(row));
    }
    json fallbacks = json::array();
    std::vector<std::pair<std::string, std::int64_t>> sorted(new_fallbacks.begin(), new_fallbacks.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [op, n] : sorted) fallbacks.push_back({{"op", op}, {"cases", n}});
    // Note [Throughput and cost] in regress.h: compare's figures, per unit.
    json throughput = json::array();
    for (const ThroughputSummary& t : c.throughput) {
      throughput.push_back({{"unit", t.unit},
                            {"baseline_per_s", number(t.baseline)},
                            {"candidate_per_s", number(t.candidate)},
                            {"ratio", interval_json(t.ratio, t.cases)},
                            {"baseline_cost_per_million", number(t.baseline_cost)},
                            {"candidate_cost_per_million", number(t.candidate_cost)},
                            {"cost_ratio", interval_json(t.cost_ratio, t.cases)}});
    }
    // Fixed cases, and the failures by cause: the new ones (compare's status regressions) and the
    // ones failing in both releases (compare's known failures).
    json fixes = json::array();
    std::int64_t fixes_total = 0;
    std::map<std::tuple<std::string, std::string, std::string>, Cause> causes;
    auto add_cause = [&](const std::string& key, bool fresh) {
      const auto it = by_key.find(key);
      if (it == by_key.end()) return;
      const std::uint32_t i = it->second;
      const std::uint8_t s = cols_[r].status[i];
      if (s == kAbsent || !is_failure(static_cast<Status>(s))) return;
      const auto e = cols_[r].error.find(i);
      const std::string message = e == cols_[r].error.end() ? "" : first_line(e->second);
      Cause& cause =
          causes[{cases_[i].target, std::string(status_name(static_cast<Status>(s))), blank_numbers(message)}];
      if (cause.count++ == 0) {
        cause.first = i;
        cause.message = message;
      }
      (fresh ? cause.fresh : cause.still)++;
      if (cause.keys.size() < kKeysPerCause) cause.keys.push_back(i);
    };
    for (const Finding& f : c.findings) {
      if (f.change == Change::StatusChange || f.change == Change::XPass || f.change == Change::New)
        add_cause(f.key, true);  // add_cause keeps only the failing
      if (f.change != Change::Fixed) continue;
      if (fixes_total++ >= o_.max_regressions) continue;
      json row = {{"key", f.key}, {"detail", f.detail}};
      add_case_facets(row, f.key, by_key, r);
      fixes.push_back(std::move(row));
    }
    for (const KnownFailure& k : c.known_failures) add_cause(k.key, false);
    std::vector<const std::pair<const std::tuple<std::string, std::string, std::string>, Cause>*> order;
    for (const auto& entry : causes) order.push_back(&entry);
    std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
      return std::tie(a->second.fresh, a->second.count) > std::tie(b->second.fresh, b->second.count);
    });
    json groups = json::array();
    std::int64_t still_total = 0;
    for (const auto* entry : order) {
      const auto& [op, status, pattern] = entry->first;
      const Cause& cause = entry->second;
      still_total += cause.still;
      if (static_cast<int>(groups.size()) >= o_.max_regressions) continue;
      json keys = json::array();
      for (std::uint32_t i : cause.keys) keys.push_back(cases_[i].key);
      groups.push_back({{"op", op},
                        {"status", status},
                        {"message", cause.message},
                        {"pattern", pattern},
                        {"count", cause.count},
                        {"new", cause.fresh},
                        {"still", cause.still},
                        {"keys", keys},
                        {"repro", repro_command(cases_[cause.first].key, c.db_path, c.candidate.id, g_.backend)},
                        {"case_file", cause.first / static_cast<std::uint32_t>(o_.per_file)}});
    }
    json j = {{"schema_version", kSchemaVersion},
              {"group", g_.id},
              {"index", r},
              {"baseline", {{"release", c.baseline.release}, {"run_id", c.baseline.id}}},
              {"candidate", {{"release", c.candidate.release}, {"run_id", c.candidate.id}}},
              {"geomean", interval_json(c.speed.geomean, c.speed.compared)},
              {"throughput", throughput},
              {"counts", gates_json(counts)},
              {"regressions", regressions},
              {"regressions_total", total},
              {"missing", missing},
              {"missing_total", missing_total},
              {"new_fallbacks", fallbacks},
              {"fixes", fixes},
              {"fixes_total", fixes_total},
              {"still_failing_total", still_total},
              {"causes", groups},
              {"causes_total", causes.size()}};
    return j;
  }

  // A group of failures with one cause (Note [Release pages]).
  struct Cause {
    std::int64_t count = 0, fresh = 0, still = 0;
    std::uint32_t first = 0;          // the first case's slot: its repro and message stand for all
    std::string message;              // the first case's error, first line
    std::vector<std::uint32_t> keys;  // the first kKeysPerCause cases
  };
  static constexpr std::size_t kKeysPerCause = 20;

  // family, dtype, mode, status (in release r) and case file of a key, or nulls for a key that
  // is not a case of the group.
  void add_case_facets(json& row, const std::string& key,
                       const std::unordered_map<std::string_view, std::uint32_t>& by_key, std::size_t r) const {
    const auto it = by_key.find(key);
    if (it == by_key.end()) {
      row["family"] = row["dtype"] = row["mode"] = row["status"] = row["case_file"] = nullptr;
      return;
    }
    const std::uint32_t i = it->second;
    const std::uint8_t s = cols_[r].status[i];
    row["family"] = family_[i];
    row["dtype"] = cases_[i].dtype;
    row["mode"] = cases_[i].mode;
    row["status"] = s == kAbsent ? json(nullptr) : json(status_name(static_cast<Status>(s)));
    row["case_file"] = i / static_cast<std::uint32_t>(o_.per_file);
  }

  // Pass rate, fallback rate and speed index per release of the cases sharing a facet value.
  json breakdown_of(const std::function<const std::string&(std::size_t)>& facet) const {
    const std::size_t nr = g_.releases.size();
    struct Acc {
      std::vector<std::int64_t> cases, pass, fallback, ran;
      std::vector<double> log_sum;
      std::vector<std::int64_t> timed;
    };
    std::map<std::string, Acc> acc;
    for (std::size_t c = 0; c < cases_.size(); ++c) {
      Acc& a = acc[facet(c)];
      if (a.cases.empty()) {
        a.cases.assign(nr, 0);
        a.pass.assign(nr, 0);
        a.fallback.assign(nr, 0);
        a.ran.assign(nr, 0);
        a.log_sum.assign(nr, 0);
        a.timed.assign(nr, 0);
      }
      for (std::size_t r = 0; r < nr; ++r) {
        const std::uint8_t s = cols_[r].status[c];
        if (s == kAbsent) continue;
        ++a.cases[r];
        a.pass[r] += s == static_cast<std::uint8_t>(Status::Pass);
        a.ran[r] += ran_to_a_verdict(static_cast<Status>(s));
        a.fallback[r] += cols_[r].fell_back[c];
        if (r > 0) {
          const double q = ratio_or_nan(cols_[r - 1].time[c], cols_[r].time[c]);
          if (std::isfinite(q)) {
            a.log_sum[r] += std::log(q);
            ++a.timed[r];
          }
        }
      }
    }
    json out = json::object();
    for (const auto& [value, a] : acc) {
      json list = json::array();
      double index = 1;
      for (std::size_t r = 0; r < nr; ++r) {
        if (a.timed[r] > 0) index *= std::exp(a.log_sum[r] / double(a.timed[r]));
        if (a.cases[r] == 0) {
          list.push_back(nullptr);
          continue;
        }
        list.push_back({{"cases", a.cases[r]},
                        {"pass_rate", double(a.pass[r]) / double(a.cases[r])},
                        {"pass_rate_ran", a.ran[r] ? json(double(a.pass[r]) / double(a.ran[r])) : json(nullptr)},
                        {"ran_share", double(a.ran[r]) / double(a.cases[r])},
                        {"fallback_rate", double(a.fallback[r]) / double(a.cases[r])},
                        {"speed_index", index}});
      }
      out[value] = std::move(list);
    }
    return out;
  }

  json release_names() const {
    json names = json::array();
    for (const Release& r : g_.releases) names.push_back(r.run.release);
    return names;
  }

  void write_breakdown() {
    json by = {{"family", breakdown_of([&](std::size_t c) -> const std::string& { return family_[c]; })},
               {"dtype", breakdown_of([&](std::size_t c) -> const std::string& { return cases_[c].dtype; })},
               {"mode", breakdown_of([&](std::size_t c) -> const std::string& { return cases_[c].mode; })}};
    w_.write(name("breakdown"),
             dump({{"schema_version", kSchemaVersion}, {"group", g_.id}, {"releases", release_names()}, {"by", by}}));
  }

  void write_coverage() {
    const std::size_t nr = g_.releases.size();
    std::map<std::string, std::vector<std::int64_t>> ops;
    std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> targets;
    for (std::size_t r = 0; r < nr; ++r) {
      for (const auto& [op, n] : cols_[r].fallback_cases) {
        auto& v = ops[op];
        v.resize(nr, 0);
        v[r] = n;
      }
      for (const auto& [target, cb] : cols_[r].breaks_by_target) {
        auto& [cases, breaks] = targets[target];
        cases.resize(nr, 0);
        breaks.resize(nr, 0);
        cases[r] = cb.first;
        breaks[r] = cb.second;
      }
    }
    // Largest in the latest release first, then by name.
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> op_rows(ops.begin(), ops.end());
    std::stable_sort(op_rows.begin(), op_rows.end(),
                     [](const auto& a, const auto& b) { return a.second.back() > b.second.back(); });
    json fallback = json::array(), breaks = json::array();
    for (const auto& [op, v] : op_rows) fallback.push_back({{"op", op}, {"cases", v}});
    std::vector<std::string> target_names;
    for (const auto& [t, v] : targets) target_names.push_back(t);
    std::stable_sort(target_names.begin(), target_names.end(), [&](const std::string& a, const std::string& b) {
      return targets[a].first.back() > targets[b].first.back();
    });
    for (const std::string& t : target_names) {
      breaks.push_back({{"target", t}, {"cases", targets[t].first}, {"breaks", targets[t].second}});
    }
    w_.write(name("coverage"), dump({{"schema_version", kSchemaVersion},
                                     {"group", g_.id},
                                     {"releases", release_names()},
                                     {"fallback_ops", fallback},
                                     {"graph_breaks", breaks}}));
  }

  // The case index and the case files, written without building JSON trees: at 100,000 cases
  // and 50 releases they hold 5 million points.
  std::int64_t write_cases() {
    const std::size_t nr = g_.releases.size(), per = static_cast<std::size_t>(o_.per_file);
    std::map<std::string, int> family_ids;
    for (const std::string& f : family_) family_ids.emplace(f, 0);
    json families = json::array();
    int next = 0;
    for (auto& [f, id] : family_ids) {
      id = next++;
      families.push_back(f);
    }
    std::string index = fmt::format("{{\"schema_version\":{},\"group\":", kSchemaVersion);
    append_string(index, g_.id);
    index += fmt::format(",\"per_file\":{},\"keys\":[", per);
    for (std::size_t c = 0; c < cases_.size(); ++c) {
      if (c) index += ',';
      append_string(index, cases_[c].key);
    }
    index += "],\"family\":[";
    for (std::size_t c = 0; c < cases_.size(); ++c) {
      if (c) index += ',';
      index += std::to_string(family_ids[family_[c]]);
    }
    index += "],\"families\":" + dump(families) + ",\"status\":[";
    for (std::size_t c = 0; c < cases_.size(); ++c) {
      if (c) index += ',';
      const std::uint8_t s = cols_.back().status[c];
      index += '"';
      if (s != kAbsent) index += status_name(static_cast<Status>(s));
      index += '"';
    }
    index += "]}";
    w_.write(name("cases/index"), index);

    const std::string releases = dump(release_names());
    std::int64_t files = 0;
    for (std::size_t first = 0; first < cases_.size(); first += per, ++files) {
      std::string out = fmt::format("{{\"schema_version\":{},\"group\":", kSchemaVersion);
      append_string(out, g_.id);
      out += fmt::format(",\"file\":{},\"first\":{},\"releases\":{},\"cases\":[", files, first, releases);
      for (std::size_t c = first; c < std::min(first + per, cases_.size()); ++c) {
        if (c != first) out += ',';
        out += "{\"key\":";
        append_string(out, cases_[c].key);
        const auto list = [&](const char* field, auto&& value) {
          out += ",\"";
          out += field;
          out += "\":[";
          for (std::size_t r = 0; r < nr; ++r) {
            if (r) out += ',';
            if (cols_[r].status[c] == kAbsent) {
              out += "null";
            } else {
              value(r);
            }
          }
          out += ']';
        };
        list("status", [&](std::size_t r) {
          out += '"';
          out += status_name(static_cast<Status>(cols_[r].status[c]));
          out += '"';
        });
        list("time_us", [&](std::size_t r) { append_number(out, cols_[r].time[c]); });
        list("max_abs_err", [&](std::size_t r) { append_number(out, cols_[r].abs_err[c]); });
        list("max_rel_err", [&](std::size_t r) { append_number(out, cols_[r].rel_err[c]); });
        list("atol", [&](std::size_t r) { append_number(out, cols_[r].atol[c]); });
        list("error", [&](std::size_t r) {
          const auto it = cols_[r].error.find(static_cast<std::uint32_t>(c));
          if (it == cols_[r].error.end()) {
            out += "null";
          } else {
            append_string(out, it->second);
          }
        });
        out += '}';
      }
      out += "]}";
      w_.write(name(fmt::format("cases/{}", files)), out);
    }
    return files;
  }

  // Note [Status grid]: data/<g>/grid.js holds the status of every case in the newest
  // `grid_releases` releases: one string per release with a character per case slot (the slots of
  // cases/index.js, whose keys and families it shares), and each case's dtype and mode as indices
  // into lists of names. 50 releases of 100,000 cases are 5 MB the browser parses as 50 strings,
  // not as 5 million JSON values; the page draws only the rows in view (dashboards/site/app.js,
  // viewGrid).
  static char status_code(Status s) {
    switch (s) {
      case Status::Pass:
        return 'P';
      case Status::Fail:
        return 'F';
      case Status::Error:
        return 'E';
      case Status::Crash:
        return 'C';
      case Status::Timeout:
        return 'T';
      case Status::Unsupported:
        return 'U';
      case Status::Skip:
        return 'S';
      case Status::XFail:
        return 'x';
      case Status::XPass:
        return 'X';
    }
    return '?';
  }
  static constexpr char kAbsentCode = '-';

  void write_grid() {
    const std::size_t nr = g_.releases.size();
    const std::size_t shown = std::min<std::size_t>(nr, static_cast<std::size_t>(o_.grid_releases));
    const std::size_t first = nr - shown;
    std::string out = fmt::format("{{\"schema_version\":{},\"group\":", kSchemaVersion);
    append_string(out, g_.id);
    out += fmt::format(",\"first\":{},\"releases\":", first);
    json names = json::array();
    for (std::size_t r = first; r < nr; ++r) names.push_back(g_.releases[r].run.release);
    out += dump(names);
    json codes = json::object();
    for (Status s : kAllStatuses) codes[std::string(1, status_code(s))] = status_name(s);
    out += ",\"codes\":" + dump(codes) + ",\"absent\":\"" + kAbsentCode + '"';
    // dtype and mode: names sorted, then an index per case.
    const auto facet = [&](const char* list, const char* field, auto&& value) {
      std::map<std::string_view, int> ids;
      for (const CaseRow& c : cases_) ids.emplace(value(c), 0);
      json all = json::array();
      int next = 0;
      for (auto& [v, id] : ids) {
        id = next++;
        all.push_back(v);
      }
      out += fmt::format(",\"{}\":{},\"{}\":[", list, dump(all), field);
      for (std::size_t c = 0; c < cases_.size(); ++c) {
        if (c) out += ',';
        out += std::to_string(ids[value(cases_[c])]);
      }
      out += ']';
    };
    facet("dtypes", "dtype", [](const CaseRow& c) -> std::string_view { return c.dtype; });
    facet("modes", "mode", [](const CaseRow& c) -> std::string_view { return c.mode; });
    out += ",\"status\":[";
    for (std::size_t r = first; r < nr; ++r) {
      if (r != first) out += ',';
      out += '"';
      for (std::uint8_t s : cols_[r].status) out += s == kAbsent ? kAbsentCode : status_code(static_cast<Status>(s));
      out += '"';
    }
    out += "]}";
    w_.write(name("grid"), out);
  }

  Db& db_;
  const std::string& db_path_;
  Group& g_;
  const DashboardOptions& o_;
  Writer& w_;
  DashboardSummary& summary_;

  std::vector<CaseRow> cases_;       // the cases some release ran, sorted by key: the case slots
  std::vector<std::string> family_;  // per slot
  bool sim_ = false;
  std::vector<Column> cols_;  // per release
  std::vector<std::vector<std::int64_t>> counts_;
  std::vector<std::int64_t> results_, compared_;
  std::vector<stats::Interval> speed_;
  std::vector<double> index_;
  std::vector<ChangePoints> cps_;  // per release
  std::vector<std::optional<std::map<Gate, std::int64_t>>> judged_;
  std::vector<std::optional<RunComparison>> judged_pairs_;  // per release: against the one before
};

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
  // history.
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
    GroupExport e(db, db_path, g, options, writer, summary);
    overview_groups.push_back(e.run());
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
  s.option("--out", o.out, "directory of the site (created; its data/ is replaced)").required();
  s.option("--since", o.since, "only runs started on this day or later, YYYY-MM-DD");
  s.option("--backend", o.backend, "only runs of this backend (runs.backend)");
  s.option("--suite", o.suite, "only runs of this suite");
  s.option("--metric", o.metric, "regressions judged on: auto | sim | host (as compare)").show_default();
  s.option("--compare-pairs", o.compare_pairs, "newest release pairs judged by compare (regression counts)")
      .show_default();
  s.option("--grid-releases", o.grid_releases, "newest releases in the status grid (cases x releases)").show_default();
}

}  // namespace gauntlet
