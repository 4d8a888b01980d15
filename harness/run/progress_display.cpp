// The progress display of `gauntlet run` (gauntlet/run/reporters.h), a run listener: on a terminal
// one live line (done/total, cases/s, ETA, counts) with failing keys printed above it as they
// come; otherwise a plain line every 10 s. The rate and the ETA come from Note [Progress model]
// (progress.h): a recent window, the remaining cases weighed by their expected cost.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "gauntlet/run/progress.h"
#include "gauntlet/run/reporters.h"
#include "gauntlet/run/suite.h"

namespace gauntlet {

namespace {

using Clock = std::chrono::steady_clock;

class ProgressDisplay final : public RunListener {
 public:
  explicit ProgressDisplay(std::function<double(const CaseKey&)> expected_us) : expected_us_(std::move(expected_us)) {}

  void run_started(const RunContext&, const std::vector<const Case*>& todo) override {
    double cost = 0;
    for (const Case* c : todo) cost += expected_us_(c->key);
    model_.emplace(todo.size(), cost);
    for (const Case* c : todo) model_->expect(group_of(*c), expected_us_(c->key));
    t0_ = last_ = Clock::now();
  }

  void case_finished(const Case& c, const Outcome& o) override {
    if (!model_) return;
    const auto now = Clock::now();
    if (!first_) first_ = now;
    end_ = now;
    model_->done(seconds(now), expected_us_(c.key), group_of(c),
                 o.status == Status::Crash || o.status == Status::Timeout);
    ++counts_[o.status];
    if (tty_) {
      if (is_failure(o.status)) fmt::print(stderr, "\r\033[K{:<8} {}\n", status_name(o.status), o.key);
      if (now - last_ > std::chrono::milliseconds(100) || model_->done_cases() == model_->total_cases()) {
        fmt::print(stderr, "\r\033[K{}", line(now));
        last_ = now;
      }
    } else if (now - last_ > std::chrono::seconds(10)) {
      fmt::print(stderr, "progress: {}\n", line(now));
      last_ = now;
    }
    std::fflush(stderr);
  }

  // The last line, in both modes: where the time went, the start (from the run's start, the suite
  // loaded, to the first result: the workers' start and the first case) apart from the rest, whose
  // rate is the run's own (ci/kernel_bench.sh reads it).
  void cases_ended() override {
    if (tty_) fmt::print(stderr, "\r\033[K");
    if (!model_ || !first_) return;
    const std::size_t n = model_->done_cases();
    const double rest = std::chrono::duration<double>(end_ - *first_).count();
    std::string rate;
    if (n > 1 && rest > 0) rate = fmt::format(" ({:.4g} cases/s)", static_cast<double>(n - 1) / rest);
    fmt::print(stderr, "progress: {} cases in {:.3f} s: the first result after {:.3f} s, the other {} in {:.3f} s{}\n",
               n, seconds(end_), seconds(*first_), n - 1, rest, rate);
    std::fflush(stderr);
  }

 private:
  std::function<double(const CaseKey&)> expected_us_;
  // Cases that tend to cost alike (Note [Progress model], groups): one op (model, collective) in
  // one dtype.
  static std::string group_of(const Case& c) {
    return fmt::format("{}/{}/{}", c.key.kind, c.key.target, dtype_name(c.key.dtype));
  }
  double seconds(Clock::time_point t) const { return std::chrono::duration<double>(t - t0_).count(); }
  std::string line(Clock::time_point now) const {
    std::string counts;
    for (const auto& [st, n] : counts_) counts += fmt::format(" {} {}", status_name(st), n);
    const auto eta = model_->eta(seconds(now));
    return fmt::format("[{}/{}] {:.3g} cases/s, ETA {},{}", model_->done_cases(), model_->total_cases(),
                       model_->rate(seconds(now)), eta ? fmt::format("{:.0f} s", *eta) : std::string("?"), counts);
  }

  std::optional<ProgressModel> model_;
  const bool tty_ = isatty(STDERR_FILENO);
  Clock::time_point t0_, last_, end_;
  std::optional<Clock::time_point> first_;
  std::map<Status, std::size_t> counts_;
};

}  // namespace

std::unique_ptr<RunListener> progress_display(std::function<double(const CaseKey&)> expected_case_us) {
  return std::make_unique<ProgressDisplay>(std::move(expected_case_us));
}

}  // namespace gauntlet
