// The outcome of one case: a plain value that crosses module boundaries (runner -> store,
// worker -> orchestrator, repro -> JSON). No torch here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet {

enum class Status : std::uint8_t { Pass, Fail, Error, Crash, Timeout, Unsupported, Skip, XFail, XPass };
inline constexpr Status kAllStatuses[] = {Status::Pass,  Status::Fail,    Status::Error,
                                          Status::Crash, Status::Timeout, Status::Unsupported,
                                          Status::Skip,  Status::XFail,   Status::XPass};
std::string_view status_name(Status s);                  // "PASS", "FAIL", ...
std::optional<Status> parse_status(std::string_view s);  // case-insensitive
// A status a gate treats as a failure: FAIL, ERROR, CRASH, TIMEOUT, XPASS.
bool is_failure(Status s);

// Error metrics of a comparison with the golden result, over every compared output.
struct Metrics {
  double max_abs_err = 0;       // max |actual - golden| over finite pairs
  double max_rel_err = 0;       // max |actual - golden| / |golden| over finite pairs, golden != 0
  std::int64_t mismatches = 0;  // elements outside tolerance (or with a NaN/Inf disagreement)
  std::int64_t numel = 0;       // elements compared
  double max_ulp = 0;           // max ULP distance in the output dtype (floats only)
  bool nan_inf_ok = true;       // NaN and +-Inf at the same places
  std::string worst;            // where the worst element is: "out0[12]" / "grad.self[3]"
  double mismatch_frac() const { return numel ? double(mismatches) / double(numel) : 0.0; }
};

struct Timing {
  double first_us = 0;   // first call on the device (allocation, compilation) in microseconds
  double median_us = 0;  // median of the steady-state repetitions
  double p10_us = 0, p90_us = 0;
  double cv = 0;  // coefficient of variation of the repetitions: sample stddev / mean (0 below 2)
  int reps = 0;
  double golden_us = 0;  // obtaining the golden: computing it, or reading it from the store
  // Every steady-state repetition in the order it ran (what a significance test compares);
  // stored as float32.
  std::vector<double> samples_us;
};

// Fills `t` from the steady-state repetitions, in the order they ran: samples_us, reps, the
// median, p10 and p90 (nearest rank) and the coefficient of variation. No repetitions: the three
// quantiles are the first call's time and cv is 0. The one place every timer summarises.
void record_repetitions(Timing& t, std::vector<double> samples_us);

struct Outcome {
  std::string key;
  Status status = Status::Pass;
  Metrics metrics;
  double rtol = 0, atol = 0;      // tolerance used
  std::string tolerance_profile;  // which tolerance rule applied, e.g. "default", "tolerances.yaml:12"
  std::string error;              // exception message (first line kept separately by reporters)
  std::string reason;             // skip / xfail reason from the catalog
  // The stage of the case that failed (Note [Failing stage] in gauntlet/base/stage.h: "inputs",
  // "op", "outputs", ...); "" for PASS, SKIP and XPASS, and for results stored before it existed.
  std::string stage;
  Timing timing;
  std::int64_t peak_mem_bytes = 0;        // peak device memory during the case (0 when unknown)
  std::vector<std::string> fallback_ops;  // ops that fell back to CPU (backends that report it)
  // Device time of the first call as the backend reports it (simulated time on `sim`); none
  // when the backend cannot tell.
  std::optional<double> sim_time_us;
  // Collectives (Note [Collective timing] in collective.cpp): algorithm and bus bandwidth in GB/s,
  // as nccl-tests reports them.
  std::optional<double> algbw_gbps, busbw_gbps;
  // The compile path (exec=compile cases, Note [Compile path] in harness/python/compiled.cpp);
  // none for eager cases. graph_breaks: where dynamo (or the backend's compiler) could not go on
  // (what follows runs eagerly or in another graph); recompiles: dynamo's recompiles (a guard
  // failed: a new shape or dtype); regions: graphs dynamo made, or the regions the backend
  // compiled of them (`sim`); compile_ms: time spent compiling, dynamo_ms (tracing, guards) +
  // aot_ms (AOT autograd) + backend_ms (the backend's compiler: inductor on `cpu`).
  std::optional<std::int64_t> graph_breaks, recompiles, regions;
  std::optional<double> compile_ms, dynamo_ms, aot_ms, backend_ms;
  // Of the graphs compiled, those a compiler's on-disk cache served (inductor's FX graph cache,
  // AOT autograd's cache): compile time is judged only between results compiled alike. None
  // where no such cache was consulted (Note [Compiler cache] in gauntlet_compile.py).
  std::optional<std::int64_t> cache_hits;
  // What one call processes, for throughput and cost per million (Note [Throughput and cost] in
  // harness/analysis/regress.cpp): samples for a model case (its batch size b), elements for an
  // op or a collective case (every output and gradient compared). 0: not known.
  std::int64_t work_items = 0;
  int attempt = 1;
  // "computed", "store", "computed+stored" (added to the store) or "recomputed" (stored, but
  // cheaper to compute than to read: Note [Reading or recomputing] in golden_store.h)
  std::string golden_source = "computed";
  std::string golden_entry;  // the golden store object used, written, or stored but recomputed
  std::string device_slot;   // the device slot the case's worker was bound to ("" in-process)
  bool flaky = false;        // crashed or timed out, then passed on a retry
  // Model cases (Note [Executed ops] in models/include/gauntlet/models/model_file.h): the ops the first
  // device call ran at the top level, one record per op and input signature (executed_op_text).
  // Empty for other cases.
  std::vector<std::string> executed_ops;
};

// One record of Outcome::executed_ops: "aten::conv2d\tinput=f32[1,3,224,224], weight=...\t2"
// (the op with its overload, its inputs, the calls with those inputs).
struct ExecutedOp {
  std::string op;
  std::string inputs;
  std::int64_t calls = 0;
};
std::string executed_op_text(const ExecutedOp& e);
std::optional<ExecutedOp> parse_executed_op(std::string_view record);  // nullopt: not a record

// Note [Bounded error texts]: a stored error text keeps at most kMaxErrorBytes bytes (the first
// line, where the cause is, comes first); longer ones are cut at a UTF-8 boundary and end with
// "... [N bytes, cut]". A dispatcher error alone is ~5 KB, a crash's stderr tail can be more, and
// a suite of 200,000 cases must not store gigabytes of the same table. A CRASH or TIMEOUT's text
// ("worker died with SIGABRT ...", kStderrMark, its stderr's last lines) keeps its head and the
// END of the tail instead, where the fatal line is: "[N bytes cut]" stands for the middle.
// docs/database.md.
inline constexpr std::size_t kMaxErrorBytes = 2048;
// What separates a dead worker's error from the last lines of its stderr (Note [Stderr tails]).
inline constexpr std::string_view kStderrMark = "\nlast lines of its stderr:\n";
void bound_error_text(std::string& text);

}  // namespace gauntlet
