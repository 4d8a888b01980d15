#include "cost_model.h"

#include <algorithm>

#include "trn2_constants.h"

namespace gauntlet::sim {

double compute_seconds(const Work& w) {
  switch (w.engine) {
    case Engine::Tensor: {
      const double rate = w.precision == Precision::Low    ? trn2::kTensorBf16Flops
                          : w.precision == Precision::Fp32 ? trn2::kTensorFp32Flops
                                                           : trn2::kTensorFp64Flops;
      return w.flops / rate;
    }
    case Engine::Vector:
      return w.flops / trn2::kVectorFlops;
    default:
      return seconds(w);
  }
}

double seconds(const Work& w) {
  switch (w.engine) {
    case Engine::Tensor:
    case Engine::Vector:
      return std::max(compute_seconds(w), w.bytes / trn2::kHbmBytesPerSec) + trn2::kLaunchSeconds;
    case Engine::HostToDevice:
    case Engine::DeviceToHost:
      return trn2::kHostLinkLatencySeconds + w.bytes / trn2::kHostLinkBytesPerSec;
    case Engine::Host:
      return std::max(w.flops / trn2::kHostFlops, w.bytes / trn2::kHostBytesPerSec) + trn2::kLaunchSeconds;
  }
  return 0;
}

const double kLaunchOverheadSeconds = trn2::kLaunchSeconds;

}  // namespace gauntlet::sim
