// Note [Cost-model constants]: every figure the simulated device's clock uses, in one place, with
// where it comes from. The simulated device is one Trainium2-class chip. Published figures are
// marked [AWS]; figures AWS does not publish are marked [assumed] with the reasoning, so a reader
// can tell measurement-backed numbers from modelling choices.
//
// [AWS] AWS Trainium product page, "Trainium2" (https://aws.amazon.com/ai/machine-learning/trainium/)
//       and the AWS Neuron documentation, "Trainium2 Architecture"
//       (https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/trainium2.html):
//       per chip 1,299 dense FP8 TFLOPS, 667 dense BF16/FP16 TFLOPS, 181 dense FP32 TFLOPS,
//       96 GiB of HBM at 2.9 TB/s, 8 NeuronCores.
#pragma once

namespace gauntlet::sim::trn2 {

// Tensor engine (matrix products and convolutions), FLOP/s. [AWS]
inline constexpr double kTensorBf16Flops = 667e12;  // also FP16
inline constexpr double kTensorFp32Flops = 181e12;
// FP64 has no hardware path on Trainium; the simulator computes it (a test bed needs every
// dtype) at a quarter of the FP32 rate. [assumed]
inline constexpr double kTensorFp64Flops = kTensorFp32Flops / 4;

// Vector and scalar engines (elementwise, reductions, transcendentals). AWS publishes no FLOP
// figure for them; at these rates every elementwise kernel is bound by HBM bandwidth, which is
// what the published bandwidth implies for such kernels on the real chip. [assumed]
inline constexpr double kVectorFlops = 2.9e12 * 8;

// HBM. [AWS]
inline constexpr double kHbmBytesPerSec = 2.9e12;
inline constexpr double kHbmCapacityBytes = 96.0 * 1024 * 1024 * 1024;

// Fixed cost of one kernel launch from the host runtime. Not published; a few microseconds is
// the order of a device runtime's launch path (NRT, CUDA). [assumed]
inline constexpr double kLaunchSeconds = 2e-6;

// The compile path's compiler (Note [Simulated compiler]): the host time to compile one region,
// a fixed part plus a part per node. A real graph compiler (neuronx-cc) takes seconds to minutes
// per graph; these are scaled down a thousandfold so that suites of compile cases stay quick,
// keeping the shape that matters: compile time grows with the region. [assumed]
inline constexpr double kCompileBaseSeconds = 2e-3;
inline constexpr double kCompilePerNodeSeconds = 2e-4;

// Host <-> device transfers over PCIe, per direction: a Gen5 x16 link is 64 GB/s raw; 32 GB/s
// effective is a typical DMA figure after protocol overhead. [assumed]
inline constexpr double kHostLinkBytesPerSec = 32e9;
inline constexpr double kHostLinkLatencySeconds = 5e-6;  // per transfer [assumed]

// The host CPU that runs fallbacks: one core's worth of a server CPU. [assumed]
inline constexpr double kHostFlops = 50e9;
inline constexpr double kHostBytesPerSec = 20e9;

// Chip-to-chip links for collectives, the alpha-beta model (Note [Collective cost]): NeuronLink
// between Trainium2 chips. AWS quotes 1 TB/s of chip-to-chip bandwidth per Trainium2 in a
// Trn2 server (four links to neighbours in a 2-D torus) [AWS]; a ring uses one link in each
// direction per step, a quarter of it: 256 GB/s. [assumed] The latency per message, a few
// microseconds, is a device runtime's order for a DMA with a semaphore wait. [assumed]
inline constexpr double kLinkBytesPerSec = 256e9;
inline constexpr double kLinkLatencySeconds = 5e-6;

}  // namespace gauntlet::sim::trn2
