#include "gauntlet/analysis/judged.h"

#include <fmt/format.h>

#include <algorithm>

#include "gauntlet/analysis/stats.h"
#include "gauntlet/base/case_key.h"
#include "gauntlet/base/samples.h"
#include "gauntlet/store/store_reader.h"

namespace gauntlet {

// Note [What was judged]: `repro` of a speed regression used to run the case and print its time,
// not what compare had judged: the developer saw "median 52 µs" and had to find the baseline's
// figure, the metric and the threshold elsewhere. So repro (with --db) asks compare for the
// case's findings against the same baseline (compare's default options) and prints, for each
// speed, memory, compile-time or first-run finding, the baseline's figure, the stored
// candidate's and its own new one under the same timer (simulated time where compare judged
// simulated time), and whether the new one is flagged by the same rule. The rule applied to the
// new measurement is the single-case part of compare's check (minimum effect; significance of
// the repetitions on host time; minimum absolute change); the parts that need the whole run
// (host drift, population noise, noise bands from history) cannot be re-run on one case, and the
// stored finding's detail says what they were. A bundle carries the same figures and thresholds
// (manifest `judged`) and its repro.py times the case and judges it by the same rule, without
// Gauntlet.

namespace {

std::string us_text(double us) {
  if (!std::isfinite(us)) return "none";
  if (us >= 1e6) return fmt::format("{:.4g} s", us / 1e6);
  if (us >= 1e3) return fmt::format("{:.4g} ms", us / 1e3);
  return fmt::format("{:.4g} µs", us);
}
std::string percent(double ratio) { return fmt::format("{:+.1f}%", (ratio - 1) * 100); }
std::string mib(std::int64_t bytes) { return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1 << 20)); }

bool judged_kind(Change c) {
  return c == Change::Slower || c == Change::CompileTime || c == Change::FirstRun || c == Change::PeakMemory;
}

// Simulated time where compare used it: both runs have it, and --metric did not ask for host time.
bool sim_metric(const CaseFigures& base, const CaseFigures& other, const CompareOptions& o) {
  return o.metric != Metric::Host && std::isfinite(base.sim_us) && std::isfinite(other.sim_us);
}

std::string host_text(const CaseFigures& f) {
  if (!std::isfinite(f.median_us)) return "none";
  if (f.samples_us.size() < 4) return us_text(f.median_us);
  return fmt::format("{} (middle half {} .. {}, {} reps)", us_text(f.median_us),
                     us_text(stats::quantile(f.samples_us, 0.25)), us_text(stats::quantile(f.samples_us, 0.75)),
                     f.samples_us.size());
}

// The figure a change is judged on, as text.
std::string figure_text(Change c, const CaseFigures& f, bool sim) {
  switch (c) {
    case Change::Slower:
      return sim ? us_text(f.sim_us) : host_text(f);
    case Change::CompileTime:
      return std::isfinite(f.compile_ms) ? us_text(f.compile_ms * 1e3) : "none";
    case Change::FirstRun:
      return us_text(f.first_us);
    case Change::PeakMemory:
      return mib(f.peak_mem);
    default:
      return "";
  }
}

std::string_view figure_name(Change c, bool sim) {
  switch (c) {
    case Change::Slower:
      return sim ? "sim time" : "host time";
    case Change::CompileTime:
      return "compile time";
    case Change::FirstRun:
      return "first run";
    case Change::PeakMemory:
      return "peak memory";
    default:
      return "";
  }
}

nlohmann::json figures_json(const CaseFigures& f) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"status", status_name(f.status)}, {"sim_us", num(f.sim_us)},         {"median_us", num(f.median_us)},
          {"first_us", num(f.first_us)},     {"compile_ms", num(f.compile_ms)}, {"peak_mem", f.peak_mem},
          {"samples_us", f.samples_us}};
}

}  // namespace

std::optional<CaseJudgement> judge_case(const std::string& db_path, std::int64_t run, std::string_view key) {
  CaseJudgement j;
  RunComparison c;
  try {
    c = compare_runs(db_path, run, std::nullopt, CompareOptions{});
  } catch (const CompareError& e) {
    if (std::string_view(e.what()).find("no baseline") != std::string_view::npos) return std::nullopt;
    throw;
  }
  j.baseline = c.baseline;
  j.candidate = c.candidate;
  j.options = c.options;
  for (const Finding& f : c.findings) {
    if (f.key == key) j.findings.push_back(f);
  }
  const std::uint64_t id = key_id(key);
  StoreReader reader(db_path, [](const std::string& m, int code) { throw CompareError(m, code); });
  FactScan scan;
  scan.runs = {c.baseline.id, c.candidate.id};
  scan.samples = true;
  reader.scan_facts(scan, [&](const ResultFacts& r) {
    if (r.case_id != id) return;
    CaseFigures& f = r.run_id == c.baseline.id ? j.base : j.stored;
    f.present = true;
    f.status = r.status;
    f.sim_us = r.sim_time_us;
    f.median_us = r.median_us;
    f.first_us = r.first_us;
    f.compile_ms = r.compile_ms;
    f.peak_mem = r.peak_mem_bytes;
    f.samples_us = unpack_samples(r.samples);
  });
  if (!j.base.present) return std::nullopt;
  return j;
}

