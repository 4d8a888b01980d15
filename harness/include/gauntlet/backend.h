// Note [Backend contract]: a backend is a device plus what the harness may ask of it. `cpu` is
// built in; `plugin:<path.so>` loads a library that registers PrivateUse1 kernels when loaded
// (`sim` is the simulator's library). Compile entry points and process groups join this
// interface with the compile-path and collectives issues.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gauntlet {

struct MemoryStats {
  std::int64_t current_bytes = 0, peak_bytes = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;     // "cpu", "sim", "plugin:/path/lib.so"
  virtual std::string version() const = 0;  // the backend's release, recorded per run
  virtual c10::Device device() const = 0;
  virtual void synchronize() {}
  // Copies a CPU tensor to the device keeping its sizes and strides (layouts are part of a case).
  virtual at::Tensor to_device(const at::Tensor& cpu) const;
  virtual void reset_peak_memory() {}
  virtual MemoryStats memory() const { return {}; }
  // The ops that fell back to the CPU since the last call (backends that can tell).
  virtual std::vector<std::string> take_fallback_ops() { return {}; }
};

// Makes a backend from its name; throws std::invalid_argument naming the problem.
std::unique_ptr<Backend> make_backend(const std::string& spec);
std::vector<std::string> builtin_backends();

}  // namespace gauntlet
