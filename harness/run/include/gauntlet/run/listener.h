// Note [Run listeners]: what happens during `gauntlet run`, as value events fanned out to
// listeners: the progress display, the reporters (--junit, --markdown, --json-lines, GitHub's step
// summary) and whatever a new one needs, without touching the loops that run cases. The events,
// in order:
//   run_started        once, before the first case: the run and the cases this invocation runs
//   case_finished      each result as it arrives, final (the case's note, the device slot and
//                      flaky set), before it is stored
//   results_committed  every result heard so far is committed to the database (a reporter that
//                      writes as it goes writes then, so its file never holds what the database
//                      lacks)
//   cases_ended        once, when no case will run any more (the progress line is cleared then,
//                      before the run's summary is printed), also when the database stopped the run
//   run_ended          once, after the last commit, the run's record and its summary, whether the
//                      run finished or stopped (interrupted, --max-failures, a worker slot
//                      retired); not when the database could not be written (Note [Stopped by the
//                      environment]: the run's reports wait for its resume)
// Listeners are called in the order they were added, on the thread that runs the cases. The store
// itself is not a listener: the run commits each result (Committer in core/session/session.cpp) and then tells
// the listeners. Anchors: Catch2's IEventListener and MultiReporter, Google Benchmark's display and
// file reporters. docs/architecture.md "How to add": a run reporter.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gauntlet/analysis/run_reports.h"

namespace gauntlet {

struct Case;
struct Outcome;
class Store;

// The run listeners hear about.
struct RunContext {
  std::int64_t run_id = 0;       // 0: no run was written (an empty shard: Note [Empty shards])
  const Store* store = nullptr;  // the run's database; null with run_id 0
  std::string db_path;           // as the user named it (for repro commands)
  std::string backend;           // as --backend named it
  std::string suite, suite_file;
  std::string gauntlet_version;
  bool resumed = false;  // results stored before this invocation count too
  bool gate = false;     // --gate
};

// How a run ended.
class RunEnd {
 public:
  RunEnd(const RunContext& run, std::string stopped, std::string hollow);
  std::string stopped;  // "" when every case ran; else why it stopped (it resumes)
  std::string hollow;   // Note [Hollow runs]'s reason when --gate found the run hollow, else ""
  // Every result of the run (a resumed run's earlier ones too) with the run's record, read from
  // the store on first use and kept for the next listener; with run_id 0, a report of no case.
  const RunReport& report() const;

 private:
  const RunContext& run_;
  mutable std::optional<RunReport> report_;
};

class RunListener {
 public:
  virtual ~RunListener() = default;
  virtual void run_started(const RunContext& /*run*/, const std::vector<const Case*>& /*todo*/) {}
  virtual void case_finished(const Case& /*c*/, const Outcome& /*outcome*/) {}
  virtual void results_committed() {}
  virtual void cases_ended() {}
  virtual void run_ended(const RunContext& /*run*/, const RunEnd& /*end*/) {}
};

// Fans every event out to its listeners, in the order they were added.
class RunListeners final : public RunListener {
 public:
  void add(std::unique_ptr<RunListener> listener);
  bool empty() const { return listeners_.empty(); }
  void run_started(const RunContext& run, const std::vector<const Case*>& todo) override;
  void case_finished(const Case& c, const Outcome& outcome) override;
  void results_committed() override;
  void cases_ended() override;
  void run_ended(const RunContext& run, const RunEnd& end) override;

 private:
  std::vector<std::unique_ptr<RunListener>> listeners_;
};

}  // namespace gauntlet
