#include "gauntlet/core/session/run_setup.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "gauntlet/base/error.h"
#include "gauntlet/core/backend/backend.h"
#include "gauntlet/core/backend/environment.h"
#include "gauntlet/core/cases/runner.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/core/collective/collective.h"
#include "gauntlet/run/child_process.h"

namespace gauntlet {

RunInfo new_run_info(const Backend& backend, const Suite& suite, const std::string& release,
                     const std::string& build_id, const std::string& filter) {
  RunInfo info;
  describe_environment(info);
  info.release = release;
  info.build_id = build_id;
  info.backend = backend.name();
  info.backend_version = backend.version();
  info.suite = suite.name;
  info.filter = filter;
  info.started_at = utc_now();
  return info;
}

std::optional<double> price_per_device_hour(const std::string& flag) {
  std::string text = flag, where = "--price-per-device-hour";
  if (text.empty()) {
    const char* env = std::getenv("GAUNTLET_PRICE_PER_DEVICE_HOUR");
    if (!env || !*env) return std::nullopt;
    text = env;
    where = "GAUNTLET_PRICE_PER_DEVICE_HOUR";
  }
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(v) || v <= 0) {
    throw Error(fmt::format("{} '{}': not a positive number (the price of one device-hour, e.g. 1.25)", where, text));
  }
  return v;
}

// $GAUNTLET_FALLBACKS: where fallback_ops come from (Note [Dispatcher-derived fallbacks]):
// auto (default), backend or dispatcher. Read in every process, so workers follow their run.
FallbackSource fallback_source_from_env() {
  const char* env = std::getenv("GAUNTLET_FALLBACKS");
  const std::string v = env ? env : "";
  if (v.empty() || v == "auto") return FallbackSource::Auto;
  if (v == "backend") return FallbackSource::Backend;
  if (v == "dispatcher") return FallbackSource::Dispatcher;
  throw Error("$GAUNTLET_FALLBACKS='" + v + "': use auto, backend or dispatcher");
}

RunnerConfig runner_config(const ToleranceTable& tolerances, const Expectations& expectations,
                           const TimingOptions& timing, GoldenStore* golden_store, bool golden_add, bool golden_always,
                           const std::string& golden_release) {
  RunnerConfig cfg;
  cfg.tolerances = &tolerances;
  cfg.expectations = &expectations;
  cfg.fallback_source = fallback_source_from_env();
  cfg.min_reps = timing.reps;
  cfg.max_reps = timing.reps > 0 ? 1000 : 0;
  cfg.min_time_ms = timing.min_time_ms;
  cfg.max_time_ms = timing.max_time_ms;
  cfg.warmup = timing.warmup;
  cfg.golden_store = golden_store;
  cfg.golden_add = golden_add;
  cfg.golden_always = golden_always;
  cfg.golden_release = golden_release;
  if (golden_store) cfg.golden_reference = reference_identity();
  return cfg;
}

void enable_collectives(RunnerConfig& cfg, const std::string& backend, const std::string& suites_dir,
                        double timeout_s) {
  GroupConfig group;
  group.exe = self_exe();
  group.rank_args = {"--backend", backend};
  if (!suites_dir.empty()) group.rank_args.insert(group.rank_args.end(), {"--suites-dir", suites_dir});
  group.timeout_s = timeout_s;
  cfg.collective = [group](const CaseKey& key) { return run_collective_group(key, group); };
}

}  // namespace gauntlet
