// The library's entry points: registration when loaded, and the plugin ABI the harness reads
// between cases (Note [Plugin ABI] in harness/plugin/include/gauntlet/plugin/plugin_abi.h).
#include <torch/library.h>

#include <stdexcept>

#include "gauntlet/plugin/plugin_abi.h"
#include "sim_torch.h"
#include "state.h"

namespace gauntlet::sim {

const std::vector<std::string>& kernel_names();

namespace {

Numerics build_numerics() {
  Numerics n;
#ifdef GAUNTLET_SIM_BUILD_NUMERICS
  n = parse_numerics(GAUNTLET_SIM_BUILD_NUMERICS);
#endif
  return n;
}

// Reads the configuration and registers the device and its kernels. A bad configuration
// registers nothing and leaves its one-line error for the harness to report through
// gauntlet_backend_load_error (throwing from a library's initialiser would abort the process
// that loads it).
struct Loader {
  Loader() {
    try {
      State::get().set_config(config_from_env(GAUNTLET_SIM_BASE_VERSION, build_numerics(), GAUNTLET_SIM_BUILD_FAULTS));
    } catch (const std::exception& e) {
      State::get().set_load_error(e.what());  // the harness reports it (one line) and stops
      return;
    }
    static torch::Library aten(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
    static torch::Library any(torch::Library::IMPL, "_", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
    static torch::Library conj(torch::Library::IMPL, "aten", c10::DispatchKey::Conjugate, __FILE__, __LINE__);
    static torch::Library neg(torch::Library::IMPL, "aten", c10::DispatchKey::Negative, __FILE__, __LINE__);
    register_device_ops(aten);
    register_lazy_bit_copies(conj, neg);
    register_kernels(aten, any);
  }
};

const Loader loader;

}  // namespace

}  // namespace gauntlet::sim

using gauntlet::sim::State;

extern "C" {

__attribute__((visibility("default"))) int gauntlet_backend_abi_version(void) { return GAUNTLET_PLUGIN_ABI_VERSION; }

__attribute__((visibility("default"))) const char* gauntlet_backend_load_error(void) {
  return State::get().load_error().empty() ? nullptr : State::get().load_error().c_str();
}

__attribute__((visibility("default"))) const char* gauntlet_backend_name(void) { return "sim"; }

// The simulator's compiler is a dynamo backend in the Python file the build puts beside this
// library (Note [Simulated compiler] in compiler.cpp).
__attribute__((visibility("default"))) const char* gauntlet_backend_dynamo_backend(void) {
  return "gauntlet_sim@gauntlet_sim.py";
}

__attribute__((visibility("default"))) const char* gauntlet_backend_version(void) {
  return State::get().config().version.c_str();
}

__attribute__((visibility("default"))) const char* gauntlet_backend_config_json(void) {
  static const std::string json = State::get().config().json();
  return json.c_str();
}

__attribute__((visibility("default"))) void gauntlet_backend_synchronize(void) {}

__attribute__((visibility("default"))) void gauntlet_backend_memory(int64_t* current, int64_t* peak,
                                                                    int64_t* capacity) {
  std::int64_t c = 0, p = 0;
  State::get().memory(&c, &p);
  if (current) *current = c;
  if (peak) *peak = p;
  if (capacity) *capacity = State::get().config().capacity_bytes;
}

__attribute__((visibility("default"))) void gauntlet_backend_reset_peak_memory(void) { State::get().reset_peak(); }

__attribute__((visibility("default"))) void gauntlet_backend_take_fallbacks(gauntlet_op_count_fn fn, void* ctx) {
  State::get().take_fallbacks([&](const std::string& op, std::int64_t n) { fn(ctx, op.c_str(), n); });
}

__attribute__((visibility("default"))) void gauntlet_backend_reset_device_time(void) {
  State::get().reset_device_time();
}

__attribute__((visibility("default"))) double gauntlet_backend_device_time_us(void) {
  return State::get().device_time_us();
}

__attribute__((visibility("default"))) void gauntlet_backend_kernels(gauntlet_op_count_fn fn, void* ctx) {
  for (const std::string& op : gauntlet::sim::kernel_names()) fn(ctx, op.c_str(), 0);
}

}  // extern "C"