NowVerdict judge_now(Change change, const CaseFigures& base, const CaseFigures& now, const CompareOptions& o) {
  NowVerdict v;
  switch (change) {
    case Change::Slower: {
      const bool sim = sim_metric(base, now, o);
      const double b = sim ? base.sim_us : base.median_us, n = sim ? now.sim_us : now.median_us;
      if (!(b > 0) || !std::isfinite(n)) return v;
      v.ratio = n / b;
      if (sim) {
        v.flagged = v.ratio > 1 + o.min_effect;
        v.rule = fmt::format("flagged past {} (--min-effect)", percent(1 + o.min_effect));
      } else {
        if (!base.samples_us.empty() && !now.samples_us.empty())
          v.p_value = stats::mann_whitney_u(now.samples_us, base.samples_us).p_value;
        v.flagged = v.ratio > 1 + o.min_effect && v.p_value >= 0 && v.p_value < o.significance;
        v.rule = fmt::format("flagged past {} (--min-effect) with p < {:g} (--significance)", percent(1 + o.min_effect),
                             o.significance);
      }
      return v;
    }
    case Change::CompileTime:
      if (!(base.compile_ms > 0) || !std::isfinite(now.compile_ms)) return v;
      v.ratio = now.compile_ms / base.compile_ms;
      v.flagged = v.ratio > 1 + o.coverage_growth;
      v.rule = fmt::format("flagged past {}", percent(1 + o.coverage_growth));
      return v;
    case Change::FirstRun:
      if (!(base.first_us > 0) || !std::isfinite(now.first_us)) return v;
      v.ratio = now.first_us / base.first_us;
      v.flagged = v.ratio > 1 + o.coverage_growth && now.first_us - base.first_us >= o.first_run_min_ms * 1e3;
      v.rule = fmt::format("flagged past {} and {:g} ms", percent(1 + o.coverage_growth), o.first_run_min_ms);
      return v;
    case Change::PeakMemory:
      if (base.peak_mem <= 0) return v;
      v.ratio = static_cast<double>(now.peak_mem) / static_cast<double>(base.peak_mem);
      v.flagged = v.ratio > 1 + o.memory_growth && now.peak_mem - base.peak_mem >= o.memory_min_bytes;
      v.rule = fmt::format("flagged past {} and {}", percent(1 + o.memory_growth), mib(o.memory_min_bytes));
      return v;
    default:
      return v;
  }
}

bool judged_on_device_time(const CaseJudgement& j) {
  return sim_metric(j.base, j.stored, j.options) &&
         std::any_of(j.findings.begin(), j.findings.end(), [](const Finding& f) { return f.change == Change::Slower; });
}

std::string judged_text(const CaseJudgement& j, const CaseFigures& now) {
  std::vector<const Finding*> judged;
  for (const Finding& f : j.findings) {
    if (judged_kind(f.change)) judged.push_back(&f);
  }
  const std::string against = fmt::format("baseline run {} ({})", j.baseline.id, j.baseline.release);
  if (judged.empty()) {
    return fmt::format("judged   no speed, memory, compile-time or first-run regression of run {} against {}\n",
                       j.candidate.id, against);
  }
  std::string out = fmt::format("judged   run {} ({}) against {}, as compare judges it:\n", j.candidate.id,
                                j.candidate.release, against);
  for (const Finding* f : judged) {
    const bool sim = f->change == Change::Slower && sim_metric(j.base, j.stored, j.options);
    const std::string_view name = figure_name(f->change, sim);
    out += fmt::format("  {}: {}\n", change_name(f->change), f->detail);
    out += fmt::format("    {:<9} {} {}\n", "baseline", name, figure_text(f->change, j.base, sim));
    const NowVerdict stored = judge_now(f->change, j.base, j.stored, j.options);
    out += fmt::format("    {:<9} {} {}{}\n", fmt::format("run {}", j.candidate.id), name,
                       figure_text(f->change, j.stored, sim),
                       std::isfinite(stored.ratio) ? fmt::format(" ({})", percent(stored.ratio)) : "");
    if (sim && !std::isfinite(now.sim_us)) {
      out += fmt::format("    {:<9} no {}: the backend reported none here\n", "now", name);
      continue;
    }
    const NowVerdict v = judge_now(f->change, j.base, now, j.options);
    out += fmt::format("    {:<9} {} {}{}\n", "now", name, figure_text(f->change, now, sim),
                       std::isfinite(v.ratio) ? fmt::format(" ({})", percent(v.ratio)) : "");
    if (!std::isfinite(v.ratio)) continue;
    out += fmt::format("    {:<9} {}: {} against the baseline{}, {}: {}\n", "verdict",
                       v.flagged ? change_name(f->change) : "not flagged", percent(v.ratio),
                       v.p_value >= 0 ? fmt::format(" (p = {:.2g})", v.p_value) : "", v.rule,
                       v.flagged ? "the regression reproduces" : "it does not reproduce here");
  }
  return out;
}

nlohmann::json judged_json(const CaseJudgement& j) {
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding& f : j.findings) {
    if (!judged_kind(f.change)) continue;
    findings.push_back({{"change", change_name(f.change)}, {"detail", f.detail}, {"ratio", f.ratio}});
  }
  const CompareOptions& o = j.options;
  return {{"baseline", {{"run", j.baseline.id}, {"release", j.baseline.release}}},
          {"candidate", {{"run", j.candidate.id}, {"release", j.candidate.release}}},
          {"metric", sim_metric(j.base, j.stored, o) ? "sim" : "host"},
          {"base", figures_json(j.base)},
          {"stored", figures_json(j.stored)},
          {"findings", findings},
          {"options",
           {{"min_effect", o.min_effect},
            {"significance", o.significance},
            {"coverage_growth", o.coverage_growth},
            {"first_run_min_ms", o.first_run_min_ms},
            {"memory_growth", o.memory_growth},
            {"memory_min_bytes", o.memory_min_bytes}}}};
}

}  // namespace gauntlet
