// Regression detection: a candidate run judged against a baseline run, and against the history of
// releases before it (docs/regressions.md). No torch: the database is read through the store's
// reader (gauntlet/store/store_reader.h), only the columns each detector needs, so that two runs of a
// million results compare in seconds.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gauntlet/analysis/stats.h"
#include "gauntlet/base/error.h"
#include "gauntlet/base/outcome.h"
#include "gauntlet/store/store_reader.h"

namespace gauntlet {

// A comparison that cannot be made: unreadable database, no such run, no baseline. One line.
class CompareError : public Error {
 public:
  using Error::Error;
};

// What a regression threatens; `--gate` names the kinds that fail a build.
enum class Gate : std::uint8_t { Accuracy, Speed, Coverage };
inline constexpr Gate kAllGates[] = {Gate::Accuracy, Gate::Speed, Gate::Coverage};
std::string_view gate_name(Gate g);                     // accuracy, speed, coverage
std::optional<Gate> parse_gate(std::string_view name);  // case-insensitive
// --gate's list ("accuracy,speed", "all"; "" none); an unknown kind is a gauntlet::Error.
std::vector<Gate> parse_gates(const std::string& spec);

// One kind of change between the baseline's result of a case and the candidate's.
enum class Change : std::uint8_t {
  // accuracy
  StatusChange,  // a passing status (PASS, XFAIL, SKIP) became a failure or UNSUPPORTED
  ErrorGrowth,   // still passing, but the error grew past the documented factor
  XPass,         // an expected failure passes: the expectation is stale
  // coverage
  NewFallback,  // ops that fall back to the CPU now and did not before
  GraphBreaks,  // more graph breaks
  Recompiles,   // more recompiles
  CompileTime,  // compile time up
  FirstRun,     // first-run latency up (compile included)
  PeakMemory,   // peak device memory up
  Missing,      // in the baseline, not in the candidate (the denominator is fixed)
  // speed
  Slower,
  // not regressions, reported for the record
  Faster,
  Fixed,  // a failing status became a passing one
  New,    // in the candidate, not in the baseline
  // history, reported for the record (Note [Case history]): the case's series across releases
  // shifted for the worse at an earlier release and has stayed there since
  ErrorShift,  // max_abs_err
  SpeedShift,  // its time
};
inline constexpr Change kLastChange = Change::SpeedShift;
std::string_view change_name(Change c);  // status-change, error-growth, ..., new
Gate change_gate(Change c);              // which --gate it belongs to (Faster: speed, ...)
bool is_regression(Change c);            // false for Faster, Fixed, New and the shifts

// The waiver that covers a regression (gauntlet/analysis/waivers.h): reported, and gating only when expired.
struct WaiverRef {
  std::string where;                   // "waivers.yaml:12"
  std::string reason, owner, expires;  // expires: YYYY-MM-DD
  bool expired = false;
};

// The acknowledgement that covers a regression (gauntlet/analysis/triage.h, `gauntlet triage
// ack`): listed apart with its note; gating only when the gate is asked to honour acks. One that
// grew past what was acknowledged is open again and says so.
struct AckRef {
  std::int64_t id = 0;
  std::string subject, note, by, at, until;
  bool grown = false;     // open again: the regression grew since it was acknowledged
  std::string grown_why;  // "+40.0% where +20.0% was acknowledged"
  bool honoured = false;  // compare --honour-acks: an acknowledged regression does not gate
};

struct Finding {
  std::string key;  // the case key
  Change change = Change::StatusChange;
  double baseline = 0, candidate = 0;  // the values compared (time in µs, error, bytes, counts)
  double ratio = 0;                    // candidate / baseline where meaningful, else 0
  double p_value = -1;                 // of the significance test, when one was made (-1: none)
  std::string detail;                  // one line: "PASS -> FAIL: max_abs_err 0.5 (rtol 1.3e-06, atol 1e-05)"
  // NewFallback: the ops that fall back to the CPU in the candidate and did not in the baseline,
  // sorted (the detail names them too, for people; readers such as the dashboard use this).
  std::vector<std::string> new_fallback_ops;
  // Speed findings of a case that knows what a call processes (Outcome::work_items): the
  // throughput and cost per million the times give (Note [Throughput and cost]). 0: unknown.
  std::int64_t work_items = 0;
  bool samples = false;  // work_items are samples (a model case), else elements
  std::optional<WaiverRef> waiver;
  std::optional<AckRef> ack;
  // Acknowledged and not grown since: listed apart from the open regressions.
  bool acknowledged() const { return ack && !ack->grown; }
  // A regression that fails the gate of its kind: not waived, or waived by an expired waiver; and
  // not acknowledged where acks are honoured.
  bool gating() const {
    return is_regression(change) && (!waiver || waiver->expired) && !(acknowledged() && ack->honoured);
  }
};

// Which time a speed comparison judges.
enum class Metric : std::uint8_t {
  Auto,  // simulated time when both runs have it for the case, else host time
  Sim,   // the backend's device time (simulated on `sim`): deterministic, no repetitions
  Host,  // host wall time of the steady-state repetitions
};
std::string_view metric_name(Metric m);
std::optional<Metric> parse_metric(std::string_view name);

struct CompareOptions {
  Metric metric = Metric::Auto;
  double min_effect = 0.05;       // a speed change smaller than 5% is never flagged
  double significance = 0.01;     // Mann-Whitney U p-value below which a change is significant
  int min_samples = 5;            // host time: fewer repetitions on either side cannot be judged
  double error_growth = 4.0;      // a passing case's max_abs_err growing more than 4x is flagged
  double coverage_growth = 0.25;  // compile time and first-run latency up more than 25%
  double first_run_min_ms = 1.0;  // ... and by at least this much (Note [First run])
  double memory_growth = 0.10;    // peak memory up more than 10%
  // ... and by at least 1 MiB: smaller moves are allocator granularity (the simulator's peak moves
  // by 64 KiB with what its worker ran before)
  std::int64_t memory_min_bytes = 1 << 20;
  int history = 8;  // earlier releases used for noise bands and change points (0: none)
  // Per-case change points (Note [Case history]): E-Divisive's significance on a case's series of
  // deterministic values (simulated time, error) and on its host time, which is noisier and
  // tested on a million cases at once.
  double case_history_significance = 0.05;
  double case_history_host_significance = 0.01;
  double noise_k = 3.0;  // noise band half-width in robust standard deviations
  // Host time: judge each case against the between-run noise of cases like it (Note [Population
  // noise]). Off when --confirm re-measures the flagged cases: the screen then keeps every
  // significant change past the minimum effect, and the A/B re-runs decide.
  bool population_noise = true;
  // Host time: the screen's effect when --confirm decides (Note [Confirmation]): a case whose
  // baseline run happened to be slow shows less than its true change, so the screen keeps
  // significant changes past this smaller effect, and the A/B re-runs apply min_effect. Negative:
  // min_effect itself (no confirmation).
  double screen_effect = -1;
  double screen_significance = -1;  // likewise for the p-value (negative: significance)
  int bootstrap_resamples = 2000;
};

// Note [Throughput and cost]: what a case processes per call (samples of a model case, elements
// of the others) over the time a call takes on the metric it is judged on; and, from the run's
// price of a device-hour, what a million of them cost: price · time / 3600 s / items · 10^6.
double throughput_per_s(std::int64_t work_items, double time_us);  // NaN when unknown
double cost_per_million(std::optional<double> price_per_device_hour, std::int64_t work_items, double time_us);

// The suite's throughput and cost, one per unit (samples: model cases; elements: the others),
// over the cases both runs timed that know their work: geomeans across cases, and the geomean of
// their candidate / baseline ratios with its bootstrap interval.
struct ThroughputSummary {
  std::string unit;  // "samples" or "elements"
  std::int64_t cases = 0;
  double baseline = NAN, candidate = NAN;  // geomean items per second
  stats::Interval ratio;                   // of throughputs, candidate / baseline (> 1: faster)
  // Geomean cost per million items; NaN when the run has no price. The ratio is the inverse
  // throughput ratio times the ratio of prices.
  double baseline_cost = NAN, candidate_cost = NAN;
  stats::Interval cost_ratio;
};

// A suite-level speed summary: the geometric mean of candidate/baseline ratios over the cases
// both runs timed, with its bootstrap confidence interval, and the series across releases.
struct SpeedSummary {
  std::string metric;         // "sim" or "host" (the one most cases used)
  std::int64_t compared = 0;  // cases in the geomean
  std::int64_t unjudged = 0;  // timed on one side only, or too few repetitions
  double drift = 1;           // host time: the median ratio the cases were judged against
  stats::Interval geomean;    // ratio candidate / baseline
  struct Point {
    std::string release;
    double index = 1;  // chained geomean index, the oldest release = 1
    bool change_point = false;
  };
  std::vector<Point> history;  // oldest first, the candidate last
};

// A case that fails in both runs (a failing status, gauntlet/base/outcome.h is_failure, in the baseline
// and in the candidate) and is no regression: no worse in the candidate, so no status-change
// finding. Known failures never gate a comparison; the reports list them apart from the
// regressions, so that failures carried from release to release stay in sight.
struct KnownFailure {
  std::string key;
  Status baseline = Status::Fail, candidate = Status::Fail;
  std::string detail;  // the candidate's error, first line (at most 200 bytes)
};

struct RunComparison {
  int json_schema_version = 1;
  std::string db_path;  // the database compared (for repro commands); "" when built by hand
  RunRef baseline, candidate;
  CompareOptions options;
  std::int64_t baseline_cases = 0, candidate_cases = 0, common_cases = 0;
  std::map<Status, std::int64_t> baseline_counts, candidate_counts;
  std::vector<Finding> findings;             // sorted by gate, change, then severity (worst first)
  std::vector<KnownFailure> known_failures;  // sorted by key
  SpeedSummary speed;
  // The median ratio of compile time and of first-run latency (compile cases) between the two
  // runs, from 5 such cases on (else 1): what each case's change is judged against (Note
  // [Compile-time noise] in regress.cpp).
  double compile_drift = 1, first_run_drift = 1;
  // Compile cases whose compile time and first run were not judged: a compiler's on-disk cache
  // served a different number of their graphs in the two runs (Note [Compile time across caches] in
  // regress_detectors.cpp), so the two times measure different work.
  std::int64_t compile_cache_differs = 0;
  std::vector<ThroughputSummary> throughput;  // samples first, then elements; units with no case left out
  // Cases in both runs of each group the findings name (Note [Rollups] in rollup.cpp): by
  // case_group ("op/add/f32/eager") and by case_target ("op/add"), gauntlet/analysis/rollup.h.
  std::map<std::string, std::int64_t> group_cases;
  // Regressions that fail the gates asked for (after waivers), by gate.
  std::map<Gate, std::int64_t> gating_counts() const;
};

// Compares run `candidate` (0: the latest run) with `baseline` (none: the previous release of
// the same backend and suite, Note [Automatic baseline]) in the database at `db_path`, opened
// read-only. Waivers are applied by the caller (gauntlet/analysis/waivers.h). Throws CompareError.
RunComparison compare_runs(const std::string& db_path, std::int64_t candidate, std::optional<std::int64_t> baseline,
                           const CompareOptions& options);

}  // namespace gauntlet
