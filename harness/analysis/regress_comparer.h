// compare's pieces (regress.cpp): a run's results as compact rows, the database compare reads, and
// the Comparer that takes a comparison through its steps (Note [Comparison steps]); the detectors
// of one case live in regress_detectors.cpp. Private to gauntlet_analysis.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gauntlet/analysis/regress.h"
#include "gauntlet/analysis/stats.h"
#include "gauntlet/store/store_reader.h"

namespace gauntlet::compare_detail {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Series shorter than this are not searched for shifts (Note [Case history]).
inline constexpr std::size_t kCaseHistoryMin = 6;

// compare's errors: CompareError with this message and exit code.
void raise(const std::string& message, int exit_code = kExitBadInput);

// The graph-break reasons of the candidate's `reason` that the baseline's lacks (Note [New graph
// break reasons] in regress_detectors.cpp; compile_reasons.h).
std::vector<std::string_view> new_break_reasons(std::string_view baseline, std::string_view candidate);

// Note [How a case compares]: one result per case per run, read a column at a time into this
// compact record (the error text and the key are read later, only for findings), then the two
// runs are merge-joined on case id.
struct Row {
  std::uint64_t case_id = 0;
  double max_abs_err = 0, atol = 0;
  double first_us = kNaN, median_us = kNaN, sim_time_us = kNaN, compile_ms = kNaN, backend_ms = kNaN;
  std::int64_t peak_mem = 0;
  std::int64_t work_items = 0;                      // 0: not recorded (Note [Throughput and cost])
  std::int32_t graph_breaks = -1, recompiles = -1;  // -1: not recorded
  std::int32_t cache_hits = -1;                     // -1: no compiler cache consulted (Note [Compiler cache])
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
  // The `reason` of each case with graph breaks (in `texts`): its breaks' reasons, for
  // compare's new-break-reason check (Note [New graph break reasons] in regress_detectors.cpp).
  std::unordered_map<std::uint64_t, std::string_view> break_reasons;
};

int badness(Status s);
bool timed(Status s);
std::set<std::string> ops_of(std::string_view json_text);
std::string us_text(double us);
std::string percent(double ratio);

// Note [Speed metric]: a case's time is its simulated time (sim_time_us) under --metric sim, and
// under auto when both runs have one for it; otherwise the host median (median_us). A case is
// judged on one metric in both runs, never a simulated time against a host time, and a time that
// is not positive is no time. docs/regressions.md "The metric".
struct Timed {
  double value = kNaN;
  bool sim = false;
};
Timed time_of(const Row& r, Metric m, bool other_has_sim);

struct Shift {
  std::size_t index = 0;  // the first release of the shifted segment
  double before = 0, after = 0, p_value = 1;
};
std::optional<Shift> latest_worse_shift(const std::vector<double>& values, double effect, double significance);

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
      r.backend_ms = q.backend_ms;
      r.peak_mem = q.peak_mem_bytes;
      r.graph_breaks = std::isnan(q.graph_breaks) ? -1 : static_cast<std::int32_t>(q.graph_breaks);
      r.recompiles = std::isnan(q.recompiles) ? -1 : static_cast<std::int32_t>(q.recompiles);
      r.cache_hits = std::isnan(q.cache_hits) ? -1 : static_cast<std::int32_t>(q.cache_hits);
      if (q.fallback_ops != "[]") r.fallback_ops = out.texts.add(q.fallback_ops);
      if (q.graph_breaks > 0 && !q.compile_reasons.empty())
        out.break_reasons.emplace(q.case_id, out.texts.add(q.compile_reasons));
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
  void run_keys(std::int64_t run, const std::function<void(std::uint64_t, std::string_view)>& on_case) {
    reader_.run_keys(run, on_case);
  }
  std::unordered_map<std::uint64_t, std::string> keys(std::vector<std::uint64_t> ids) {
    return reader_.keys(std::move(ids));
  }
  std::unordered_map<std::uint64_t, std::string> errors(std::int64_t run, std::vector<std::uint64_t> ids) {
    return reader_.errors(run, std::move(ids));
  }

 private:
  StoreReader reader_;
};

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
  void count_groups();
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

}  // namespace gauntlet::compare_detail
