// Note [Simulated time]: the device's clock. Each kernel costs the larger of its FLOPs over the
// engine's peak rate for the dtype and its bytes over HBM bandwidth, plus a launch overhead;
// transfers between host and device cost a latency plus bytes over the host link; a fallback
// pays its transfers (charged by the copies it makes) plus the host's compute. Everything is a
// function of shapes and dtypes, never of host timing, so simulated time is bit-identical across
// runs and hosts. Constants: trn2_constants.h. No torch here.
#pragma once

#include <cstdint>

namespace gauntlet::sim {

enum class Engine : std::uint8_t {
  Tensor,        // matrix products and convolutions
  Vector,        // elementwise ops, reductions, data movement on the device
  HostToDevice,  // copies from host memory
  DeviceToHost,  // copies to host memory
  Host,          // a fallback's computation on the host CPU
};

// The arithmetic the tensor engine runs at: bf16 (also f16 and auto-cast fp32), fp32, fp64.
enum class Precision : std::uint8_t { Low, Fp32, Fp64 };

struct Work {
  Engine engine = Engine::Vector;
  Precision precision = Precision::Fp32;
  double flops = 0;
  double bytes = 0;  // read plus written
};

// Seconds the work takes on the simulated device.
double seconds(const Work& w);
// The compute part alone: FLOPs over the engine's rate, no memory traffic, no launch (a kernel
// inside a fused region, Note [Fused regions]).
double compute_seconds(const Work& w);
// One kernel launch from the host runtime.
extern const double kLaunchOverheadSeconds;

}  // namespace gauntlet::sim
