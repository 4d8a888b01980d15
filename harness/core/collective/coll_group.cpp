// Note [Collective groups]: a collective case runs as a group of `world` processes, `gauntlet
// rank ...`, one per rank, started by whoever runs the case (a worker, `run --in-process`,
// `repro`):
//   - the launcher serves a TCPStore on 127.0.0.1, on a port the OS picks (port 0), for this group
//     only; the ranks meet there (and Gloo exchanges its addresses through it);
//   - each rank answers one outcome line on its stdout (a file: no pipe to drain while waiting),
//     its stderr goes to a file whose last line explains a death;
//   - the launcher polls the ranks until all have exited or the group's timeout has passed. A rank
//     killed by a signal, or exiting without an answer, is a CRASH; the others, which would wait
//     on it, get a second to notice, then are killed. At the deadline every rank still running is
//     killed and named: TIMEOUT. The ranks' own collective timeout is half the group's, so that
//     ranks merely waiting on a hung one time out, answer ERROR and exit, and only the hung ones
//     are still running at the deadline: those are the ones named;
//   - every rank process is reaped before the case returns, and the store (its listening socket)
//     is destroyed: the next group starts clean, with no process or port left over. Ranks also ask
//     the kernel to kill them if the launcher dies (PR_SET_PDEATHSIG, rank_process in collective.cpp).
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <tuple>

#include "gauntlet/core/collective/collective.h"
#include "gauntlet/core/session/orchestrator.h"
#include "gauntlet/run/child_process.h"
#include "gauntlet/run/outcome_json.h"

