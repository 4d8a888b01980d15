// Note [Progress model]: what the progress line says about the rest of a run. Cases differ in
// cost by orders of magnitude (a 0-d add against a 1M-element conv, a crash that costs a worker
// restart, a timeout that costs its whole limit), so neither the mean rate since the start nor a
// plain count of cases predicts the remaining time. The model weighs each case by its expected
// cost (estimated_case_us, as `plan` splits shards) and measures how fast the run is getting
// through that cost over a recent window (the last 30 s, at least 8 completions): the ETA is the
// remaining expected cost at that speed. A run whose cases turn slow (the last third crashing)
// sees its ETA grow within the window, not as the mean since the start slowly catches up. Time is
// passed in, so the model is tested with synthetic clocks (progress_test.cpp).
//
// Groups: the window still holds the fast cases when a run turns slow (the first crashes of an
// op whose cases all crash), so the window alone says "4 s" where 130 s are left. Cases of one
// group (an op and dtype: op/tanh/f32) tend to cost alike, so each group also learns its own
// seconds per unit of expected cost from its last 8 completions (each completion is charged the
// time since the one before it; the first of the run, which paid for start-up, is not), and its
// remaining cases are priced at that once it has 3; a group whose recent cases mostly crashed or
// timed out is priced per case instead (a crash costs a worker restart, whatever its size). The
// ETA is the larger of the window's and
// the groups' sum: a group can only raise it, so cases of groups running side by side on
// several workers (whose gaps interleave and understate each) never lower the window's view.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace gauntlet {

class ProgressModel {
 public:
  // `total_cost`: the expected cost of every case of the run (any unit; the sum of what done()
  // will be given for each); `cases`: how many.
  ProgressModel(std::size_t cases, double total_cost);
  // A case of `group` with expected cost `cost` is still to run (one call per case; optional).
  void expect(const std::string& group, double cost);
  // A case finished at `t` seconds since the start, of expected cost `cost`.
  // `restart`: it crashed or timed out (its cost was a worker's restart, not its expected cost).
  void done(double t, double cost, const std::string& group = "", bool restart = false);
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
  struct Group {
    std::size_t left = 0;
    double cost_left = 0;
    struct Seen {
      double seconds, cost;  // charged, expected
      bool restart;
    };
    std::deque<Seen> seen;  // the last 8
  };
  std::size_t cases_, done_ = 0;
  double total_cost_, cost_done_ = 0;
  std::deque<Point> window_;
  std::unordered_map<std::string, Group> groups_;
  double last_t_ = -1;  // the previous completion (-1: none yet)
};

}  // namespace gauntlet
