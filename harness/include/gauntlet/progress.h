// Note [Progress model]: what the progress line says about the rest of a run. Cases differ in
// cost by orders of magnitude (a 0-d add against a 1M-element conv, a crash that costs a worker
// restart, a timeout that costs its whole limit), so neither the mean rate since the start nor a
// plain count of cases predicts the remaining time. The model weighs each case by its expected
// cost (estimated_case_us, as `plan` splits shards) and measures how fast the run is getting
// through that cost over a recent window (the last 30 s, at least 8 completions): the ETA is the
// remaining expected cost at that speed. A run whose cases turn slow (the last third crashing)
// sees its ETA grow within the window, not as the mean since the start slowly catches up. Time is
// passed in, so the model is tested with synthetic clocks (progress_test.cpp).
#pragma once

#include <cstddef>
#include <deque>
#include <optional>

namespace gauntlet {

class ProgressModel {
 public:
  // `total_cost`: the expected cost of every case of the run (any unit; the sum of what done()
  // will be given for each); `cases`: how many.
  ProgressModel(std::size_t cases, double total_cost);
  // A case finished at `t` seconds since the start, of expected cost `cost`.
  void done(double t, double cost);
  std::size_t done_cases() const { return done_; }
  std::size_t total_cases() const { return cases_; }
  // Cases per second over the recent window (since the start while it has fewer than 2 points);
  // a stall since the last completion lowers it.
  double rate(double now) const;
  // Seconds left: the remaining expected cost at the window's cost per second; nullopt until
  // two cases finished (the first also paid for start-up).
  std::optional<double> eta(double now) const;

 private:
  struct Point {
    double t;
    std::size_t done;
    double cost;  // cumulative
  };
  std::size_t cases_, done_ = 0;
  double total_cost_, cost_done_ = 0;
  std::deque<Point> window_;
};

}  // namespace gauntlet
