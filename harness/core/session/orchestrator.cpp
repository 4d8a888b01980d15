#include "gauntlet/core/session/orchestrator.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gauntlet/base/host.h"
#include "gauntlet/base/stage.h"
#include "gauntlet/base/strings.h"
#include "gauntlet/base/text.h"
#include "gauntlet/run/child_process.h"
#include "gauntlet/run/outcome_json.h"
#include "gauntlet/run/worker_protocol.h"

namespace fs = std::filesystem;

namespace gauntlet {

namespace {

using Clock = std::chrono::steady_clock;

// A line a worker wrote, or its end of output (it exited, crashed or was killed).
struct Event {
  int worker = 0;
  bool eof = false;
  std::string line;
};

struct Item {
  std::string key;
  int attempt = 1;
  bool alone = false;         // a retry: runs on a worker with nothing else queued
  std::string first_failure;  // what the first attempt ended as (for a flaky case)
};

// One worker process and what it holds.
struct Worker {
  int index = 0;
  std::uint64_t generation = 0;
  std::string slot;
  std::unique_ptr<ChildProcess> proc;  // in a group of its own: killed with anything it started
  std::string unread;                  // output read but not yet a whole line
  bool out_eof = false;                // its stdout has ended (the end was reported)
  fs::path err_log;
  bool ready = false, alive = false, killed_for_timeout = false;
  std::deque<Item> queued;  // sent, in order; the front one is running once `started`
  bool started = false;
  Clock::time_point started_at;
  double case_s = 0;  // its cases' recent cost, seconds (Note [Queue depth])
  int deaths_in_a_row = 0;
  bool retired = false;
};

// The file a worker shares its stage through (Note [Failing stage] in gauntlet/base/stage.h).
std::string stage_file(const Worker& w) { return w.err_log.string() + ".stage"; }

// Closes our end of a worker's stdin without flushing: a dead worker's pipe would throw from the
// stream's destructor. Every send is flushed, so nothing meant for a live worker is lost.
void close_stdin(Worker& w) {
  if (w.proc) w.proc->close_in();
}

// The end of a worker's stderr, folded (Note [Stderr tails] in gauntlet/base/text.h): its last
// 256 KiB are plenty for the last lines however many warnings came before them.
std::string stderr_tail_of(const fs::path& p, std::size_t entries) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return "";
  constexpr std::streamoff kTailBytes = 256 << 10;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = size > kTailBytes ? size - kTailBytes : 0;
  in.seekg(from);
  std::string text(static_cast<std::size_t>(size - from), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (from > 0) {
    const std::size_t nl = text.find('\n');  // a partial first line
    text.erase(0, nl == std::string::npos ? text.size() : nl + 1);
  }
  return fold_stderr_tail(text, entries);
}

// Note [Reading workers]: the orchestrator's one thread polls every worker's stdout and reads
// what is there in one go: a worker writes two lines per case, and handing each line from a
// reader thread to this one cost four context switches, which on trivial cases made the
// orchestrator, not the worker, the bottleneck (ci/orchestrator_bench.sh).
// Waits until `deadline` for output, then returns every whole line available, and an `eof`
// event for each worker whose stdout ended.
std::vector<Event> read_events(std::vector<Worker>& workers, Clock::time_point deadline) {
  std::vector<pollfd> fds;
  std::vector<Worker*> polled;
  for (Worker& w : workers) {
    if (!w.proc || w.out_eof) continue;
    fds.push_back({w.proc->out_fd(), POLLIN, 0});
    polled.push_back(&w);
  }
  std::vector<Event> events;
  if (fds.empty()) {
    std::this_thread::sleep_until(std::min(deadline, Clock::now() + std::chrono::milliseconds(20)));
    return events;
  }
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  const int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(0, wait)));
  if (n <= 0) return events;  // timeout, or EINTR: the caller loops
  char buf[1 << 16];
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (!fds[i].revents) continue;
    Worker& w = *polled[i];
    const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got > 0) w.unread.append(buf, static_cast<std::size_t>(got));
    std::size_t begin = 0;
    for (std::size_t nl; (nl = w.unread.find('\n', begin)) != std::string::npos; begin = nl + 1) {
      events.push_back({w.index, false, w.unread.substr(begin, nl - begin)});
    }
    w.unread.erase(0, begin);
    if (got <= 0) {  // the end: a last line without a newline still counts
      if (!w.unread.empty()) events.push_back({w.index, false, std::move(w.unread)});
      w.unread.clear();
      w.out_eof = true;
      events.push_back({w.index, true, {}});
    }
  }
  return events;
}

}  // namespace

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGKILL:
      return "SIGKILL";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGTRAP:
      return "SIGTRAP";
    default:
      return fmt::format("signal {}", sig);
  }
}

