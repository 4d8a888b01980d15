// What every command that runs cases sets up the same way: a new run's record, the runner's
// configuration (the suite files' judgement, timing, goldens, collectives), the price of a
// device-hour. Shared by run, repro, worker, bench and reduce.
#pragma once

#include <optional>
#include <string>

#include "gauntlet/run/worker_protocol.h"
#include "gauntlet/store/store.h"

namespace gauntlet {

class Backend;
class GoldenStore;
class Expectations;
class ToleranceTable;
struct RunnerConfig;
struct Suite;
enum class FallbackSource;

// A new run's record: the environment, the backend and the suite; the caller adds the rest.
RunInfo new_run_info(const Backend& backend, const Suite& suite, const std::string& release,
                     const std::string& build_id, const std::string& filter);
// What a device-hour costs, for cost per million samples: `--price-per-device-hour` when given
// (`flag`), else $GAUNTLET_PRICE_PER_DEVICE_HOUR, else none. A value that is not a positive finite
// number is an error naming where it came from.
std::optional<double> price_per_device_hour(const std::string& flag);
// $GAUNTLET_FALLBACKS (auto | backend | dispatcher); an error for anything else.
FallbackSource fallback_source_from_env();
// The runner configuration `run` (in-process), `repro` and `worker` share: the suite files'
// judgement, the timing repetitions, and the golden store options (a null store: compute every
// golden).
RunnerConfig runner_config(const ToleranceTable& tolerances, const Expectations& expectations,
                           const TimingOptions& timing, GoldenStore* golden_store, bool golden_add, bool golden_always,
                           const std::string& golden_release);
// Makes `cfg` run collective cases as groups of `gauntlet rank` processes (this binary) on
// `backend`.
void enable_collectives(RunnerConfig& cfg, const std::string& backend, const std::string& suites_dir, double timeout_s);

}  // namespace gauntlet
