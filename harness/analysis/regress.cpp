#include "gauntlet/analysis/regress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <future>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "gauntlet/base/samples.h"
#include "gauntlet/store/store_reader.h"

namespace gauntlet {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void raise(const std::string& message, int exit_code = kExitBadInput) { throw CompareError(message, exit_code); }

// Note [How a case compares]: one result per case per run, read a column at a time into this
// compact record (the error text and the key are read later, only for findings), then the two
// runs are merge-joined on case id.
struct Row {
  std::uint64_t case_id = 0;
  double max_abs_err = 0, atol = 0;
  double first_us = kNaN, median_us = kNaN, sim_time_us = kNaN, compile_ms = kNaN;
  std::int64_t peak_mem = 0;
  std::int64_t work_items = 0;                      // 0: not recorded (Note [Throughput and cost])
  std::int32_t graph_breaks = -1, recompiles = -1;  // -1: not recorded
  Status status = Status::Pass;
  std::string_view fallback_ops = "[]";  // JSON text, "[]" for none; in the run's TextArena
  std::string_view samples;              // gauntlet/base/samples.h; in the run's TextArena
};

// The texts a run's rows point into, in chunks that never move (Note [Reading a million
// results]): one allocation per megabyte instead of one per row.
class TextArena {
 public:
  std::string_view add(std::string_view s) {
    if (s.empty()) return {};
    if (chunks_.empty() || used_ + s.size() > size_) {
      size_ = std::max<std::size_t>(kChunk, s.size());
      chunks_.push_back(std::make_unique<char[]>(size_));
      used_ = 0;
    }
    char* at = chunks_.back().get() + used_;
    std::memcpy(at, s.data(), s.size());
    used_ += s.size();
    return {at, s.size()};
  }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << 20;
  std::vector<std::unique_ptr<char[]>> chunks_;
  std::size_t used_ = 0, size_ = 0;
};

// One run's results, sorted by case id (unsigned).
struct RunRows {
  std::vector<Row> rows;
  TextArena texts;
};

// How bad a status is, for "did it get worse": a case that cannot run at all is worse than one
// that runs and is wrong. An expected failure counts as a failure here: a case a non-strict
// expectation covers goes PASS -> XFAIL when it breaks, and that is a regression to report.
int badness(Status s) {
  switch (s) {
    case Status::Pass:
    case Status::Skip:
    case Status::XPass:  // judged on its own (Change::XPass)
      return 0;
    case Status::XFail:
    case Status::Unsupported:
      return 1;
    case Status::Fail:
      return 2;
    case Status::Error:
      return 3;
    case Status::Timeout:
      return 4;
    case Status::Crash:
      return 5;
  }
  return 0;
}
// Statuses whose timings mean something: the case ran to the end.
bool timed(Status s) { return s == Status::Pass || s == Status::Fail || s == Status::XFail || s == Status::XPass; }

std::set<std::string> ops_of(std::string_view json_text) {
  std::set<std::string> out;
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_array()) {
    for (const auto& op : j) {
      if (op.is_string()) out.insert(op.get<std::string>());
    }
  }
  return out;
}

std::string us_text(double us) {
  if (us >= 1e6) return fmt::format("{:.3g} s", us / 1e6);
  if (us >= 1e3) return fmt::format("{:.3g} ms", us / 1e3);
  return fmt::format("{:.3g} µs", us);
}
std::string percent(double ratio) { return fmt::format("{:+.1f}%", (ratio - 1) * 100); }

}  // namespace

// ---- The database

class CompareDb {
 public:
  // The same one-line errors as the store's (docs/database.md): compare only reads.
  explicit CompareDb(const std::string& path) : reader_(path, raise) {}

  std::vector<RunRef> runs() { return reader_.runs(); }

  // Note [Reading a million results]: compare reads two whole runs (and the history's); two runs
  // of 1,000,000 results took 7.5 s and 1,208 MiB end to end, now 1.5 s and 410 MiB
  // (ci/compare_bench.sh; run by the binary without libtorch, Note [Two binaries] in
  // harness/cli_front/front.cpp), with the same findings and reports:
  //  - a run's results are read in the order they lie in the table, through SQLite's page cache
  //    (Note [One reader of results] in harness/store/store_reader.cpp), then sorted by case id,
  //    unsigned, for the merge join;
  //  - the two runs are read side by side, each on a connection of its own;
  //  - the facts a detector needs (Note [Result facts]), the samples with them;
  //  - a row is a fixed record (120 bytes); its texts (fallback ops when not "[]", the samples)
  //    go to the run's TextArena, and a host-timed case's samples are unpacked only when it is
  //    judged, into one reused buffer.
  RunRows rows(std::int64_t run) {
    RunRows out;
    FactScan scan;
    scan.runs = {run};
    scan.samples = true;
    scan.on_size = [&](std::int64_t n) { out.rows.reserve(static_cast<std::size_t>(n)); };
    reader_.scan_facts(scan, [&](const ResultFacts& q) {
      Row& r = out.rows.emplace_back();
      r.case_id = q.case_id;
      r.status = q.status;
      r.max_abs_err = q.max_abs_err;
      r.atol = q.atol;
      r.first_us = q.first_us;
      r.median_us = q.median_us;
      r.sim_time_us = q.sim_time_us;
      r.compile_ms = q.compile_ms;
      r.peak_mem = q.peak_mem_bytes;
      r.graph_breaks = std::isnan(q.graph_breaks) ? -1 : static_cast<std::int32_t>(q.graph_breaks);
      r.recompiles = std::isnan(q.recompiles) ? -1 : static_cast<std::int32_t>(q.recompiles);
      if (q.fallback_ops != "[]") r.fallback_ops = out.texts.add(q.fallback_ops);
      r.samples = out.texts.add(q.samples);
      if (q.work_items > 0) r.work_items = static_cast<std::int64_t>(q.work_items);
    });
    std::sort(out.rows.begin(), out.rows.end(), [](const Row& a, const Row& b) { return a.case_id < b.case_id; });
    return out;
  }

