// Note [Progress model] (progress.h).
#include "gauntlet/run/progress.h"

#include <algorithm>

namespace gauntlet {

namespace {
constexpr double kWindowS = 30;
constexpr std::size_t kWindowMin = 8;
constexpr std::size_t kGroupSeen = 8;  // a group's completions it prices its rest by
constexpr std::size_t kGroupMin = 3;   // ... once it has this many
}  // namespace

ProgressModel::ProgressModel(std::size_t cases, double total_cost) : cases_(cases), total_cost_(total_cost) {}

void ProgressModel::expect(const std::string& group, double cost) {
  Group& g = groups_[group];
  ++g.left;
  g.cost_left += std::max(0.0, cost);
}

void ProgressModel::done(double t, double cost, const std::string& group, bool restart) {
  ++done_;
  cost = std::max(0.0, cost);
  cost_done_ += cost;
  window_.push_back({t, done_, cost_done_});
  while (window_.size() > kWindowMin && t - window_.front().t > kWindowS) window_.pop_front();
  if (auto it = groups_.find(group); !group.empty() && it != groups_.end()) {
    Group& g = it->second;
    if (g.left > 0) --g.left;
    g.cost_left = g.left ? std::max(0.0, g.cost_left - cost) : 0.0;
    if (last_t_ >= 0) {
      g.seen.push_back({std::max(0.0, t - last_t_), cost, restart});
      if (g.seen.size() > kGroupSeen) g.seen.pop_front();
    }
  }
  last_t_ = t;
}

double ProgressModel::rate(double now) const {
  if (window_.size() < 2) return now > 0 ? double(done_) / now : 0;
  const double span = now - window_.front().t;
  return span > 0 ? double(done_ - window_.front().done) / span : 0;
}

std::optional<double> ProgressModel::eta(double now) const {
  if (done_ == 0) return std::nullopt;
  if (done_ >= cases_) return 0.0;
  // From the window's first point to now: cost got through per second. The first case also
  // paid for starting the workers and the backend: no estimate from it alone.
  if (window_.size() < 2) return std::nullopt;
  const double span = now - window_.front().t;
  const double cost = cost_done_ - window_.front().cost;
  const double remaining = std::max(0.0, total_cost_ - cost_done_);
  if (span <= 0) return std::nullopt;
  if (cost <= 0) {
    // No cost estimate got through (every case estimated 0): fall back on the case count.
    const double r = rate(now);
    return r > 0 ? std::optional<double>(double(cases_ - done_) / r) : std::nullopt;
  }
  const double per_cost = span / cost;  // the window's seconds per unit of expected cost
  const double window_eta = remaining * per_cost;
  // Groups that have shown their own price (Note [Progress model], groups).
  double by_groups = 0, grouped_cost = 0;
  bool priced = false;
  for (const auto& [name, g] : groups_) {
    if (g.left == 0) continue;
    grouped_cost += g.cost_left;
    double seconds = 0, seen_cost = 0;
    std::size_t restarts = 0;
    for (const Group::Seen& x : g.seen) {
      seconds += x.seconds;
      seen_cost += x.cost;
      restarts += x.restart;
    }
    if (g.seen.size() >= kGroupMin && 2 * restarts > g.seen.size()) {
      by_groups += double(g.left) * seconds / double(g.seen.size());  // per case: restarts cost alike
      priced = true;
    } else if (g.seen.size() >= kGroupMin && seen_cost > 0) {
      by_groups += g.cost_left * (seconds / seen_cost);
      priced = true;
    } else {
      by_groups += g.cost_left * per_cost;
    }
  }
  if (!priced) return window_eta;
  by_groups += std::max(0.0, remaining - grouped_cost) * per_cost;  // cases given no group
  return std::max(window_eta, by_groups);
}

}  // namespace gauntlet
