// compare's detectors of one case (Note [Comparison steps] in regress_comparer.h): each looks at
// the case's baseline and candidate rows and adds findings or collects what is judged on the whole
// population; then the populations are judged (compile time and first run, speed).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compile_reasons.h"
#include "gauntlet/base/samples.h"
#include "regress_comparer.h"

namespace gauntlet::compare_detail {

namespace {

std::string_view reason_of(const std::unordered_map<std::uint64_t, std::string_view>& reasons, std::uint64_t id) {
  const auto it = reasons.find(id);
  return it == reasons.end() ? std::string_view() : it->second;
}

}  // namespace

std::vector<std::string_view> new_break_reasons(std::string_view baseline, std::string_view candidate) {
  const std::vector<std::string_view> before = graph_break_reasons(baseline);
  std::vector<std::string_view> added;
  for (std::string_view r : graph_break_reasons(candidate)) {
    if (std::find(before.begin(), before.end(), r) == before.end() &&
        std::find(added.begin(), added.end(), r) == added.end())
      added.push_back(r);
  }
  return added;
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
  } else if (b.graph_breaks > 0 && k.graph_breaks > 0) {
    // Note [New graph break reasons]: as many breaks as before or fewer, but one the baseline did
    // not have (an op that compiled now breaks, while another that broke now compiles) is a new
    // break all the same. Reasons are compared as recorded (record_compile_stats in
    // harness/core/cases/compile_path.cpp): why, and where in the program or model file.
    const std::vector<std::string_view> added =
        new_break_reasons(reason_of(base_run_.break_reasons, b.case_id), reason_of(cand_run_.break_reasons, k.case_id));
    if (!added.empty()) {
      add(k.case_id, Change::GraphBreaks, double(b.graph_breaks), double(k.graph_breaks), 0, -1,
          fmt::format("graph breaks {} -> {}, new: {}", b.graph_breaks, k.graph_breaks, fmt::join(added, "; ")));
    }
  }
  if (b.recompiles >= 0 && k.recompiles > b.recompiles) {
    add(k.case_id, Change::Recompiles, double(b.recompiles), double(k.recompiles), 0, -1,
        fmt::format("recompiles {} -> {}", b.recompiles, k.recompiles));
  }
}

// Compile time and first run: judged once every case is seen (Note [Compile-time noise]).
void Comparer::one_sample_times(const Row& b, const Row& k) {
  // Note [Compile time across caches]: inductor keeps compiled graphs on disk across processes and runs (its
  // FX graph cache, AOT autograd's cache), so the same case compiles in a fraction of the time
  // once a run has filled the cache. Two results whose compiles the cache served differently
  // (one cold, one warm) measure different work: their compile time and first run are not
  // judged, only counted. Results that do not say (a compiler without such a cache, results
  // stored before schema 12) are judged as before.
  if (b.cache_hits >= 0 && k.cache_hits >= 0 && b.cache_hits != k.cache_hits) {
    ++c_.compile_cache_differs;
    return;
  }
  // Note [Compile time judged]: where both runs split it, the backend compiler's part
  // (backend_ms): what a backend's release changes. dynamo's and AOT autograd's parts are torch's,
  // the same code on both sides, and their host time only adds noise (on `sim` it would hide the
  // modelled cost, which is exact, under tens of milliseconds of host time). A case whose backend
  // compiled nothing (backend_ms 0: every node a graph break) has no compile time to judge.
  if (!std::isnan(b.backend_ms) && !std::isnan(k.backend_ms)) {
    if (b.backend_ms > 0 && k.backend_ms > 0) compile_times_.push_back({k.case_id, b.backend_ms, k.backend_ms});
  } else if (b.compile_ms > 0 && k.compile_ms > 0) {
    compile_times_.push_back({k.case_id, b.compile_ms, k.compile_ms});
  }
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

}  // namespace gauntlet::compare_detail