  // The model cases' ids: their work items are samples (Note [Throughput and cost]).
  std::unordered_set<std::uint64_t> model_cases() {
    const std::vector<std::uint64_t> ids = reader_.case_ids("model");
    return {ids.begin(), ids.end()};
  }

  // The keys and the error texts (in `run`) of the cases compare reports, by case id.
  std::unordered_map<std::uint64_t, std::string> keys(std::vector<std::uint64_t> ids) {
    return reader_.keys(std::move(ids));
  }
  std::unordered_map<std::uint64_t, std::string> errors(std::int64_t run, std::vector<std::uint64_t> ids) {
    return reader_.errors(run, std::move(ids));
  }

 private:
  StoreReader reader_;
};

// ---- Choosing the runs

namespace {

RunRef find_run(const std::vector<RunRef>& runs, std::int64_t id, const std::string& path) {
  for (const RunRef& r : runs) {
    if (r.id == id) return r;
  }
  raise(fmt::format("{}: no run {}", path, id));
  return {};
}

// Note [Automatic baseline]: the latest run before the candidate of the same backend and suite
// whose release differs: "the previous release". Runs of the candidate's own release (re-runs,
// shards) are never its baseline.
std::optional<RunRef> previous_release(const std::vector<RunRef>& runs, const RunRef& candidate) {
  std::optional<RunRef> best;
  for (const RunRef& r : runs) {
    if (r.id >= candidate.id || r.backend != candidate.backend || r.suite != candidate.suite ||
        r.release == candidate.release) {
      continue;
    }
    best = r;  // ids grow with time
  }
  return best;
}

// The releases before the baseline, oldest first: the latest run of each, same backend and suite.
std::vector<RunRef> history_runs(const std::vector<RunRef>& runs, const RunRef& baseline, int n) {
  std::vector<RunRef> out;
  std::set<std::string> seen = {baseline.release};
  for (auto it = runs.rbegin(); it != runs.rend() && static_cast<int>(out.size()) < n; ++it) {
    if (it->id >= baseline.id || it->backend != baseline.backend || it->suite != baseline.suite) continue;
    if (!seen.insert(it->release).second) continue;
    out.push_back(*it);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// Note [Speed metric]: a case's time is its simulated time (sim_time_us) under --metric sim, and
// under auto when both runs have one for it; otherwise the host median (median_us). A case is
// judged on one metric in both runs, never a simulated time against a host time, and a time that
// is not positive is no time. docs/regressions.md "The metric".
struct Timed {
  double value = kNaN;
  bool sim = false;
};
Timed time_of(const Row& r, Metric m, bool other_has_sim) {
  if (!timed(r.status)) return {};
  const bool sim = m == Metric::Sim || (m == Metric::Auto && !std::isnan(r.sim_time_us) && other_has_sim);
  if (sim) return {r.sim_time_us > 0 ? r.sim_time_us : kNaN, true};
  return {r.median_us > 0 ? r.median_us : kNaN, false};
}

}  // namespace

// ---- The suite's speed across releases

namespace {

// Calls fn(a, b) with the times of every case both runs timed (merge join on case id), each on
// the metric `m` picks for it.
template <class Fn>
void for_each_timed_pair(const std::vector<Row>& from, const std::vector<Row>& to, Metric m, Fn&& fn) {
  std::size_t i = 0, j = 0;
  while (i < from.size() && j < to.size()) {
    if (from[i].case_id < to[j].case_id) {
      ++i;
    } else if (to[j].case_id < from[i].case_id) {
      ++j;
    } else {
      const Timed a = time_of(from[i], m, !std::isnan(to[j].sim_time_us));
      const Timed b = time_of(to[j], m, !std::isnan(from[i].sim_time_us));
      if (!std::isnan(a.value) && !std::isnan(b.value)) fn(a, b);
      ++i;
      ++j;
    }
  }
}

// The geometric mean of b -> k ratios over the cases both timed, each on its metric.
double step_geomean(const std::vector<Row>& from, const std::vector<Row>& to, Metric m) {
  double log_sum = 0;
  std::int64_t n = 0;
  for_each_timed_pair(from, to, m, [&](const Timed& a, const Timed& b) {
    log_sum += std::log(b.value / a.value);
    ++n;
  });
  return n ? std::exp(log_sum / double(n)) : 1.0;
}

// Note [Suite history]: the suite's speed across releases is a chained index, the oldest
// release = 1 and each next one multiplied by the geomean of its ratios to the previous one over
// the cases both timed, so that cases added or removed on the way do not move it. Change points
// (E-Divisive) are looked for on its logarithm.
void speed_history(RunComparison& c, const std::vector<RunRef>& history, const std::vector<std::vector<Row>*>& past,
                   const std::vector<Row>& base, const std::vector<Row>& cand, const CompareOptions& opt) {
  std::vector<const std::vector<Row>*> series;
  std::vector<std::string> releases;
  for (std::size_t h = 0; h < past.size(); ++h) {
    series.push_back(past[h]);
    releases.push_back(history[h].release);
  }
  series.push_back(&base);
  releases.push_back(c.baseline.release);
  series.push_back(&cand);
  releases.push_back(c.candidate.release);
  double index = 1;
  std::vector<double> logs;
  for (std::size_t s = 0; s < series.size(); ++s) {
    if (s > 0) index *= step_geomean(*series[s - 1], *series[s], opt.metric);
    c.speed.history.push_back({releases[s], index, false});
    logs.push_back(std::log(index));
  }
  if (logs.size() >= 4) {
    for (const stats::ChangePoint& cp : stats::e_divisive(logs)) c.speed.history[cp.index].change_point = true;
  }
}

// Gate, then change kind, then the worst first (largest ratio; then by key, for stable reports).
void sort_findings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.change != b.change) return a.change < b.change;
    const double ra = a.change == Change::Faster ? 1 / std::max(a.ratio, 1e-300) : a.ratio;
    const double rb = b.change == Change::Faster ? 1 / std::max(b.ratio, 1e-300) : b.ratio;
    if (ra != rb) return ra > rb;
    return a.key < b.key;
  });
}

