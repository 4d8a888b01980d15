// Note [Backend contract]: a backend is a device plus what the harness may ask of it. `cpu` is
// built in; `plugin:<path.so>` loads a library that registers PrivateUse1 kernels when loaded
// and reads whatever it exports of the plugin ABI (Note [Plugin ABI]); `sim` is the simulator's
// library found beside the gauntlet binary. Compile entry points and process groups join this
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
  // The name tolerance and expectation profiles use ("cpu", "sim"): stable however the backend
  // was named on the command line.
  virtual std::string profile() const { return name(); }
  // The backend's own configuration (a JSON object), recorded per run.
  virtual std::string config_json() const { return "{}"; }
  // The ops the backend implements natively, when it can tell ("aten::add.Tensor").
  virtual std::vector<std::string> kernels() const { return {}; }
  virtual c10::Device device() const = 0;
  virtual void synchronize() {}
  // Copies a CPU tensor to the device keeping its sizes and strides (layouts are part of a case).
  virtual at::Tensor to_device(const at::Tensor& cpu) const;
  virtual void reset_peak_memory() {}
  virtual MemoryStats memory() const { return {}; }
  // The ops that fell back to the CPU since the last call (backends that can tell).
  virtual std::vector<std::string> take_fallback_ops() { return {}; }
  // Device time since the last reset in microseconds (simulated on `sim`), when it can tell.
  virtual void reset_device_time() {}
  virtual std::optional<double> device_time_us() const { return std::nullopt; }
  // A symbol the backend's library exports beyond the plugin ABI's C functions (the process
  // group factory, Note [Plugin process groups] in plugin_abi.h); null when it has none.
  virtual void* plugin_symbol(const char* /*name*/) const { return nullptr; }
};

// Makes a backend from its name; throws std::invalid_argument naming the problem.
std::unique_ptr<Backend> make_backend(const std::string& spec);
// Where `sim` loads the simulator from: $GAUNTLET_SIM_LIB, else libgauntlet_sim.so beside the
// running gauntlet binary, in ../lib from it, or in the build tree this binary came from.
std::string simulator_library();
std::vector<std::string> builtin_backends();

}  // namespace gauntlet