std::vector<std::string> parse_slots(const std::string& spec) {
  std::vector<std::string> slots;
  for (const std::string& part : split(spec, ",")) {
    if (part.empty()) throw std::invalid_argument("--devices: empty item in '" + spec + "'");
    const std::size_t dash = part.find('-');
    auto number = [&](const std::string& s) {
      if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) {
        throw std::invalid_argument("--devices: '" + part + "' is not a device number or a range a-b");
      }
      return std::stoi(s);
    };
    if (dash == std::string::npos) {
      slots.push_back(std::to_string(number(part)));
      continue;
    }
    const int a = number(part.substr(0, dash)), b = number(part.substr(dash + 1));
    if (b < a) throw std::invalid_argument("--devices: range '" + part + "' goes backwards");
    for (int i = a; i <= b; ++i) slots.push_back(std::to_string(i));
  }
  return slots;
}

Orchestrator::Orchestrator(OrchestratorConfig cfg) : cfg_(std::move(cfg)) {}

namespace {

// Note [Orchestrator loop]: one thread reads every worker's stdout (Note [Reading workers]) and
// owns all state. It keeps each worker's queue `pipeline` deep (a retry runs alone), watches the
// running case's deadline, and turns a worker's death into CRASH or TIMEOUT for the case it had
// started, requeueing what it had not started. A crashed or timed-out case is retried alone (on a
// worker with nothing else queued: the dead one's replacement or another idle one) before its
// result is final.
class Loop {
 public:
  Loop(const OrchestratorConfig& cfg, const std::vector<std::string>& keys, const std::function<void(CaseDone&&)>& done)
      : cfg_(cfg), done_(done), remaining_(keys.size()) {
    for (const auto& k : keys) pending_.push_back(Item{k, 1, false, {}});
    const int n = std::max(1, std::min<int>(cfg_.workers, static_cast<int>(std::max<std::size_t>(keys.size(), 1))));
    workers_.resize(static_cast<std::size_t>(n));
    std::error_code ec;
    fs::create_directories(cfg_.log_dir, ec);
    for (int i = 0; i < n; ++i) {
      Worker& w = workers_[static_cast<std::size_t>(i)];
      w.index = i;
      if (!cfg_.slots.empty()) w.slot = cfg_.slots[static_cast<std::size_t>(i) % cfg_.slots.size()];
      start(w);
    }
  }

  std::string run(const std::function<bool()>& interrupted) {
    while (remaining_ > 0) {
      if (interrupted()) {
        stop_reason_ = "interrupted";
        break;
      }
      bool any_alive = false;
      for (Worker& w : workers_) {
        if (!w.alive && !w.retired && (!pending_.empty())) start(w);
        any_alive = any_alive || w.alive;
        send(w);
      }
      if (!any_alive) {
        if (stop_reason_.empty()) stop_reason_ = "no worker could be started";
        break;
      }
      std::vector<Event> batch = read_events(workers_, next_deadline());
      kill_overdue();
      for (Event& e : batch) handle(e);
      bool all_retired = true;
      for (const Worker& x : workers_) all_retired = all_retired && x.retired;
      if (all_retired) break;
    }
    stop_workers();
    if (remaining_ == 0) {
      // Every case has a result, but a slot may have been retired on the way: say so.
      if (!stop_reason_.empty() && stop_reason_ != "interrupted") {
        std::fprintf(stderr, "gauntlet: warning: %s\n", stop_reason_.c_str());
      }
      return "";
    }
    return stop_reason_.empty() ? "stopped" : stop_reason_;
  }

