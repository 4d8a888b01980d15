// The runner: one case, in-process, to an Outcome value. Exceptions are classified once, here,
// at the case boundary (Note [Outcome classification] in runner.cpp).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gauntlet/base/outcome.h"
#include "gauntlet/core/backend/backend.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/golden/golden_store.h"
#include "gauntlet/python/compiled.h"

namespace gauntlet {

class DispatchObserver;

// Readies a process that is about to run cases (a worker, or `run --workers 0`): freed memory
// kept for the next case (Note [Freed memory kept] in runner.cpp) and no C++ backtrace fetched for
// c10 errors, which the harness never prints (compat::fetch_no_error_backtraces).
void prepare_process_for_cases();

// Where a case's fallback ops come from (Note [Dispatcher-derived fallbacks]): the backend's own
// report when its library gives one, else the dispatcher; or one of the two, forced.
enum class FallbackSource { Auto, Backend, Dispatcher };

struct RunnerConfig {
  const ToleranceTable* tolerances = nullptr;  // null: per-dtype defaults
  const Expectations* expectations = nullptr;  // null: nothing skipped or expected to fail
  // Note [Timing methodology]: the first call is timed on its own (first_us: allocation,
  // compilation, caches); `warmup` more calls run untimed; then the case repeats at least
  // `min_reps` times and until the repetitions took `min_time_ms`, but never more than `max_reps`
  // times nor once the case has taken `max_time_ms` in all (the cap wins). Every repetition is
  // kept (samples_us) for significance tests.
  int warmup = 0;
  int min_reps = 5;
  int max_reps = 1000;  // 0: time the first call only
  double min_time_ms = 0;
  double max_time_ms = 20;
  // Precomputed goldens (Note [Golden store]): used when present and intact, else computed.
  GoldenStore* golden_store = nullptr;
  bool golden_add = false;       // write goldens the store lacks (needs a writable store)
  bool golden_always = false;    // read every stored golden, even where recomputing is faster
  std::string golden_release;    // use this release's frozen goldens instead of the current ones
  std::string golden_reference;  // reference_identity(), computed once per run
  // Runs a collective case (kind "coll") as a group of rank processes (run_collective_group in
  // gauntlet/core/collective/collective.h); unset: such cases are ERROR.
  std::function<Outcome(const CaseKey&)> collective;
  FallbackSource fallback_source = FallbackSource::Auto;
};

// What a case was doing when it failed: the harness step it was in ("moving inputs to the
// device"), and the innermost device op an exception left (Note [Outcome classification]).
struct CaseTrace {
  std::string step;
  std::optional<std::string> raised_op, raised_source, raised_in_fallback_of;
  void note_raise(const DispatchObserver* obs);
};

// An observer of the dispatcher for the backend's device, or null on the CPU.
std::unique_ptr<DispatchObserver> observe_dispatch(const Backend& backend);
// The ops a case ran through the CPU fallback, from `source` (Auto: the backend's own report
// when it gives one, else `obs`), clearing the backend's report either way.
std::vector<std::string> case_fallbacks(Backend& backend, const DispatchObserver* obs, FallbackSource source);

// What `repro` prints beyond the outcome.
struct TensorSummary {
  std::string name, dtype, shape, strides;
  double min = 0, max = 0, mean = 0;
  std::uint64_t fingerprint = 0;
};
struct WorstElement {
  std::string output;
  std::int64_t index = 0;  // flat, row-major
  std::string coords;      // "[3, 7]"
  double actual = 0, golden = 0, golden_cast = 0, abs_err = 0, allowed = 0;
};
// Note [Case tensors]: the tensors themselves, for a bundle (gauntlet/core/bundle/bundle.h): kept by op and
// zoo model cases when CaseDetail::keep_tensors is set, in the order the case compared them.
struct CaseTensors {
  std::vector<NamedTensor> inputs;             // on the CPU, laid out as the device got them (strides, offset)
  std::vector<NamedTensor> golden;             // the golden as computed: fp64 for floating outputs
  std::vector<NamedTensor> actual;             // the device's outputs, copied to the CPU as compared
  std::vector<at::ScalarType> dtypes;          // each output's expected dtype
  std::vector<Tolerance> tolerances;           // each output's
  std::vector<std::int64_t> promised_strides;  // out0's, when the op promises a dense input's layout
  std::vector<NamedTensor> loss_weights;       // a training model case's fixed loss weights
  // A model file case's rule per output (Note [Output quality] in model_file_case.cpp): kind
  // "scaled", "topk", "cosine" or "skip", its tolerance and topk's class dim. Empty for other
  // cases, which are judged element by element by `tolerances`.
  struct OutputRule {
    std::string kind;
    double tolerance = 0;
    std::int64_t dim = -1;
  };
  std::vector<OutputRule> rules;
};
struct CaseDetail {
  std::vector<TensorSummary> inputs, actual, golden;
  std::vector<std::string> decomposed;  // ops that ran as composites of others on the device
  std::vector<WorstElement> worst;      // up to 5, furthest outside tolerance first
  bool keep_tensors = false;            // fill `tensors`, and for a compile case `program` and `dynamo`
  CaseTensors tensors;
  // A compile case's program as the backend compiled it, and the dynamo backend and settings it
  // compiled with (a bundle compiles it again the same way).
  std::optional<python::Program> program;
  std::optional<python::DynamoBackend> dynamo;
};

// An error text of TorchScript's interpreter with the kernel's message first and the traceback
// after it (Note [Interpreter errors] in runner.cpp); other texts unchanged.
std::string lead_with_cause(std::string text);

Outcome run_case(const CaseKey& key, Backend& backend, const RunnerConfig& config, CaseDetail* detail = nullptr);

// A case ready to be called again and again on its backend: inputs made and on the device. What
// `gauntlet bench` hands to Google Benchmark.
class PreparedCase {
 public:
  virtual ~PreparedCase() = default;
  virtual void call() = 0;  // runs the case's op(s) once and synchronizes the device
};
// Throws what making the inputs throws (an invalid key, an op the backend refuses).
std::unique_ptr<PreparedCase> prepare_case(const CaseKey& key, Backend& backend);

}  // namespace gauntlet
