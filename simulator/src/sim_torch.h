// What the simulator's torch translation units share: its device memory and how a kernel sees a
// device tensor as a CPU tensor over the same bytes (the simulated device's memory is host
// memory, which is what makes kernels and copies cheap to simulate).
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace gauntlet::sim {

c10::Allocator* device_allocator();

inline bool on_device(const at::Tensor& t) { return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1; }

// A CPU tensor viewing the device tensor's memory (same sizes, strides and offset), keeping the
// device storage alive for as long as it lives.
at::Tensor cpu_alias(const at::Tensor& device_tensor);

// A new device tensor with `cpu`'s sizes, strides (dense layouts) and values: a device-side
// write of a kernel's result, not a host transfer.
at::Tensor device_copy_of(const at::Tensor& cpu);

// "f32", "bf16", ...: the names fault rules use.
std::string dtype_name(at::ScalarType t);

// Registers the device (memory, copies, views) and every kernel on PrivateUse1.
void register_device_ops(torch::Library& m);
void register_lazy_bit_copies(torch::Library& conj, torch::Library& neg);  // Note [Lazy conjugation]
void register_kernels(torch::Library& aten, torch::Library& fallback);
// The fused LSTM/GRU cell ops (Note [Fused RNN cells]); returns their names.
std::vector<std::string> register_fused_cells(torch::Library& aten);

}  // namespace gauntlet::sim
