// The simulator's process-wide state: what the harness reads between cases through the plugin
// ABI (Note [Plugin ABI]). Kernels run on the caller's thread and on autograd's device thread,
// so every field is behind one mutex. No torch here.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "config.h"
#include "cost_model.h"

namespace gauntlet::sim {

class State {
 public:
  static State& get();

  // The configuration read at load, and the error that stopped the library loading ("" if none).
  const Config& config() const { return config_; }
  void set_config(Config c) { config_ = std::move(c); }
  const std::string& load_error() const { return load_error_; }
  void set_load_error(std::string e) { load_error_ = std::move(e); }

  // Device memory. reserve() returns false when the allocation would pass the capacity.
  bool reserve(std::int64_t bytes, std::int64_t* current_out);
  void release(std::int64_t bytes);
  void memory(std::int64_t* current, std::int64_t* peak) const;
  void reset_peak();

  // Simulated time: each kernel's cost, times the slow-down a fault asks for.
  void charge(const Work& w, double slowdown = 1.0);
  void charge_seconds(double s);  // a collective's link time (Note [Collective cost])
  double device_time_us() const;
  void reset_device_time();

  // Note [Fused regions]: between begin_region and end_region (a compiled region of the compile
  // path, simulator/src/compiler.cpp) the device and tensor engines' kernels are not charged one
  // by one: their compute time is summed, and end_region charges the region as one fused launch,
  // max(compute, bytes the region reads and writes in HBM / bandwidth) + one launch overhead.
  // Intermediates stay on chip. Host work and transfers (a fallback inside a region) are charged
  // as usual.
  void begin_region();
  void end_region(double external_bytes);

  // Fallbacks since the last take. Returns true the first time an op falls back in this
  // process (the caller warns once per op, as real backends do).
  bool record_fallback(const std::string& op);
  void take_fallbacks(const std::function<void(const std::string&, std::int64_t)>& fn);

 private:
  mutable std::mutex mu_;
  Config config_;
  std::string load_error_;
  std::int64_t current_ = 0, peak_ = 0;
  double device_seconds_ = 0;
  bool in_region_ = false;
  double region_compute_ = 0;
  std::map<std::string, std::int64_t> fallbacks_;
  std::map<std::string, bool> warned_;
};

}  // namespace gauntlet::sim