// Note [Case history]: each case's own series across releases (the history runs, the baseline,
// the candidate) is searched for change points, for its time and for its error, so that a
// shift is dated: "slower since r5", and a creeping error (1.5x a release, never 4x in one step)
// shows as the shift it adds up to. E-Divisive on the log values (stats.h), at most one finding
// per case and series: the latest change point such that the median from it to the candidate is
// worse than the median before it past the effect (min_effect for time, error_growth for error);
// a regression that was later fixed has none. A series shorter than kCaseHistoryMin, or whose values all lie
// within the effect of each other, is not searched: that keeps a million constant simulated
// times cheap. Host times are first divided by their run's host drift, as the comparison judges
// them (Note [Host drift]): the median ratio between consecutive runs over the host-timed cases,
// chained; and tested at the stricter case_history_host_significance: they are noisy, and a
// million series are tested at once. Simulated time has no drift: a release that slows every
// case shows a shift on every case (and on the suite's index, Note [Suite history]). The candidate alone can never be a
// segment (min_size 2): the change at the candidate itself is the comparison's, judged above; a shift is history,
// reported for the record and never gating (docs/regressions.md#shifts-in-case-histories).
constexpr std::size_t kCaseHistoryMin = 6;

struct Shift {
  std::size_t index = 0;  // the first release of the shifted segment
  double before = 0, after = 0, p_value = 1;
};

std::optional<Shift> latest_worse_shift(const std::vector<double>& values, double effect, double significance) {
  if (values.size() < kCaseHistoryMin) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  if (!(*lo > 0) || *hi <= *lo * effect) return std::nullopt;
  std::vector<double> logs(values.size());
  std::transform(values.begin(), values.end(), logs.begin(), [](double v) { return std::log(v); });
  stats::EDivisiveOptions eo;
  eo.significance = significance;
  const std::vector<stats::ChangePoint> points = stats::e_divisive(logs, eo);
  // The latest change point with everything from it on worse than everything before it: a step
  // that stayed, and a creep (change points along the way) measured from where it started.
  for (auto cp = points.rbegin(); cp != points.rend(); ++cp) {
    const auto at = values.begin() + static_cast<std::ptrdiff_t>(cp->index);
    Shift s;
    s.index = cp->index;
    s.before = stats::median(std::vector<double>(values.begin(), at));
    s.after = stats::median(std::vector<double>(at, values.end()));
    s.p_value = cp->p_value;
    if (s.after > s.before * effect) return s;
  }
  return std::nullopt;
}

// The host drift of each run relative to the first, chained: the median host-time ratio between
// consecutive runs over the cases both judged on host time (1 when fewer than 20).
std::vector<double> host_drift_index(const std::vector<const std::vector<Row>*>& series, Metric m) {
  std::vector<double> index(series.size(), 1.0);
  std::vector<double> ratios;
  for (std::size_t s = 1; s < series.size(); ++s) {
    ratios.clear();
    for_each_timed_pair(*series[s - 1], *series[s], m, [&](const Timed& a, const Timed& b) {
      if (!a.sim && !b.sim) ratios.push_back(b.value / a.value);
    });
    index[s] = index[s - 1] * (ratios.size() >= 20 ? stats::median(ratios) : 1.0);
  }
  return index;
}

}  // namespace

// ---- The comparison

double throughput_per_s(std::int64_t work_items, double time_us) {
  if (work_items <= 0 || !(time_us > 0) || !std::isfinite(time_us)) return kNaN;
  return static_cast<double>(work_items) / (time_us * 1e-6);
}

double cost_per_million(std::optional<double> price_per_device_hour, std::int64_t work_items, double time_us) {
  const double tp = throughput_per_s(work_items, time_us);
  if (!price_per_device_hour || std::isnan(tp)) return kNaN;
  return *price_per_device_hour * 1e6 / 3600 / tp;
}

namespace {

// Note [Comparison steps]: compare_runs is a Comparer taken through its steps: choose the runs,
// read them (and the history), join them case by case, where each detector of one case has one
// signature (baseline row, candidate row) and adds findings or collects what is judged on the
// population, then judge the populations (compile time and first run, speed), summarise the
// suite, and name what was found (keys and error texts read only for the findings).
class Comparer {
 public:
  Comparer(const std::string& db_path, const CompareOptions& opt) : db_path_(db_path), db_(db_path), opt_(opt) {
    c_.options = opt;
    c_.db_path = db_path;
  }

  void choose_runs(std::int64_t candidate_id, std::optional<std::int64_t> baseline_id);
  void read();
  void join();
  void judge_populations();
  void summarise();
  RunComparison finish();

 private:
  struct Pending {
    std::uint64_t case_id;
    Finding f;
    bool needs_error = false;
  };
  // A case both runs timed, judged once the host drift is known (Note [Host drift]).
  struct SpeedCase {
    std::uint64_t case_id;
    double base, cand;
    bool sim;
    const Row* b;  // the rows, whose samples a host-timed case is judged on
    const Row* k;
    stats::NoiseBand band;
    std::int64_t work_items = 0;
    bool samples = false;
  };
  // Note [Throughput and cost]: per unit (0: samples, 1: elements), each side's log throughput
  // and the ratios, over the cases both timed that know their work.
  struct Work {
    std::vector<double> log_base, log_cand, ratios;
  };
  struct Known {
    std::uint64_t case_id;
    Status baseline, candidate;
  };
  struct OneSample {  // a host time measured once per run: compile time, first run
    std::uint64_t case_id;
    double base, cand;
  };

  void add(std::uint64_t id, Change change, double b, double k, double ratio, double p, std::string detail,
           bool needs_error = false);
  // The detectors of one case present in both runs, in the order they run.
  void case_history(const Row& b, const Row& k);
  void accuracy(const Row& b, const Row& k);
  void coverage(const Row& b, const Row& k);
  void one_sample_times(const Row& b, const Row& k);
  void memory(const Row& b, const Row& k);
  void speed(const Row& b, const Row& k);
  // Note [Case history]: the row of each run of the series for a case, oldest first.
  const Row* row_in(std::size_t run, const Row& b, const Row& k) const;
  double judge_one_sample(const std::vector<OneSample>& series, Change change, const char* what, double to_us,
                          double min_change);
  void judge_speed();
  void throughput();

