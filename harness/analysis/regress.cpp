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

#include "gauntlet/analysis/rollup.h"
#include "gauntlet/base/samples.h"
#include "gauntlet/store/store_reader.h"
#include "regress_comparer.h"

namespace gauntlet {

using namespace compare_detail;  // this file's own pieces (regress_comparer.h)

namespace compare_detail {

void raise(const std::string& message, int exit_code) { throw CompareError(message, exit_code); }

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

}  // namespace compare_detail

// ---- The database

// ---- Choosing the runs

namespace compare_detail {

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

Timed time_of(const Row& r, Metric m, bool other_has_sim) {
  if (!timed(r.status)) return {};
  const bool sim = m == Metric::Sim || (m == Metric::Auto && !std::isnan(r.sim_time_us) && other_has_sim);
  if (sim) return {r.sim_time_us > 0 ? r.sim_time_us : kNaN, true};
  return {r.median_us > 0 ? r.median_us : kNaN, false};
}

}  // namespace compare_detail

// ---- The suite's speed across releases

namespace compare_detail {

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

}  // namespace compare_detail

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

namespace compare_detail {

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
// Note [Rollups] in rollup.cpp: the denominator of each group the findings name, its cases in both
// runs. Read only when there are findings: the candidate's keys, one pass.
void Comparer::count_groups() {
  std::set<std::string> named;
  for (const Finding& f : c_.findings) {
    if (f.change == Change::New) continue;
    named.insert(case_group(f.key));
    named.insert(case_target(f.key));
  }
  if (named.empty()) return;
  const std::vector<Row>& base = base_run_.rows;
  db_.run_keys(c_.candidate.id, [&](std::uint64_t id, std::string_view key) {
    const auto at =
        std::lower_bound(base.begin(), base.end(), id, [](const Row& r, std::uint64_t v) { return r.case_id < v; });
    const bool common = at != base.end() && at->case_id == id;
    if (!common) return;
    for (std::string group : {case_group(key), case_target(key)}) {
      if (auto it = named.find(group); it != named.end()) ++c_.group_cases[group];
    }
  });
}

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
  count_groups();
  for (const Known& k : known_)
    c_.known_failures.push_back({key(k.case_id), k.baseline, k.candidate, error_line(k.case_id)});
  std::sort(c_.known_failures.begin(), c_.known_failures.end(),
            [](const KnownFailure& a, const KnownFailure& b) { return a.key < b.key; });
  return std::move(c_);
}

}  // namespace compare_detail

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
