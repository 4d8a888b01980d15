// Note [Confirmation]: two runs taken hours apart differ by more than their releases: the host's
// load, clock and caches drift, and a significance test on each run's repetitions cannot see it.
// Measured on a 2-core VM (ci/host_noise_bench.sh), clean runs of one release differ by -27% to
// +12% (5th to 95th percentile of the per-case ratio) for 1-10 ms kernels, and one process can
// be 20-40% slower than another on the same case for its whole life (where its arrays landed).
// So:
//   - the screen (the comparison of the two stored runs) keeps every change past half the
//     minimum effect with a Mann-Whitney p below 0.05 (CompareOptions::screen_effect,
//     screen_significance): a case whose baseline run was unluckily slow or noisy shows less
//     than its true change;
//   - each flagged case then runs `rounds` times against both releases, in two worker processes
//     per round, one per release (backend and environment of each given on the command line),
//     started fresh every round and both pinned to the same CPU (the CPUs taken in turn round by
//     round), so that neither a process's placement nor a slow CPU decides (measured: with the
//     two workers free to land on different CPUs, 2.9% of a clean suite was "confirmed"; pinned
//     together, 0.4%), alternating which goes first (A B, B A, ...) so that drift during a round
//     falls on both alike, as DuckDB's regression runner does;
//   - the processes are the units: each gives the median of its repetitions, and a flag is kept
//     when the candidate's processes differ from the baseline's in the flagged direction by a
//     one-sided Mann-Whitney test at 0.2% and the ratio of their medians is past the minimum
//     effect. The level sets the false rate: the wide screen passes 100-200 of 240 unchanged
//     cases on a noisy 2-core VM, and at 1% two of them were confirmed (0.83%, measured); at
//     0.2% that is 0.2-0.4 expected per run. Why not "most rounds agree": a process can be 30-60% slower than its
//     siblings for its whole life (measured: 5 of 22 fresh processes timing op/exp/f32/1024x1024, pinned to one CPU,
//     at 9.8-12.7 ms against 7.5-8.2 ms; the physical pages it got, against the caches), so a round's direction is
//     decided by whichever side drew such a process. Under no change, "all 6 rounds one way or 5 of 6 past twice the
//     effect" then kept up to a tenth of the noisy cases the screen passed (1.7% of a clean suite "confirmed" on a
//     noisy day), and a real 20% slowdown lost a round to every slow baseline process. Ranks of process medians give a
//     test whose false rate is its level whatever the outliers, and 16 processes a side reach p < 0.0001 when the bulk
//     moved. The finding carries the confirmed figures and that p-value.
// Simulated-time findings are deterministic and need no confirmation.
#include "gauntlet/run/confirm.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "gauntlet/analysis/stats.h"
#include "gauntlet/base/error.h"
#include "gauntlet/run/child_process.h"
#include "gauntlet/run/worker_protocol.h"

namespace gauntlet {

namespace {

// A confirmation's one-sided significance level over the processes' medians (Note [Confirmation]).
constexpr double kConfirmSignificance = 0.002;

// One `gauntlet worker` of one release, asked one case at a time.
class ReleaseWorker {
 public:
  // `core`: the CPU the worker runs on (-1: any).
  ReleaseWorker(const std::string& name, const std::string& backend, const std::vector<std::string>& env_pairs,
                const std::string& suites_dir, const TimingOptions& t, int core)
      : name_(name) {
    ChildSpec spec;
    spec.exe = self_exe();
    for (const std::string& kv : env_pairs) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) throw Error(fmt::format("--{}-env: '{}' is not NAME=VALUE", name, kv));
      spec.env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    WorkerSettings settings;
    settings.backend = backend;
    settings.suites_dir = suites_dir;
    settings.timing = t;
    spec.args = worker_args(settings);
    spec.args.insert(spec.args.begin(), "worker");
    spec.core = core;
    proc_ = std::make_unique<ChildProcess>(spec);
    const WorkerMessage hello = next();
    if (hello.kind != WorkerMessageKind::Hello) {
      throw Error(fmt::format("--confirm: the {} worker ({}) could not start: {}", name_, backend,
                              hello.error.empty() ? "no hello" : hello.error));
    }
  }
  ~ReleaseWorker() {
    proc_->close_in();
    proc_->wait();
  }
  ReleaseWorker(const ReleaseWorker&) = delete;
  ReleaseWorker& operator=(const ReleaseWorker&) = delete;

  Outcome run(const std::string& key) {
    proc_->in() << key << '\n' << std::flush;
    for (;;) {
      WorkerMessage m = next();
      if (m.kind == WorkerMessageKind::Result) return std::move(m.outcome);
      if (m.kind != WorkerMessageKind::Start)
        throw Error(fmt::format("--confirm: the {} worker stopped on {}", name_, key));
    }
  }

