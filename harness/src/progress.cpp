// Note [Progress model] (progress.h).
#include "gauntlet/progress.h"

#include <algorithm>

namespace gauntlet {

namespace {
constexpr double kWindowS = 30;
constexpr std::size_t kWindowMin = 8;
}  // namespace

ProgressModel::ProgressModel(std::size_t cases, double total_cost) : cases_(cases), total_cost_(total_cost) {}

void ProgressModel::done(double t, double cost) {
  ++done_;
  cost_done_ += std::max(0.0, cost);
  window_.push_back({t, done_, cost_done_});
  while (window_.size() > kWindowMin && t - window_.front().t > kWindowS) window_.pop_front();
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
  return remaining / (cost / span);
}

}  // namespace gauntlet