 private:
  void start(Worker& w) {
    ++w.generation;
    w.err_log = fs::path(cfg_.log_dir) / fmt::format("worker-{}-{}.stderr", w.index, w.generation);
    ChildSpec spec;
    spec.exe = cfg_.exe;
    spec.args = {"worker"};
    spec.args.insert(spec.args.end(), cfg_.worker_args.begin(), cfg_.worker_args.end());
    spec.err_file = w.err_log.string();
    spec.env.emplace_back(kStageFileEnv, stage_file(w));  // Note [Failing stage]
    spec.own_group = true;
    if (!cfg_.device_env.empty() && !w.slot.empty()) spec.env.emplace_back(cfg_.device_env, w.slot);
    // Every worker runs its cases with the same intra-op thread count, so that a case's results do
    // not depend on how many workers ran beside it (Note [Intra-op threads] in gauntlet/base/host.h):
    // 1, or the user's OMP_NUM_THREADS, which stands for the BLAS libraries' variables too
    // (libtorch takes its count from MKL_NUM_THREADS over OMP_NUM_THREADS).
    const std::string threads = std::to_string(case_intra_op_threads());
    for (const char* var : {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"}) {
      spec.env_defaults.emplace_back(var, threads);
    }
    w.proc = std::make_unique<ChildProcess>(spec);
    w.alive = true;
    w.ready = false;
    w.started = false;
    w.killed_for_timeout = false;
    w.unread.clear();
    w.out_eof = false;
  }

  void send(Worker& w) {
    if (!w.alive || !w.ready || !w.proc->in()) return;  // a broken stdin: its stdout reports the death
    while (!pending_.empty()) {
      if (!w.queued.empty() && (w.queued.front().alone || pending_.front().alone)) break;
      if (static_cast<int>(w.queued.size()) >= queue_depth(w)) break;
      Item it = std::move(pending_.front());
      pending_.pop_front();
      w.proc->in() << it.key << '\n';
      w.queued.push_back(std::move(it));
    }
    w.proc->in().flush();
  }

  // Note [Queue depth]: a worker is sent keys ahead of the case it runs, so that it never waits
  // for the orchestrator between cases (the round trip through a pipe and, on a host whose cores
  // the workers keep busy, the scheduler). But a key sent is that worker's: at the end of the run
  // a worker with a long queue runs alone while the others idle (with 16 quick cases queued per
  // worker, 2 workers on 2 cores finished 0.1 s apart on a 0.6 s run, ci/kernel_bench.sh). So the
  // queue holds about kQueuedWork of the worker's recent cost per case (a moving average), at most
  // `pipeline` keys and at least one: slow cases (5 ms and more) are never queued ahead.
  static constexpr double kQueuedWork = 0.005;
  int queue_depth(const Worker& w) const {
    const int most = std::max(1, cfg_.pipeline);
    if (w.case_s <= 0) return most;
    return static_cast<int>(std::clamp(kQueuedWork / w.case_s, 1.0, static_cast<double>(most)));
  }

  void finish(Worker& w, Item it, Outcome out) {
    out.key = it.key;
    out.attempt =
        it.attempt + out.attempt - 1;  // a collective group may have retried inside (Note [Transport retries])
    const bool flaky_inside = out.flaky;
    CaseDone d{it.key, std::move(out), w.slot, flaky_inside};
    if (it.attempt > 1 && !is_failure(d.outcome.status)) {
      d.flaky = true;
      d.outcome.reason += (d.outcome.reason.empty() ? "" : "; ") + ("flaky: attempt 1 was " + it.first_failure);
    }
    --remaining_;
    done_(std::move(d));
  }

  // The running case's timeout (OrchestratorConfig::case_timeout_s).
  double timeout_of(const Worker& w) const {
    if (!w.queued.empty()) {
      const auto it = cfg_.case_timeout_s.find(w.queued.front().key);
      if (it != cfg_.case_timeout_s.end()) return it->second;
    }
    return cfg_.timeout_s;
  }

  // A worker's end: the case it had started fails (or is retried); the rest go back in line.
  void on_exit(Worker& w) {
    w.alive = false;
    close_stdin(w);
    const int raw = w.proc ? w.proc->wait() : 0;
    const bool by_signal = WIFSIGNALED(raw);
    const std::string how = w.killed_for_timeout ? ""
                            : by_signal          ? signal_name(WTERMSIG(raw))
                                                 : fmt::format("exit {}", WEXITSTATUS(raw));
    const std::string log = stderr_tail_of(w.err_log, 8);
    std::optional<Item> running;
    const double timeout_s = timeout_of(w);
    if (w.started && !w.queued.empty()) {
      running = std::move(w.queued.front());
      w.queued.pop_front();
    }
    for (auto it = w.queued.rbegin(); it != w.queued.rend(); ++it) pending_.push_front(std::move(*it));
    w.queued.clear();
    w.started = false;
    if (running) {
      w.deaths_in_a_row = 0;
      Outcome out;
      out.status = w.killed_for_timeout ? Status::Timeout : Status::Crash;
      out.error = w.killed_for_timeout
                      ? fmt::format("timeout: no result after {:g} s; the worker was killed", timeout_s)
                      : fmt::format("worker died with {} while running the case", how);
      if (!log.empty()) out.error += std::string(kStderrMark) + log;
      // Note [Failing stage]: where the worker was when it died, and the fallback it had entered.
      const SharedStage at = read_shared_stage(stage_file(w));
      out.stage = stage_name(at.stage == Stage::None ? Stage::Op : at.stage);
      if (!at.fallback_op.empty()) out.fallback_ops = {at.fallback_op};
      if (running->attempt <= cfg_.retries) {
        Item retry{running->key, running->attempt + 1, true,
                   std::string(status_name(out.status)) + (how.empty() ? "" : " (" + how + ")")};
        pending_.push_front(std::move(retry));
      } else {
        finish(w, std::move(*running), std::move(out));
      }
    } else if (!w.killed_for_timeout) {
      ++w.deaths_in_a_row;
      if (w.deaths_in_a_row >= cfg_.max_consecutive_deaths) {
        w.retired = true;
        stop_reason_ = fmt::format("the worker{} died {} times in a row without finishing a case ({}){}",
                                   w.slot.empty() ? "" : " on slot " + w.slot, w.deaths_in_a_row, how,
                                   log.empty() ? "" : "; its last stderr: " + log);
      }
    }
  }

  // When to stop waiting for lines: in 200 ms, or at the first running case's deadline.
  Clock::time_point next_deadline() const {
    Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(200);
    for (const Worker& w : workers_) {
      if (w.alive && w.started) {
        deadline = std::min(deadline, w.started_at + std::chrono::duration_cast<Clock::duration>(
                                                         std::chrono::duration<double>(timeout_of(w))));
      }
    }
    return deadline;
  }

  // A case past its timeout: its worker's whole process group gets SIGKILL; its stdout ends.
  void kill_overdue() {
    const auto now = Clock::now();
    for (Worker& w : workers_) {
      if (w.alive && w.started && !w.killed_for_timeout &&
          now - w.started_at > std::chrono::duration<double>(timeout_of(w))) {
        w.killed_for_timeout = true;
        w.proc->kill();
      }
    }
  }

  // One line of a worker (Note [Worker protocol]), or its end.
  void handle(const Event& e) {
    Worker& w = workers_[static_cast<std::size_t>(e.worker)];
    if (e.eof) {
      on_exit(w);
      return;
    }
    WorkerMessage m;
    std::string unreadable;
    try {
      m = parse_worker_message(e.line);
    } catch (const std::exception& ex) {
      m.kind = WorkerMessageKind::Result;
      unreadable = ex.what();
    }
    if (m.kind == WorkerMessageKind::Hello) {
      w.ready = true;
    } else if (m.kind == WorkerMessageKind::Fatal) {
      stop_reason_ = "a worker could not start: " + (m.error.empty() ? std::string("?") : m.error);
      w.retired = true;
    } else if (m.kind == WorkerMessageKind::Start) {
      w.started = true;
      w.started_at = Clock::now();
    } else if (m.kind == WorkerMessageKind::Result && !w.queued.empty()) {
      Item it = std::move(w.queued.front());
      w.queued.pop_front();
      w.started = false;
      const double took = std::chrono::duration<double>(Clock::now() - w.started_at).count();
      w.case_s = w.case_s <= 0 ? took : 0.75 * w.case_s + 0.25 * took;
      w.deaths_in_a_row = 0;
      Outcome out = std::move(m.outcome);
      if (!unreadable.empty()) {
        out = Outcome{};
        out.status = Status::Error;
        out.error = "unreadable worker result: " + unreadable;
      }
      finish(w, std::move(it), std::move(out));
    }
    // Anything else on stdout is not the protocol; ignore it rather than guess.
  }

  // The end: a worker between cases exits on EOF; one with cases queued, or any when the run
  // stopped, is killed with its group. Every worker is told before any is waited for: a worker's
  // exit takes a while (libtorch unregisters its kernels: 0.15 s here), and one after the other
  // that added up with each worker.
  void stop_workers() {
    for (Worker& w : workers_) {
      if (!w.alive) continue;
      close_stdin(w);
      if (!w.queued.empty() || !stop_reason_.empty()) w.proc->kill();
    }
    for (Worker& w : workers_) {
      if (w.alive) w.proc->wait();
    }
  }

  const OrchestratorConfig& cfg_;
  const std::function<void(CaseDone&&)>& done_;
  std::deque<Item> pending_;
  std::vector<Worker> workers_;
  std::size_t remaining_;
  std::string stop_reason_;
};

}  // namespace

std::string Orchestrator::run(const std::vector<std::string>& keys, const std::function<void(CaseDone&&)>& done,
                              const std::function<bool()>& interrupted) {
  // A worker may die between our writes: its stdin then fails with EPIPE (reading its stdout reports the
  // death) instead of SIGPIPE killing the orchestrator.
  std::signal(SIGPIPE, SIG_IGN);
  Loop loop(cfg_, keys, done);
  return loop.run(interrupted);
}

}  // namespace gauntlet
