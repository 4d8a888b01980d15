#include "state.h"

#include <algorithm>

namespace gauntlet::sim {

State& State::get() {
  static State* s = new State;  // never destroyed: kernels may run during static destruction
  return *s;
}

bool State::reserve(std::int64_t bytes, std::int64_t* current_out) {
  std::lock_guard<std::mutex> lock(mu_);
  *current_out = current_;
  if (current_ + bytes > config_.capacity_bytes) return false;
  current_ += bytes;
  if (current_ > peak_) peak_ = current_;
  return true;
}

void State::release(std::int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  current_ -= bytes;
}

void State::memory(std::int64_t* current, std::int64_t* peak) const {
  std::lock_guard<std::mutex> lock(mu_);
  *current = current_;
  *peak = peak_;
}

void State::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  peak_ = current_;
}

void State::charge(const Work& w, double slowdown) {
  const double s = seconds(w) * slowdown;
  const double compute = compute_seconds(w) * slowdown;
  std::lock_guard<std::mutex> lock(mu_);
  if (in_region_ && (w.engine == Engine::Tensor || w.engine == Engine::Vector)) {
    region_compute_ += compute;
  } else {
    device_seconds_ += s;
  }
}

void State::begin_region() {
  std::lock_guard<std::mutex> lock(mu_);
  in_region_ = true;
  region_compute_ = 0;
}

void State::end_region(double external_bytes) {
  Work io;
  io.engine = Engine::Vector;
  io.bytes = external_bytes;
  const double launch = seconds(io);  // bytes / bandwidth + one launch
  std::lock_guard<std::mutex> lock(mu_);
  in_region_ = false;
  device_seconds_ += std::max(region_compute_ + kLaunchOverheadSeconds, launch);
  region_compute_ = 0;
}

void State::charge_seconds(double s) {
  std::lock_guard<std::mutex> lock(mu_);
  device_seconds_ += s;
}

double State::device_time_us() const {
  std::lock_guard<std::mutex> lock(mu_);
  return device_seconds_ * 1e6;
}

void State::reset_device_time() {
  std::lock_guard<std::mutex> lock(mu_);
  device_seconds_ = 0;
}

bool State::record_fallback(const std::string& op) {
  std::lock_guard<std::mutex> lock(mu_);
  ++fallbacks_[op];
  auto [it, first] = warned_.emplace(op, true);
  (void)it;
  return first;
}

void State::take_fallbacks(const std::function<void(const std::string&, std::int64_t)>& fn) {
  std::map<std::string, std::int64_t> taken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    taken.swap(fallbacks_);
  }
  for (const auto& [op, n] : taken) fn(op, n);
}

}  // namespace gauntlet::sim