namespace gauntlet {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

struct Rank {
  int rank = 0;
  fs::path out, err;
  std::unique_ptr<ChildProcess> child;
  bool exited = false, killed = false;
  bool joined = false;  // had joined the group when killed
  int signal = 0, code = 0;
  std::optional<Outcome> outcome;
};

// SIGKILL and reap: a rank killed and not reaped would stay a zombie of the worker for the rest of
// its life.
void kill_and_reap(ChildProcess& c) {
  c.kill();
  c.wait();
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The last non-empty line of a file (what a dying process said last).
std::string last_line(const fs::path& p) {
  std::istringstream in(read_file(p));
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last.size() > 300 ? last.substr(0, 300) + "..." : last;
}

int severity(Status s) {
  switch (s) {
    case Status::Crash:
      return 6;
    case Status::Timeout:
      return 5;
    case Status::Error:
      return 4;
    case Status::Fail:
      return 3;
    case Status::Unsupported:
      return 2;
    default:
      return 1;
  }
}

std::string ranks_text(const std::vector<int>& ranks) {
  return fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", fmt::join(ranks, ", "));
}

// A rank that lost its connection to a peer: Gloo's "Connection closed by peer" / "reset by
// peer" / "Broken pipe" over loopback.
bool transport_error(const std::string& error) {
  for (const char* s : {"Connection closed by peer", "Connection reset by peer", "Broken pipe"}) {
    if (error.find(s) != std::string::npos) return true;
  }
  return false;
}

// Starts the group's `world` rank processes, their output in files of `dir` named after `stem`;
// on a failure to start one, kills those started and returns why.
std::optional<std::string> start_ranks(std::vector<Rank>& ranks, const CaseKey& key, const GroupConfig& cfg,
                                       const fs::path& dir, const std::string& stem, int port) {
  const double rank_timeout = cfg.timeout_s / 2;
  for (int r = 0; r < key.world; ++r) {
    Rank& rk = ranks[static_cast<std::size_t>(r)];
    rk.rank = r;
    rk.out = dir / fmt::format("{}-r{}.out", stem, r);
    rk.err = dir / fmt::format("{}-r{}.err", stem, r);
    std::vector<std::string> args{"rank",
                                  "--key",
                                  key.str(),
                                  "--rank",
                                  std::to_string(r),
                                  "--port",
                                  std::to_string(port),
                                  "--store-timeout",
                                  fmt::format("{:g}", rank_timeout),
                                  "--startup-timeout",
                                  fmt::format("{:g}", cfg.startup_timeout_s)};
    args.insert(args.end(), cfg.rank_args.begin(), cfg.rank_args.end());
    try {
      ChildSpec spec;
      spec.exe = cfg.exe;
      spec.args = std::move(args);
      spec.pipes = false;
      spec.out_file = rk.out.string();
      spec.err_file = rk.err.string();
      rk.child = std::make_unique<ChildProcess>(spec);
    } catch (const std::exception& e) {
      for (Rank& started : ranks) {
        if (started.child && started.child->running()) kill_and_reap(*started.child);
      }
      return fmt::format("rank {}: cannot start {}: {}", r, cfg.exe, e.what());
    }
  }
  return std::nullopt;
}

// A rank that has exited: its exit status and the outcome it printed, if any.
void collect_exit(Rank& rk) {
  rk.exited = true;
  const int status = rk.child->wait();
  if (WIFSIGNALED(status))
    rk.signal = WTERMSIG(status);
  else if (WIFEXITED(status))
    rk.code = WEXITSTATUS(status);
  const std::string text = read_file(rk.out);
  if (rk.signal == 0 && !text.empty()) {
    try {
      rk.outcome = outcome_from_json(nlohmann::json::parse(text.substr(0, text.find('\n'))));
    } catch (const std::exception&) {
    }
  }
}

struct GroupEnd {
  bool timed_out = false;
  bool never_assembled = false;
};

// Waits for every rank to exit, or kills those left at the deadline (Note [Group start-up]).
GroupEnd wait_for_ranks(std::vector<Rank>& ranks, c10d::TCPStore& store, const GroupConfig& cfg, int world) {
  // Note [Group start-up]: starting `world` processes that each load libtorch and a backend is the
  // host's business, not the case's: on a loaded host it alone can take longer than a short
  // collective timeout. So the case's timeout counts from the moment every rank has joined (the
  // ranks wait for each other before Gloo's rendezvous, collective.cpp, and count themselves in
  // the store); the start-up has its own limit, startup_timeout_s, past which the ranks that never
  // joined are named.
  const auto start = Clock::now();
  const auto startup_deadline =
      start + std::chrono::milliseconds(static_cast<std::int64_t>(cfg.startup_timeout_s * 1000));
  std::optional<Clock::time_point> deadline;  // once the group has assembled
  const auto assembled = [&] {
    if (!deadline && store.add("gauntlet/joined", 0) >= world) {
      deadline = Clock::now() + std::chrono::milliseconds(static_cast<std::int64_t>(cfg.timeout_s * 1000));
    }
    return deadline.has_value();
  };
  std::optional<Clock::time_point> grace_until;
  GroupEnd end;
  while (true) {
    bool all_done = true;
    for (Rank& rk : ranks) {
      if (rk.exited) continue;
      if (rk.child->running()) {
        all_done = false;
        continue;
      }
      collect_exit(rk);
      // A rank that died, or that gave up before the group assembled: the others would wait on
      // it until their own timeout. A second to see whether they notice by themselves, then the
      // group goes down.
      if ((!rk.outcome || !assembled()) && !grace_until) grace_until = Clock::now() + std::chrono::seconds(1);
    }
    if (all_done) break;
    const bool ready = assembled();
    const auto now = Clock::now();
    const bool past = ready ? now >= *deadline : now >= startup_deadline;
    if (past || (grace_until && now >= *grace_until)) {
      end.timed_out = past;
      for (Rank& rk : ranks) {
        if (rk.exited) continue;
        kill_and_reap(*rk.child);
        rk.exited = rk.killed = true;
        rk.joined = store.check({fmt::format("gauntlet/joined/{}", rk.rank)});
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  end.never_assembled = !deadline;
  for (Rank& rk : ranks) {
    if (rk.child->running()) {
      kill_and_reap(*rk.child);
    } else {
      rk.child->wait();
    }
  }
  return end;
}

// The group's outcome from its ranks': root causes first (ranks that died, then ranks killed at
// the deadline), else the worst rank's; timings from the slowest rank.
void judge_group(Outcome& out, const std::vector<Rank>& ranks, const GroupEnd& end, const GroupConfig& cfg, int world,
                 int port) {
  // Aggregate. Root causes first: ranks that died, then ranks killed at the deadline (hung).
  std::vector<int> crashed, hung, failing;
  // Ranks that died the same way are named together: "ranks 0, 1: exit code 2 without a result (...)".
  std::vector<std::pair<std::string, std::vector<int>>> deaths;
  for (const Rank& rk : ranks) {
    if (rk.killed && end.timed_out) {
      // Before the group assembled, the ranks that joined only waited for the others.
      if (!(end.never_assembled && rk.joined)) hung.push_back(rk.rank);
    } else if (!rk.outcome && !rk.killed) {
      crashed.push_back(rk.rank);
      const std::string said = last_line(rk.err);
      const std::string how =
          (rk.signal ? signal_name(rk.signal) : fmt::format("exit code {} without a result", rk.code)) +
          (said.empty() ? "" : " (" + said + ")");
      auto same = std::find_if(deaths.begin(), deaths.end(), [&](const auto& d) { return d.first == how; });
      if (same == deaths.end()) {
        deaths.push_back({how, {rk.rank}});
      } else {
        same->second.push_back(rk.rank);
      }
    }
  }
  std::string crash_text;
  for (const auto& [how, who] : deaths)
    crash_text += fmt::format("{}{}: {}", crash_text.empty() ? "" : "; ", ranks_text(who), how);
  const Outcome* worst = nullptr;
  const Outcome* slowest = nullptr;
  for (const Rank& rk : ranks) {
    if (!rk.outcome) continue;
    const Outcome& o = *rk.outcome;
    if (severity(o.status) > 1) failing.push_back(rk.rank);
    // Among equals, a rank's own problem before a lost connection (which only echoes a peer's).
    const auto rank_of = [](const Outcome& x) {
      return std::make_tuple(severity(x.status), !transport_error(x.error), x.metrics.max_abs_err);
    };
    if (!worst || rank_of(o) > rank_of(*worst)) worst = &o;
    if (!slowest || o.timing.median_us > slowest->timing.median_us) slowest = &o;
    out.peak_mem_bytes = std::max(out.peak_mem_bytes, o.peak_mem_bytes);
  }
  if (slowest) {
    out.timing = slowest->timing;
    out.sim_time_us = slowest->sim_time_us;
    out.algbw_gbps = slowest->algbw_gbps;
    out.busbw_gbps = slowest->busbw_gbps;
  }
  if (worst) {
    out.metrics = worst->metrics;
    out.rtol = worst->rtol;
    out.atol = worst->atol;
    out.tolerance_profile = worst->tolerance_profile;
  }
  const std::string store_note = fmt::format(" (group of {} on 127.0.0.1:{}, torn down)", world, port);
  if (!crashed.empty()) {
    out.status = Status::Crash;
    out.error = crash_text;
    if (!failing.empty()) out.error += fmt::format("; {} failed after it", ranks_text(failing));
    out.error += store_note;
  } else if (end.timed_out) {
    out.status = Status::Timeout;
    out.error = end.never_assembled ? fmt::format("{} did not start and join the group within {:g} s", ranks_text(hung),
                                                  cfg.startup_timeout_s)
                                    : fmt::format("{} did not finish within {:g} s", ranks_text(hung), cfg.timeout_s);
    if (!failing.empty()) out.error += fmt::format("; {} gave up waiting", ranks_text(failing));
    out.error += store_note;
  } else if (worst && severity(worst->status) > 1) {
    out.status = worst->status;
    // The failing ranks, then the worst one's message (which starts with "rank <r>: ").
    out.error = fmt::format("{} {}: {}", ranks_text(failing), status_name(worst->status), worst->error);
  } else {
    out.status = Status::Pass;
  }
}

Outcome run_group_once(const CaseKey& key, const GroupConfig& cfg) {
  Outcome out;
  out.key = key.str();
  const int world = key.world;

  // The store, for this group only: the OS picks a free port.
  c10d::TCPStoreOptions so;
  so.port = 0;
  so.isServer = true;
  so.waitWorkers = false;
  so.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(cfg.timeout_s * 1000));
  auto store = std::make_unique<c10d::TCPStore>("127.0.0.1", so);
  const int port = store->getPort();

  fs::path dir = cfg.log_dir.empty() ? fs::temp_directory_path() : fs::path(cfg.log_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string stem = fmt::format("gauntlet-rank-{}-{}", ::getpid(), port);
  std::vector<Rank> ranks(static_cast<std::size_t>(world));
  if (auto failed = start_ranks(ranks, key, cfg, dir, stem, port)) {
    out.status = Status::Error;
    out.error = *failed;
    return out;
  }
  const GroupEnd end = wait_for_ranks(ranks, *store, cfg, world);
  store.reset();  // closes the listening socket: the port is free again
  judge_group(out, ranks, end, cfg, world, port);
  for (const Rank& rk : ranks) {
    fs::remove(rk.out, ec);
    fs::remove(rk.err, ec);
  }
  return out;
}

}  // namespace

// Note [Transport retries]: a group whose ranks all failed only on a lost loopback connection
// (Gloo's TCP pairs now and then report "Connection closed by peer" on a loaded host, a known
// flake of Gloo's own tests) runs once more, on a fresh store and port. A retry that passes is
// recorded as flaky, with the first attempt's error in `reason`: visible in every report, never
// hidden; a retry that fails again stands as the result.
Outcome run_collective_group(const CaseKey& key, const GroupConfig& cfg) {
  Outcome first = run_group_once(key, cfg);
  if (first.status != Status::Error || !transport_error(first.error)) return first;
  Outcome again = run_group_once(key, cfg);
  again.attempt = first.attempt + 1;
  if (!is_failure(again.status)) {
    again.flaky = true;
    again.reason += (again.reason.empty() ? "" : "; ") + ("flaky: attempt 1 was ERROR: " + first.error);
  }
  return again;
}

}  // namespace gauntlet
