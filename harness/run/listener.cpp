// Note [Run listeners] in gauntlet/run/listener.h: the fan-out, and the run's report read once for
// every listener that asks for it.
#include "gauntlet/run/listener.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "gauntlet/run/run_config.h"
#include "gauntlet/store/store.h"

namespace gauntlet {

RunEnd::RunEnd(const RunContext& run, std::string stopped_why, std::string hollow_why)
    : stopped(std::move(stopped_why)), hollow(std::move(hollow_why)), run_(run) {}

const RunReport& RunEnd::report() const {
  if (report_) return *report_;
  RunReport& r = report_.emplace();
  r.id = run_.run_id;
  r.suite = run_.suite;
  r.backend = run_.backend;
  r.db_path = run_.db_path;
  r.gauntlet_version = run_.gauntlet_version;
  r.gate = run_.gate;
  r.hollow = hollow;
  const std::optional<RunInfo> info = run_.store && run_.run_id > 0 ? run_.store->run(run_.run_id) : std::nullopt;
  if (!info) {
    // No run: nothing unfinished either. (Assigning the literal "-" trips g++ 12's -Wrestrict false
    // positive in C++20, GCC bug 105329.)
    r.finished_at = std::string(1, '-');
    return r;
  }
  r.release = info->release;
  r.backend = info->backend;
  r.backend_version = info->backend_version;
  r.suite = info->suite;
  r.started_at = info->started_at;
  r.finished_at = info->finished_at;
  for (StoredResult& s : run_.store->results(run_.run_id)) r.results.push_back(std::move(s.outcome));
  // The cases it planned (its record's "cases"), or those stored when more (Note [Hollow runs]).
  r.planned = static_cast<std::int64_t>(r.results.size());
  r.planned = std::max(r.planned, RunConfig::parse(info->config_json).cases.value_or(0));
  return r;
}

void RunListeners::add(std::unique_ptr<RunListener> listener) {
  if (listener) listeners_.push_back(std::move(listener));
}

void RunListeners::run_started(const RunContext& run, const std::vector<const Case*>& todo) {
  for (auto& l : listeners_) l->run_started(run, todo);
}

void RunListeners::case_finished(const Case& c, const Outcome& outcome) {
  for (auto& l : listeners_) l->case_finished(c, outcome);
}

void RunListeners::results_committed() {
  for (auto& l : listeners_) l->results_committed();
}

void RunListeners::cases_ended() {
  for (auto& l : listeners_) l->cases_ended();
}

void RunListeners::run_ended(const RunContext& run, const RunEnd& end) {
  for (auto& l : listeners_) l->run_ended(run, end);
}

}  // namespace gauntlet