 private:
  WorkerMessage next() {
    std::string line;
    while (std::getline(proc_->out(), line)) {
      WorkerMessage m = parse_worker_message(line);
      if (m.kind != WorkerMessageKind::Unreadable) return m;
    }
    throw Error(fmt::format("--confirm: the {} worker died", name_));
  }
  std::string name_;
  std::unique_ptr<ChildProcess> proc_;
};

}  // namespace

ConfirmResult confirm_speed(RunComparison& c, const CompareOptions& opt, const ConfirmOptions& o) {
  ConfirmResult result;
  std::vector<Finding*> todo;
  for (Finding& f : c.findings) {
    // Host-time findings carry a p-value; simulated-time ones do not (Note [Confirmation]).
    if ((f.change == Change::Slower || f.change == Change::Faster) && f.p_value >= 0 && f.key.rfind("suite:", 0) != 0) {
      todo.push_back(&f);
    }
  }
  if (todo.empty()) return result;
  // Per finding: each round's log ratio, and each process's median.
  struct Measured {
    std::vector<double> log_ratios, medians_a, medians_b;
  };
  std::vector<Measured> m(todo.size());
  // The CPUs this process may use: each round pins both of its workers to one of them, in turn.
  std::vector<int> cores;
  {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0) {
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &set)) cores.push_back(cpu);
      }
    }
  }
  for (int round = 0; round < o.rounds; ++round) {
    // Fresh processes every round, both on the same CPU: a CPU can be slower than another for
    // minutes (a busy sibling thread on the host), and a process's placement in memory biases it
    // for its whole life; neither may decide a verdict.
    const int core = cores.empty() ? -1 : cores[static_cast<std::size_t>(round) % cores.size()];
    ReleaseWorker a("baseline", o.baseline_backend, o.baseline_env, o.suites_dir, o.timing, core);
    ReleaseWorker b("candidate", o.candidate_backend, o.candidate_env, o.suites_dir, o.timing, core);
    for (std::size_t i = 0; i < todo.size(); ++i) {
      std::vector<double> sa, sb;
      auto take = [&](ReleaseWorker& w, std::vector<double>& into) {
        const Outcome out = w.run(todo[i]->key);
        into.insert(into.end(), out.timing.samples_us.begin(), out.timing.samples_us.end());
      };
      if ((round + static_cast<int>(i)) % 2 == 0) {
        take(a, sa);
        take(b, sb);
      } else {
        take(b, sb);
        take(a, sa);
      }
      if (sa.empty() || sb.empty()) continue;
      const double ma = stats::median(sa), mb = stats::median(sb);
      if (!(ma > 0 && mb > 0)) continue;
      m[i].log_ratios.push_back(std::log(mb / ma));
      m[i].medians_a.push_back(ma);
      m[i].medians_b.push_back(mb);
    }
  }
  std::vector<const Finding*> dropped;
  const double effect = std::log(1 + opt.min_effect);
  for (std::size_t i = 0; i < todo.size(); ++i) {
    Finding* f = todo[i];
    const Measured& x = m[i];
    const bool slower = f->change == Change::Slower;
    const int rounds = static_cast<int>(x.log_ratios.size());
    int agree = 0;
    for (double l : x.log_ratios) agree += slower ? l > 0 : l < 0;
    // The processes' medians (Note [Confirmation]): their ratio, and a one-sided rank test.
    const double ma = rounds ? stats::median(x.medians_a) : 0.0, mb = rounds ? stats::median(x.medians_b) : 0.0;
    const double ratio = rounds && ma > 0 ? mb / ma : 1.0;
    const bool flagged_way = slower ? ratio > 1 : ratio < 1;
    const double p = rounds && flagged_way ? stats::mann_whitney_u(x.medians_b, x.medians_a).p_value / 2 : 1.0;
    const bool kept = rounds >= 6 && flagged_way && p <= kConfirmSignificance && std::abs(std::log(ratio)) > effect;
    if (kept) {
      ++result.confirmed;
      f->detail += fmt::format(
          "; confirmed A/B over {} rounds of fresh processes ({} of {} {}): {:.4g} µs -> {:.4g} µs ({:+.1f}%, p "
          "{:.2g})",
          rounds, agree, rounds, slower ? "slower" : "faster", ma, mb, (ratio - 1) * 100, p);
      f->baseline = ma;
      f->candidate = mb;
      f->ratio = ratio;
      f->p_value = p;
    } else {
      ++result.dropped;
      dropped.push_back(f);
      if (o.verbose) {
        std::cerr << fmt::format("confirm: {} not confirmed ({:+.1f}%, {} of {} rounds {}): dropped\n", f->key,
                                 (ratio - 1) * 100, agree, rounds, slower ? "slower" : "faster");
      }
    }
  }
  c.findings.erase(
      std::remove_if(c.findings.begin(), c.findings.end(),
                     [&](const Finding& f) { return std::find(dropped.begin(), dropped.end(), &f) != dropped.end(); }),
      c.findings.end());
  return result;
}

}  // namespace gauntlet