  std::string db_path_;
  CompareDb db_;
  const CompareOptions& opt_;
  RunComparison c_;
  std::vector<RunRef> runs_;
  RunRows base_run_, cand_run_;
  std::vector<RunRef> history_;
  std::vector<RunRows> past_runs_;
  std::vector<std::vector<Row>*> past_;
  std::vector<std::unordered_map<std::uint64_t, const Row*>> past_index_;  // per history run, built once
  // Note [Case history]: the releases of each case's series, and their host drift.
  std::vector<std::string> releases_;
  std::vector<const std::vector<Row>*> runs_in_order_;
  bool case_histories_ = false;
  std::vector<double> host_drift_;

  std::vector<Pending> found_;
  std::vector<Known> known_;
  std::vector<OneSample> compile_times_, first_runs_;
  std::vector<SpeedCase> speed_cases_;
  std::vector<double> ratios_;
  std::int64_t sim_judged_ = 0, host_judged_ = 0;
  Work work_[2];
  std::optional<std::unordered_set<std::uint64_t>> model_ids_;  // read when first needed
};

void Comparer::choose_runs(std::int64_t candidate_id, std::optional<std::int64_t> baseline_id) {
  runs_ = db_.runs();
  if (runs_.empty()) raise(db_path_ + ": no runs");
  c_.candidate = find_run(runs_, candidate_id ? candidate_id : runs_.back().id, db_path_);
  if (baseline_id) {
    c_.baseline = find_run(runs_, *baseline_id, db_path_);
  } else {
    auto prev = previous_release(runs_, c_.candidate);
    if (!prev) {
      raise(fmt::format(
          "{}: no baseline for run {}: no earlier release of backend '{}' on suite '{}' (pass --baseline RUN)",
          db_path_, c_.candidate.id, c_.candidate.backend, c_.candidate.suite));
    }
    c_.baseline = *prev;
  }
  if (c_.baseline.id == c_.candidate.id) {
    raise(fmt::format("{}: run {} compared with itself", db_path_, c_.candidate.id));
  }
}

void Comparer::read() {
  // The two runs read side by side, each on a connection of its own (Note [Reading a million
  // results]).
  std::future<RunRows> cand_read =
      std::async(std::launch::async, [this] { return CompareDb(db_path_).rows(c_.candidate.id); });
  try {
    base_run_ = db_.rows(c_.baseline.id);
  } catch (...) {
    cand_read.wait();
    throw;
  }
  cand_run_ = cand_read.get();
  c_.baseline_cases = static_cast<std::int64_t>(base_run_.rows.size());
  c_.candidate_cases = static_cast<std::int64_t>(cand_run_.rows.size());
  for (const Row& r : base_run_.rows) ++c_.baseline_counts[r.status];
  for (const Row& r : cand_run_.rows) ++c_.candidate_counts[r.status];

  // Note [Noise bands]: a case with at least three earlier times in the history gets a band from
  // its own past: the log ratios of its time between consecutive releases (on the metric it is
  // judged on), centred on their median, +-3 x 1.4826 x MAD wide (stats::noise_band). A change
  // counts only outside it, on top of the minimum effect and the test. docs/regressions.md
  // "Noise bands".
  if (opt_.history > 0) history_ = history_runs(runs_, c_.baseline, opt_.history);
  for (const RunRef& h : history_) past_runs_.push_back(db_.rows(h.id));
  for (RunRows& h : past_runs_) past_.push_back(&h.rows);
  for (std::size_t h = 0; h < past_.size(); ++h) {
    releases_.push_back(history_[h].release);
    runs_in_order_.push_back(past_[h]);
  }
  releases_.push_back(c_.baseline.release);
  releases_.push_back(c_.candidate.release);
  runs_in_order_.push_back(&base_run_.rows);
  runs_in_order_.push_back(&cand_run_.rows);
  case_histories_ = past_.size() + 2 >= kCaseHistoryMin;
  if (case_histories_) host_drift_ = host_drift_index(runs_in_order_, opt_.metric);
  past_index_.resize(past_.size());
  for (std::size_t h = 0; h < past_.size(); ++h) {
    past_index_[h].reserve(past_[h]->size());
    for (const Row& r : *past_[h]) past_index_[h][r.case_id] = &r;
  }
}

void Comparer::add(std::uint64_t id, Change change, double b, double k, double ratio, double p, std::string detail,
                   bool needs_error) {
  Finding f;
  f.change = change;
  f.baseline = b;
  f.candidate = k;
  f.ratio = ratio;
  f.p_value = p;
  f.detail = std::move(detail);
  found_.push_back({id, std::move(f), needs_error});
}

// The merge join on case id: a case in one run only is missing or new; a case in both goes
// through every detector.
void Comparer::join() {
  const std::vector<Row>& base = base_run_.rows;
  const std::vector<Row>& cand = cand_run_.rows;
  std::size_t i = 0, j = 0;
  while (i < base.size() || j < cand.size()) {
    if (j == cand.size() || (i < base.size() && base[i].case_id < cand[j].case_id)) {
      const Row& b = base[i++];
      add(b.case_id, Change::Missing, 0, 0, 0, -1,
          fmt::format("in baseline run {} ({}), not in candidate run {}", c_.baseline.id, status_name(b.status),
                      c_.candidate.id));
      continue;
    }
    if (i == base.size() || cand[j].case_id < base[i].case_id) {
      const Row& k = cand[j++];
      add(k.case_id, Change::New, 0, 0, 0, -1, fmt::format("new in the candidate: {}", status_name(k.status)));
      continue;
    }
    const Row& b = base[i++];
    const Row& k = cand[j++];
    ++c_.common_cases;
    if (case_histories_) case_history(b, k);
    accuracy(b, k);
    coverage(b, k);
    one_sample_times(b, k);
    memory(b, k);
    speed(b, k);
  }
}

const Row* Comparer::row_in(std::size_t run, const Row& b, const Row& k) const {
  if (run == runs_in_order_.size() - 1) return &k;
  if (run == runs_in_order_.size() - 2) return &b;
  const auto it = past_index_[run].find(k.case_id);
  return it == past_index_[run].end() ? nullptr : it->second;
}

void Comparer::case_history(const Row& b, const Row& k) {
  std::vector<double> values;
  std::vector<std::size_t> at;  // the run of each value
  auto shift_finding = [&](Change change, double effect, double significance, const char* what, bool time) {
    const auto shift = latest_worse_shift(values, effect, significance);
    if (!shift) return;
    const std::string before = time ? us_text(shift->before) : fmt::format("{:.3g}", shift->before);
    const std::string after = time ? us_text(shift->after) : fmt::format("{:.3g}", shift->after);
    add(k.case_id, change, shift->before, shift->after, shift->after / shift->before, shift->p_value,
        fmt::format("{} {} -> {} ({}) since release {}, over {} releases", what, before, after,
                    time ? percent(shift->after / shift->before) : fmt::format("{:.1f}x", shift->after / shift->before),
                    releases_[at[shift->index]], values.size()));
  };
  // Error, over the releases the case passed in (floored as in Note [Error growth]).
  if (b.status == Status::Pass && k.status == Status::Pass) {
    for (std::size_t run = 0; run < runs_in_order_.size(); ++run) {
      const Row* r = row_in(run, b, k);
      if (!r || r->status != Status::Pass || std::isnan(r->max_abs_err)) continue;
      const double floor = 0.01 * (std::isnan(r->atol) || r->atol < 0 ? 0 : r->atol);
      values.push_back(std::max(r->max_abs_err, floor));
      at.push_back(run);
    }
    shift_finding(Change::ErrorShift, opt_.error_growth, opt_.case_history_significance, "max_abs_err", false);
  }
  // Time, on the metric the comparison judges the case on; host time relative to the drift.
  const bool sim = opt_.metric == Metric::Sim ||
                   (opt_.metric == Metric::Auto && !std::isnan(b.sim_time_us) && !std::isnan(k.sim_time_us));
  values.clear();
  at.clear();
  for (std::size_t run = 0; run < runs_in_order_.size(); ++run) {
    const Row* r = row_in(run, b, k);
    if (!r) continue;
    const Timed t = time_of(*r, sim ? Metric::Sim : Metric::Host, true);
    if (std::isnan(t.value)) continue;
    values.push_back(sim ? t.value : t.value / host_drift_[run]);
    at.push_back(run);
  }
  if (at.empty() || at.back() != runs_in_order_.size() - 1) return;  // the candidate is not timed
  shift_finding(Change::SpeedShift, 1 + opt_.min_effect,
                sim ? opt_.case_history_significance : opt_.case_history_host_significance,
                sim ? "sim time" : "median (after host drift)", true);
}

void Comparer::accuracy(const Row& b, const Row& k) {
  if (k.status == Status::XPass && b.status != Status::XPass) {
    add(k.case_id, Change::XPass, 0, 0, 0, -1,
        fmt::format("{} -> XPASS: the expected failure passes; the expectation is stale", status_name(b.status)));
  } else if (badness(k.status) > badness(b.status)) {
    add(k.case_id, Change::StatusChange, 0, 0, 0, -1,
        fmt::format("{} -> {}", status_name(b.status), status_name(k.status)), true);
  } else if (is_failure(b.status) && is_failure(k.status)) {
    // Failing in both runs, and no worse: a known failure (KnownFailure in regress.h).
    known_.push_back({k.case_id, b.status, k.status});
  } else if (badness(k.status) == 0 && badness(b.status) > 0) {
    add(k.case_id, Change::Fixed, 0, 0, 0, -1, fmt::format("{} -> {}", status_name(b.status), status_name(k.status)));
  } else if (b.status == Status::Pass && k.status == Status::Pass && k.atol >= 0) {
    // Note [Error growth]: a passing case whose max_abs_err grew more than error_growth times;
    // errors under 1% of the absolute tolerance are too small to judge (exact kernels give 0).
    const double floor = 0.01 * (std::isnan(k.atol) ? 0 : k.atol);
    const double from = std::max(std::isnan(b.max_abs_err) ? 0 : b.max_abs_err, floor);
    if (!std::isnan(k.max_abs_err) && k.max_abs_err > floor && from > 0 && k.max_abs_err > opt_.error_growth * from) {
      add(k.case_id, Change::ErrorGrowth, b.max_abs_err, k.max_abs_err, k.max_abs_err / from, -1,
          fmt::format("max_abs_err {:.3g} -> {:.3g} ({:.1f}x, more than {:g}x), still passing", b.max_abs_err,
                      k.max_abs_err, k.max_abs_err / from, opt_.error_growth));
    }
  }
}

void Comparer::coverage(const Row& b, const Row& k) {
  if (k.fallback_ops != b.fallback_ops && k.fallback_ops != "[]") {
    const std::set<std::string> before = ops_of(b.fallback_ops), now = ops_of(k.fallback_ops);
    std::vector<std::string> added;
    std::set_difference(now.begin(), now.end(), before.begin(), before.end(), std::back_inserter(added));
    if (!added.empty()) {
      add(k.case_id, Change::NewFallback, static_cast<double>(before.size()), static_cast<double>(now.size()), 0, -1,
          fmt::format("falls back to the CPU: {}", fmt::join(added, ", ")));
      found_.back().f.new_fallback_ops = std::move(added);
    }
  }
  if (b.graph_breaks >= 0 && k.graph_breaks > b.graph_breaks) {
    add(k.case_id, Change::GraphBreaks, double(b.graph_breaks), double(k.graph_breaks), 0, -1,
        fmt::format("graph breaks {} -> {}", b.graph_breaks, k.graph_breaks));
  }
  if (b.recompiles >= 0 && k.recompiles > b.recompiles) {
    add(k.case_id, Change::Recompiles, double(b.recompiles), double(k.recompiles), 0, -1,
        fmt::format("recompiles {} -> {}", b.recompiles, k.recompiles));
  }
}

// Compile time and first run: judged once every case is seen (Note [Compile-time noise]).
void Comparer::one_sample_times(const Row& b, const Row& k) {
  if (b.compile_ms > 0 && k.compile_ms > 0) compile_times_.push_back({k.case_id, b.compile_ms, k.compile_ms});
  // Note [First run]: host time of one call is noisy; only changes of at least first_run_min_ms
  // (compilation, not timer jitter) are judged, and only on cases with a compile step: an eager
  // case's first call is its steady state plus allocation, already judged as speed. On a
  // simulator (simulated time on both sides) host time measures the host, not the release: its
  // compile cost is judged exactly as compile time (Note [Modelled compile cost] in
  // simulator/src/compiler.cpp) and its device time as speed.
  const bool simulated = !std::isnan(b.sim_time_us) && !std::isnan(k.sim_time_us);
  const bool judge_first_run = b.compile_ms >= 0 && !simulated;
  if (judge_first_run && timed(b.status) && timed(k.status) && b.first_us > 0 && k.first_us > 0) {
    first_runs_.push_back({k.case_id, b.first_us, k.first_us});
  }
}

void Comparer::memory(const Row& b, const Row& k) {
  if (b.peak_mem > 0 && k.peak_mem > b.peak_mem * (1 + opt_.memory_growth) &&
      k.peak_mem - b.peak_mem >= opt_.memory_min_bytes) {
    add(k.case_id, Change::PeakMemory, double(b.peak_mem), double(k.peak_mem), double(k.peak_mem) / double(b.peak_mem),
        -1,
        fmt::format("peak memory {} -> {} bytes ({})", b.peak_mem, k.peak_mem,
                    percent(double(k.peak_mem) / double(b.peak_mem))));
  }
}

// Collects a case both runs timed, to be judged once the host drift is known (judge_speed).
void Comparer::speed(const Row& b, const Row& k) {
  const Timed tb = time_of(b, opt_.metric, !std::isnan(k.sim_time_us));
  const Timed tk = time_of(k, opt_.metric, !std::isnan(b.sim_time_us));
  if (std::isnan(tb.value) || std::isnan(tk.value)) {
    if (timed(b.status) && timed(k.status)) ++c_.speed.unjudged;
    return;
  }
  SpeedCase sc{k.case_id, tb.value, tk.value, tk.sim, &b, &k, {}, 0, false};
  if (b.work_items > 0 && k.work_items > 0) {
    if (!model_ids_) model_ids_ = db_.model_cases();
    sc.work_items = k.work_items;
    sc.samples = model_ids_->count(k.case_id) > 0;
    Work& w = work_[sc.samples ? 0 : 1];
    const double tp_b = throughput_per_s(b.work_items, tb.value), tp_k = throughput_per_s(k.work_items, tk.value);
    w.log_base.push_back(std::log(tp_b));
    w.log_cand.push_back(std::log(tp_k));
    w.ratios.push_back(tp_k / tp_b);
  }
  if (!tk.sim) {
    if (static_cast<int>(b.samples.size() / 4) < opt_.min_samples ||
        static_cast<int>(k.samples.size() / 4) < opt_.min_samples) {
      ++c_.speed.unjudged;
      return;
    }
    ++host_judged_;
  } else {
    ++sim_judged_;
  }
  ratios_.push_back(tk.value / tb.value);
  // The case's own noise across releases, when history has it.
  if (!past_.empty()) {
    std::vector<double> series;
    for (std::size_t h = 0; h < past_.size(); ++h) {
      auto it = past_index_[h].find(k.case_id);
      if (it == past_index_[h].end()) continue;
      const Timed t = time_of(*it->second, tk.sim ? Metric::Sim : Metric::Host, true);
      if (!std::isnan(t.value)) series.push_back(t.value);
    }
    series.push_back(tb.value);
    std::vector<double> log_ratios;
    for (std::size_t s = 1; s < series.size(); ++s) log_ratios.push_back(std::log(series[s] / series[s - 1]));
    sc.band = stats::noise_band(log_ratios, opt_.noise_k);
  }
  speed_cases_.push_back(sc);
}

// Note [Compile-time noise]: compile time and first-run latency are one host-time sample per case
// and run, and judged against a fixed threshold alone a loaded host flags them wholesale (16 of
// 24 flags false on models_smoke with the host loaded, 4 of 26 on a quiet one). They are judged
// as host time is (Note [Host drift], [Population noise]): relative to their own drift between
// the two runs (the median ratio over the cases measured, from 5 cases on), and only outside the
// noise of the other cases measured alike (noise_k robust standard deviations of their log
// ratios after drift), with the minimum effect (coverage_growth) and the minimum absolute change
// (first_run_min_ms) as before. A change of some cases stands out; a load that slows every case
// alike is drift. (So is a release that slows every compile alike: the suite's compile time is
// the drift, printed with the comparison, not a finding.) A simulator's modelled compile cost
// (Note [Modelled compile cost] in simulator/src/compiler.cpp) does not move at all: most cases
// keep their exact value, the spread is 0, and every change past coverage_growth is found,
// however few milliseconds it is.
double Comparer::judge_one_sample(const std::vector<OneSample>& series, Change change, const char* what, double to_us,
                                  double min_change) {
  double drift = 1, sigma = 0;
  if (series.size() >= 5) {
    std::vector<double> logs;
    logs.reserve(series.size());
    for (const OneSample& o : series) logs.push_back(std::log(o.cand / o.base));
    drift = std::exp(stats::median(logs));
    const double mid = std::log(drift);
    for (double& v : logs) v = std::abs(v - mid);
    sigma = 1.4826 * stats::median(logs);
  }
  // No spread at all among most cases: deterministic values, judged without the floor that
  // keeps timer jitter out.
  if (series.size() >= 5 && sigma == 0) min_change = 0;
  for (const OneSample& o : series) {
    const double ratio = o.cand / o.base / drift;
    if (ratio > 1 + opt_.coverage_growth && std::log(ratio) > opt_.noise_k * sigma &&
        o.cand / drift - o.base >= min_change) {
      const std::string drift_text = drift != 1 ? fmt::format(", {} after drift", percent(ratio)) : "";
      const std::string noise_text =
          sigma > 0 ? fmt::format(", noise ±{:.1f}%", (std::exp(opt_.noise_k * sigma) - 1) * 100) : "";
      add(o.case_id, change, o.base, o.cand, ratio, -1,
          fmt::format("{} {} -> {} ({}{}{})", what, us_text(o.base * to_us), us_text(o.cand * to_us),
                      percent(o.cand / o.base), drift_text, noise_text));
    }
  }
  return drift;
}

void Comparer::judge_populations() {
  c_.compile_drift = judge_one_sample(compile_times_, Change::CompileTime, "compile time", 1e3, opt_.first_run_min_ms);
  c_.first_run_drift = judge_one_sample(first_runs_, Change::FirstRun, "first run", 1, opt_.first_run_min_ms * 1e3);
  judge_speed();
}

void Comparer::judge_speed() {
  // Note [Host drift]: two runs hours apart see different hosts (load, clocks, caches), which
  // moves every case's host time alike; within-run repetitions cannot see it, so a test on them
  // alone flags whole suites. Each host-timed case is judged relative to the drift, the median
  // ratio over all host-timed cases; a change of the whole suite shows in the suite geomean and
  // is judged there (a finding of its own), and --confirm re-measures flagged cases side by side.
  // Simulated time is deterministic: no drift.
  double drift = 1;
  {
    std::vector<double> host_ratios;
    for (const SpeedCase& sc : speed_cases_) {
      if (!sc.sim) host_ratios.push_back(sc.cand / sc.base);
    }
    if (host_ratios.size() >= 20) drift = stats::median(host_ratios);
    c_.speed.drift = drift;
  }
  // Note [Population noise]: repetitions within a run miss the noise between runs, and two runs
  // rarely come with a history. The cases themselves measure it: most do not change between two
  // releases, so the spread of their log ratios, among cases of similar duration (ten bins by
  // baseline time: short cases are noisier), is the between-run noise. A host-timed case is
  // flagged only outside noise_k robust standard deviations of its bin (at least 50 cases a bin).
  std::vector<double> bin_sigma;  // per bin of host cases, sorted by baseline time
  std::vector<double> bin_upper;  // the largest baseline time of each bin
  {
    std::vector<std::pair<double, double>> host;  // (baseline time, log ratio after drift)
    for (const SpeedCase& sc : speed_cases_) {
      if (!sc.sim) host.emplace_back(sc.base, std::log(sc.cand / sc.base / drift));
    }
    std::sort(host.begin(), host.end());
    const std::size_t bins = std::min<std::size_t>(10, host.size() / 50);
    for (std::size_t b = 0; b < bins; ++b) {
      const std::size_t lo = host.size() * b / bins, hi = host.size() * (b + 1) / bins;
      std::vector<double> logs;
      for (std::size_t i = lo; i < hi; ++i) logs.push_back(host[i].second);
      const double mid = stats::median(logs);
      for (double& v : logs) v = std::abs(v - mid);
      bin_sigma.push_back(1.4826 * stats::median(logs));
      bin_upper.push_back(host[hi - 1].first);
    }
  }
  auto population_sigma = [&](double base) {
    if (bin_sigma.empty()) return 0.0;
    const auto it = std::lower_bound(bin_upper.begin(), bin_upper.end(), base);
    return bin_sigma[std::min<std::size_t>(static_cast<std::size_t>(it - bin_upper.begin()), bin_sigma.size() - 1)];
  };
  const double effect = 1 + opt_.min_effect;
  const double host_effect = 1 + (opt_.screen_effect >= 0 ? opt_.screen_effect : opt_.min_effect);
  std::vector<double> base_samples, cand_samples;  // one case's, reused
  for (SpeedCase& sc : speed_cases_) {
    const double raw = sc.cand / sc.base;
    double ratio = raw, p = -1;
    bool significant = true;
    std::string noise_text;
    if (!sc.sim) {
      ratio = raw / drift;
      unpack_samples(sc.b->samples, base_samples);
      unpack_samples(sc.k->samples, cand_samples);
      for (double& v : cand_samples) v /= drift;
      p = stats::mann_whitney_u(cand_samples, base_samples).p_value;
      const double sigma = opt_.population_noise ? population_sigma(sc.base) : 0.0;
      const double alpha = opt_.screen_significance > 0 ? opt_.screen_significance : opt_.significance;
      significant = p < alpha && std::abs(std::log(ratio)) > opt_.noise_k * sigma;
      // The screen before --confirm (Note [Confirmation]) also keeps a case whose fastest tenth
      // moved past the screen's effect: interference only ever adds time, so the low quantile
      // sees through a noisy baseline run that the median and the rank test do not.
      if (opt_.screen_effect >= 0 && !(significant && (ratio > host_effect || ratio < 1 / host_effect))) {
        const double low = stats::quantile(cand_samples, 0.1) / stats::quantile(base_samples, 0.1);
        if (low > host_effect || low < 1 / host_effect) {
          significant = true;
          ratio = low;  // its direction decides the finding's; the re-runs give its figures
        }
      }
      if (sigma > 0)
        noise_text = fmt::format(", between-run noise ±{:.1f}%", (std::exp(opt_.noise_k * sigma) - 1) * 100);
    }
    std::string band_text;
    if (std::isfinite(sc.band.half_width)) {
      significant = significant && stats::outside(sc.band, std::log(ratio));
      band_text = fmt::format(", noise band ±{:.1f}%", (std::exp(sc.band.half_width) - 1) * 100);
    }
    const std::string drift_text = !sc.sim && drift != 1 ? fmt::format(", {} after host drift", percent(ratio)) : "";
    const char* what = sc.sim ? "sim time" : "median";
    const double e = sc.sim ? effect : host_effect;
    if (significant && (ratio > e || ratio < 1 / e)) {
      add(sc.case_id, ratio > 1 ? Change::Slower : Change::Faster, sc.base, sc.cand, ratio, p,
          fmt::format("{} {} -> {} ({}{}{}{})", what, us_text(sc.base), us_text(sc.cand), percent(raw), drift_text,
                      noise_text, band_text));
      found_.back().f.work_items = sc.work_items;
      found_.back().f.samples = sc.samples;
    }
  }
}

// Note [Fixed denominator]: the suite's speed is the geometric mean of per-case time ratios
// over the cases both runs timed, each on its own metric (Note [Speed metric]). Numerator and
// denominator hold the same cases, so cases added, removed or no longer timed change the count
// (`compared`), never the ratio: a release that stops running its slowest cases does not read
// as faster.
void Comparer::summarise() {
  c_.speed.metric = sim_judged_ >= host_judged_ ? "sim" : "host";
  c_.speed.compared = static_cast<std::int64_t>(ratios_.size());
  if (!ratios_.empty()) c_.speed.geomean = stats::bootstrap_geomean(ratios_, opt_.bootstrap_resamples);
  speed_history(c_, history_, past_, base_run_.rows, cand_run_.rows, opt_);
  throughput();
  // The whole suite slower (or faster) past the minimum effect with confidence: its own finding,
  // keyed "suite:<name>", so that a release slowing every case alike is flagged (Note [Host drift]).
  const double effect = 1 + opt_.min_effect;
  if (c_.speed.compared > 0 && (c_.speed.geomean.lo > effect || c_.speed.geomean.hi < 1 / effect)) {
    const bool slower = c_.speed.geomean.lo > effect;
    Finding f;
    f.key = "suite:" + c_.candidate.suite;
    f.change = slower ? Change::Slower : Change::Faster;
    f.ratio = c_.speed.geomean.estimate;  // a ratio of geomeans: no baseline and candidate times
    f.detail = fmt::format("the suite's {} time geomean over {} cases: {:.4f}x [{:.4f}, {:.4f}] ({})", c_.speed.metric,
                           c_.speed.compared, c_.speed.geomean.estimate, c_.speed.geomean.lo, c_.speed.geomean.hi,
                           percent(c_.speed.geomean.estimate));
    c_.findings.push_back(std::move(f));
  }
}

void Comparer::throughput() {
  for (int u = 0; u < 2; ++u) {
    const Work& w = work_[u];
    if (w.ratios.empty()) continue;
    ThroughputSummary t;
    t.unit = u == 0 ? "samples" : "elements";
    t.cases = static_cast<std::int64_t>(w.ratios.size());
    auto mean = [](const std::vector<double>& v) {
      double sum = 0;
      for (double x : v) sum += x;
      return sum / static_cast<double>(v.size());
    };
    t.baseline = std::exp(mean(w.log_base));
    t.candidate = std::exp(mean(w.log_cand));
    t.ratio = stats::bootstrap_geomean(w.ratios, opt_.bootstrap_resamples);
    // cost = price · 10^6 / 3600 / throughput: the geomean of costs is that of the geomean
    // throughput, and the cost ratio the price ratio over the throughput ratio.
    const auto pb = c_.baseline.price_per_device_hour, pk = c_.candidate.price_per_device_hour;
    if (pb) t.baseline_cost = *pb * 1e6 / 3600 / t.baseline;
    if (pk) t.candidate_cost = *pk * 1e6 / 3600 / t.candidate;
    if (pb && pk) {
      const double prices = *pk / *pb;
      t.cost_ratio = {prices / t.ratio.estimate, prices / t.ratio.hi, prices / t.ratio.lo};
    }
    c_.throughput.push_back(std::move(t));
  }
}

// Keys and error texts, only for what is reported, read in two batches.
RunComparison Comparer::finish() {
  std::vector<std::uint64_t> named, with_error;
  for (const Pending& p : found_) {
    named.push_back(p.case_id);
    if (p.needs_error) with_error.push_back(p.case_id);
  }
  for (const Known& k : known_) {
    named.push_back(k.case_id);
    with_error.push_back(k.case_id);
  }
  const auto keys = db_.keys(std::move(named));
  const auto errors = db_.errors(c_.candidate.id, std::move(with_error));
  auto key = [&](std::uint64_t id) {
    const auto it = keys.find(id);
    return it != keys.end() ? it->second : fmt::format("<case {:016x}>", id);
  };
  // The candidate's error text of a case, first line, at most 200 bytes.
  auto error_line = [&](std::uint64_t id) {
    const auto it = errors.find(id);
    std::string error = it != errors.end() ? it->second : "";
    if (auto nl = error.find('\n'); nl != std::string::npos) error.resize(nl);
    if (error.size() > 200) error = error.substr(0, 197) + "...";
    return error;
  };
  for (Pending& p : found_) {
    p.f.key = key(p.case_id);
    if (p.needs_error) {
      const std::string error = error_line(p.case_id);
      if (!error.empty()) p.f.detail += ": " + error;
    }
    c_.findings.push_back(std::move(p.f));
  }
  sort_findings(c_.findings);
  for (const Known& k : known_)
    c_.known_failures.push_back({key(k.case_id), k.baseline, k.candidate, error_line(k.case_id)});
  std::sort(c_.known_failures.begin(), c_.known_failures.end(),
            [](const KnownFailure& a, const KnownFailure& b) { return a.key < b.key; });
  return std::move(c_);
}

}  // namespace

RunComparison compare_runs(const std::string& db_path, std::int64_t candidate_id,
                           std::optional<std::int64_t> baseline_id, const CompareOptions& opt) {
  Comparer comparer(db_path, opt);
  comparer.choose_runs(candidate_id, baseline_id);
  comparer.read();
  comparer.join();
  comparer.judge_populations();
  comparer.summarise();
  return comparer.finish();
}

}  // namespace gauntlet
