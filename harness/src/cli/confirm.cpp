// compare --confirm: flagged host-time speed changes re-measured A B B A ... against both releases.
//
// Note [Confirmation]: two runs taken hours apart differ by more than their releases: the host's
// load, clock and caches drift, and a significance test on each run's repetitions cannot see it.
// Confirmation re-runs each flagged case now, in two worker processes, one per release (backend
// and environment of each given on the command line), alternating which goes first (A B, B A,
// A B, ...) so that drift during the confirmation falls on both alike, as DuckDB's regression
// runner does. A flag is kept only when the pooled repetitions are again significant (Mann-Whitney
// U) and past the minimum effect, in the same direction; the finding then carries the confirmed
// figures. Simulated-time findings are deterministic and need no confirmation.
#include <fmt/format.h>

#include <boost/process.hpp>
#include <iostream>

#include "cli.h"
#include "gauntlet/outcome_json.h"
#include "gauntlet/stats.h"

namespace bp = boost::process;

namespace gauntlet::cli {

namespace {

// One `gauntlet worker` of one release, asked one case at a time.
class ReleaseWorker {
 public:
  ReleaseWorker(const std::string& name, const std::string& backend, const std::vector<std::string>& env_pairs,
                const std::string& suites_dir, const TimingOptions& t)
      : name_(name) {
    bp::environment env = boost::this_process::environment();
    for (const std::string& kv : env_pairs) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) throw UsageError(fmt::format("--{}-env: '{}' is not NAME=VALUE", name, kv));
      env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    std::vector<std::string> args = {"worker", "--backend", backend, "--reps", std::to_string(t.reps), "--min-time",
                                     fmt::format("{}", t.min_time_ms), "--max-time", fmt::format("{}", t.max_time_ms),
                                     "--warmup", std::to_string(t.warmup)};
    if (!suites_dir.empty()) args.insert(args.end(), {"--suites-dir", suites_dir});
    child_ = bp::child(self_exe(), bp::args(args), bp::std_in < in_, bp::std_out > out_, env);
    const WorkerMessage hello = next();
    if (hello.type != "hello") {
      throw UsageError(fmt::format("--confirm: the {} worker ({}) could not start: {}", name_, backend,
                                   hello.error.empty() ? "no hello" : hello.error));
    }
  }
  ~ReleaseWorker() {
    in_.pipe().close();
    std::error_code ec;
    child_.wait(ec);
  }
  ReleaseWorker(const ReleaseWorker&) = delete;
  ReleaseWorker& operator=(const ReleaseWorker&) = delete;

  Outcome run(const std::string& key) {
    in_ << key << '\n' << std::flush;
    for (;;) {
      WorkerMessage m = next();
      if (m.type == "result") return std::move(m.outcome);
      if (m.type != "start") throw UsageError(fmt::format("--confirm: the {} worker stopped on {}", name_, key));
    }
  }

 private:
  WorkerMessage next() {
    std::string line;
    while (std::getline(out_, line)) {
      WorkerMessage m = parse_worker_message(line);
      if (!m.type.empty()) return m;
    }
    throw UsageError(fmt::format("--confirm: the {} worker died", name_));
  }
  std::string name_;
  bp::opstream in_;
  bp::ipstream out_;
  bp::child child_;
};

}  // namespace

ConfirmResult confirm_speed(RunComparison& c, const ::gauntlet::CompareOptions& opt, const ConfirmOptions& o) {
  ConfirmResult result;
  std::vector<Finding*> todo;
  for (Finding& f : c.findings) {
    // Host-time findings carry a p-value; simulated-time ones do not (Note [Confirmation]).
    if ((f.change == Change::Slower || f.change == Change::Faster) && f.p_value >= 0 && f.key.rfind("suite:", 0) != 0) {
      todo.push_back(&f);
    }
  }
  if (todo.empty()) return result;
  ReleaseWorker a("baseline", o.baseline_backend, o.baseline_env, o.suites_dir, o.timing);
  ReleaseWorker b("candidate", o.candidate_backend, o.candidate_env, o.suites_dir, o.timing);
  std::vector<const Finding*> dropped;
  for (Finding* f : todo) {
    std::vector<double> sa, sb;
    for (int round = 0; round < o.rounds; ++round) {
      auto take = [&](ReleaseWorker& w, std::vector<double>& into) {
        const Outcome out = w.run(f->key);
        into.insert(into.end(), out.timing.samples_us.begin(), out.timing.samples_us.end());
      };
      if (round % 2 == 0) {
        take(a, sa);
        take(b, sb);
      } else {
        take(b, sb);
        take(a, sa);
      }
    }
    const double ma = stats::median(sa), mb = stats::median(sb);
    const double ratio = mb / ma;
    const double p = stats::mann_whitney_u(sb, sa).p_value;
    const bool slower = f->change == Change::Slower;
    const double effect = 1 + opt.min_effect;
    const bool kept = ma > 0 && p < opt.significance && (slower ? ratio > effect : ratio < 1 / effect);
    if (kept) {
      ++result.confirmed;
      f->detail += fmt::format("; confirmed A/B over {} rounds: {:.4g} µs -> {:.4g} µs ({:+.1f}%, p {:.2g})", o.rounds,
                               ma, mb, (ratio - 1) * 100, p);
      f->baseline = ma;
      f->candidate = mb;
      f->ratio = ratio;
      f->p_value = p;
    } else {
      ++result.dropped;
      dropped.push_back(f);
      if (o.verbose) {
        std::cerr << fmt::format("confirm: {} not confirmed ({:+.1f}%, p {:.2g}): dropped\n", f->key, (ratio - 1) * 100, p);
      }
    }
  }
  c.findings.erase(std::remove_if(c.findings.begin(), c.findings.end(),
                                  [&](const Finding& f) {
                                    return std::find(dropped.begin(), dropped.end(), &f) != dropped.end();
                                  }),
                   c.findings.end());
  return result;
}

}  // namespace gauntlet::cli
