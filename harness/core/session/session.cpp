// Note [Run session] in gauntlet/core/session/session.h.
#include "gauntlet/core/session/session.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <unordered_map>

#include "gauntlet/core/backend/environment.h"
#include "gauntlet/core/cases/runner.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/store/store.h"

namespace gauntlet {

namespace {

using Clock = std::chrono::steady_clock;

// Commits results as they arrive: in batches, and at least every quarter second, so that a
// killed orchestrator loses at most that much work (a resume re-runs it) and duplicates nothing.
// After each commit it tells the listeners (Note [Run listeners]), so that a reporter writing as it
// goes (--json-lines) never holds a result the database lacks.
// Note [Stopped by the environment]: when the machine fails the store mid-run (the disk is full,
// the database stays locked past the busy timeout, an I/O error: a StoreError carrying
// kExitEnvironment), the run stops as an interrupt would: the orchestrator stops its workers,
// results already committed stay, the batch that could not be written is dropped (its cases have
// no result, so a resume runs them again: nothing is lost, nothing stored twice), and `run` prints
// the error, what is stored and the resume command, and exits 4. Any other store error is a bug or
// bad input and propagates as before.
class Committer {
 public:
  Committer(Store& store, std::int64_t run_id, RunListener& listeners)
      : store_(store), run_id_(run_id), listeners_(listeners), last_(Clock::now()) {}
  void add(const Case& c, Outcome o) {
    if (failed()) {
      ++lost_;
      return;
    }
    guarded([&] { store_.add_result(run_id_, c.key, c.text, std::move(o)); });
    if (Clock::now() - last_ > std::chrono::milliseconds(250)) flush();
  }
  void flush() {
    if (failed()) return;
    guarded([&] { store_.flush(); });
    if (!failed()) listeners_.results_committed();
    last_ = Clock::now();
  }
  // Runs a store write; an environment failure stops the run (the note above).
  template <typename F>
  void guarded(F&& write) {
    try {
      write();
    } catch (const StoreError& e) {
      if (e.exit_code() != kExitEnvironment) throw;
      error_ = e.what();
      lost_ += store_.discard_pending();
    }
  }
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  std::size_t lost() const { return lost_; }

 private:
  Store& store_;
  std::int64_t run_id_;
  RunListener& listeners_;
  Clock::time_point last_;
  std::string error_;
  std::size_t lost_ = 0;
};

// A result as it is heard and stored: the case's note (Note [Ops from models]) at the front of its
// reason, and its key's text.
void finalize(const Case& c, Outcome& o) {
  if (!c.note.empty()) o.reason = c.note + (o.reason.empty() ? "" : "; " + o.reason);
  if (o.key.empty()) o.key = c.text;
}

}  // namespace

RunSession::RunSession(Store& store, RunContext context, RunListeners& listeners, std::int64_t max_failures,
                       std::function<bool()> interrupted)
    : store_(store),
      context_(std::move(context)),
      listeners_(listeners),
      max_failures_(max_failures),
      interrupted_(std::move(interrupted)) {}

SessionResult RunSession::run(const std::vector<const Case*>& todo, const Execution& how) {
  SessionResult result;
  const std::int64_t run_id = context_.run_id;
  listeners_.run_started(context_, todo);
  Committer commit(store_, run_id, listeners_);
  auto stopped_by_store = [&] {
    result.store_error = commit.error();
    result.lost = commit.lost();
    return result;
  };
  {
    std::vector<const CaseKey*> keys;
    keys.reserve(todo.size());
    for (const Case* c : todo) keys.push_back(&c->key);
    commit.guarded([&] { store_.add_cases(keys); });  // once, in bulk: each result is then one insert
    if (commit.failed()) {
      listeners_.cases_ended();
      return stopped_by_store();
    }
  }
  // Note [Fail fast]: --max-failures N stops the run, as an interrupt would (every result kept,
  // resumable), once this invocation has stored N failures. Cases in flight on other workers are
  // stopped with it and left for the resume.
  const auto enough_failures = [&] { return max_failures_ > 0 && result.failures >= max_failures_; };
  const auto take = [&](const Case& c, Outcome&& out) {
    finalize(c, out);
    listeners_.case_finished(c, out);
    result.failures += is_failure(out.status) ? 1 : 0;
    commit.add(c, std::move(out));
  };
  bool interrupted = false;
  if (how.in_process()) {
    prepare_process_for_cases();
    for (const Case* c : todo) {
      if (interrupted_() || commit.failed()) {
        interrupted = true;
        break;
      }
      take(*c, run_case(c->key, *how.backend, *how.runner));
      if (enough_failures() && c != todo.back()) {
        interrupted = true;
        break;
      }
    }
    if (interrupted) result.stopped = "interrupted";
  } else if (!todo.empty()) {
    OrchestratorConfig oc = how.workers;
    oc.log_dir =
        (std::filesystem::temp_directory_path() / fmt::format("gauntlet-{}-run{}", ::getpid(), run_id)).string();
    std::unordered_map<std::string, const Case*> by_key;
    std::vector<std::string> keys;
    keys.reserve(todo.size());
    for (const Case* c : todo) {
      by_key[c->text] = c;
      keys.push_back(c->text);
    }
    Orchestrator orchestrator(oc);
    result.stopped = orchestrator.run(
        keys,
        [&](CaseDone&& d) {
          d.outcome.device_slot = d.slot;
          d.outcome.flaky = d.flaky;
          take(*by_key.at(d.key), std::move(d.outcome));
        },
        [&] { return interrupted_() || enough_failures() || commit.failed(); });
    std::error_code ec;
    std::filesystem::remove_all(oc.log_dir, ec);
  }
  result.failed_fast = !result.stopped.empty() && !interrupted_() && enough_failures();
  if (result.failed_fast) {
    result.stopped = fmt::format("{} failures reached --max-failures {}", result.failures, max_failures_);
  }
  listeners_.cases_ended();
  commit.flush();
  if (result.stopped.empty() && !commit.failed()) commit.guarded([&] { store_.finish_run(run_id, utc_now()); });
  if (commit.failed()) return stopped_by_store();
  return result;
}

}  // namespace gauntlet
