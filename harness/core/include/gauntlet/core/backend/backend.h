// Note [Backend contract]: a backend is a device plus what the harness may ask of it. `cpu` is
// built in; `plugin:<path.so>` loads a library that registers PrivateUse1 kernels when loaded
// and reads whatever it exports of the plugin ABI (Note [Plugin ABI]); `sim` is the simulator's
// library found beside the gauntlet binary. What a library does not export, the harness reads
// from the dispatcher (gauntlet/core/cases/dispatch_probe.h): its native kernels, its CPU fallback and the
// ops each case ran through it.
#pragma once

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gauntlet/base/command_line.h"
#include "gauntlet/plugin/torch_compat.h"

namespace gauntlet::python {
struct Program;
}

namespace torch::jit {
struct Graph;
}

namespace gauntlet {

class CompiledGraph;  // gauntlet/python/compiled.h

struct MemoryStats {
  std::int64_t current_bytes = 0, peak_bytes = 0;
};

// A case needs something of the backend that it lacks (a layout needs aten::as_strided): the
// case is UNSUPPORTED, in these words, and the op under test is not blamed.
struct CapabilityMissing : std::runtime_error {
  using std::runtime_error::runtime_error;
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
  // The arguments a bundle's repro.py takes to run a case on this backend's device: "--device",
  // "cpu"; a plugin's "--load", its library, "--device", "privateuseone:0".
  virtual std::vector<std::string> replay_arguments() const { return {"--device", device().str()}; }
  virtual void synchronize() {}
  // Copies a CPU tensor to the device keeping its sizes and strides (layouts are part of a case),
  // with an allocation and a copy of contiguous data; any other geometry is made with the
  // backend's own aten::as_strided, and throws CapabilityMissing when it has none
  // (Note [Device plumbing] in backend.cpp).
  virtual at::Tensor to_device(const at::Tensor& cpu) const;
  // Copies a device tensor back to the CPU with copies of contiguous data only, keeping its
  // sizes and strides.
  at::Tensor to_host(const at::Tensor& t) const;
  // Whether take_fallback_ops() comes from the backend itself (the plugin ABI); otherwise the
  // harness derives the fallbacks from the dispatcher (Note [Dispatcher-derived fallbacks]).
  virtual bool reports_fallbacks() const { return false; }
  virtual void reset_peak_memory() {}
  virtual MemoryStats memory() const { return {}; }
  // The ops that fell back to the CPU since the last call (backends that can tell).
  virtual std::vector<std::string> take_fallback_ops() { return {}; }
  // Device time since the last reset in microseconds (simulated on `sim`), when it can tell.
  virtual void reset_device_time() {}
  virtual std::optional<double> device_time_us() const { return std::nullopt; }
  // The dispatch key of the backend's kernels when it is a device of its own (PrivateUse1): what
  // the dispatcher can tell of it (its kernels, fallbacks and capabilities, gauntlet/
  // dispatch_probe.h). None for `cpu`, the reference, which has nothing to fall back to.
  virtual std::optional<c10::DispatchKey> dispatch_key() const;
  // The compile path (docs/compile-path.md, Note [Compile path] in harness/python/compiled.cpp):
  // `graph` compiled for the device with torch.compile and the backend's dynamo backend. `source`
  // is the same program as Python where it has one (a model's own file); null: a traced op's
  // graph, written as Python. `cpu`: inductor; `sim`: its own dynamo backend, gauntlet_sim
  // (simulator/python/gauntlet_sim.py); a plugin: the one $GAUNTLET_DYNAMO_BACKEND names. Throws
  // c10::NotImplementedError when the backend has none (its compile cases are UNSUPPORTED).
  virtual std::unique_ptr<CompiledGraph> compile_graph(const std::shared_ptr<torch::jit::Graph>& graph,
                                                       const python::Program* source);
  // Whether compile_graph can compile at all: asked before a compile case traces anything, so a
  // backend without a compile path has UNSUPPORTED compile cases, not its eager failures again.
  virtual bool has_compile_path() const { return false; }
  // Readies the compile path once per process, before a compile case starts its clock: on `cpu`,
  // starts the embedded interpreter, imports dynamo and inductor and compiles one small program,
  // so that the first compile case of each worker does not carry those one-time seconds in its
  // first_us and compile_ms (which compare judges). Later calls return at once.
  virtual void prepare_compile_path() {}
  // A c10d process group of `world` ranks for collective cases: Gloo on `cpu`; a plugin's
  // gauntlet_backend_new_process_group (Note [Plugin process groups] in plugin_abi.h). Throws
  // c10::NotImplementedError when the backend has none.
  virtual c10::intrusive_ptr<c10d::Backend> new_process_group(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                              int world, std::chrono::milliseconds timeout);
};

// Note [Case peak memory]: a case's peak device memory is the peak above what the device held
// when the case began, taken before its inputs (or model) move there: inputs, weights, outputs and
// temporaries count; what a worker still holds from the cases it ran before (a backend's caches,
// tensors an earlier case left alive) does not. That memory depends on which cases reached the
// worker first, so counting it made one case's peak differ between two identical runs (7,447 of
// nightly's 78,724 cases did on sim) and compare flag a peak-memory regression no change explained.
// Backward cases still vary by a tensor or so: the autograd engine's thread for the device lets
// go of the last backward task it ran (its buffers, its graph) on its own time, so the next case
// may see the previous backward case's gradients freed in the middle of its own (4,908 of
// nightly's cases differed between two runs, by up to half their peak, all under compare's 1 MiB
// floor). Running a one-element backward before each case settles it (0 differ), but on a
// backend without those kernels it makes fallbacks of ops no case asked for, so it is not done.
class MemoryBaseline {
 public:
  explicit MemoryBaseline(const Backend& backend) : held_(backend.memory().current_bytes) {}
  // Peak bytes since the last reset_peak_memory(), less what was held at construction.
  std::int64_t peak_above(const Backend& backend) const {
    return std::max<std::int64_t>(0, backend.memory().peak_bytes - held_);
  }

 private:
  std::int64_t held_ = 0;
};

// Note [Backend registry]: the backends `--backend` can name, each registered once with a one-line
// description: the built-in ones (`cpu`, `sim`, and the scheme `plugin:<path.so>`) from one table
// in backend.cpp, others by register_backend before the first make_backend (an embedder, a test).
// A name ending in ':' is a scheme: it takes what follows it in the spec as its argument. The
// names, the error for an unknown one and `gauntlet backend-info --list` all come from here.
struct BackendEntry {
  std::string name;         // "cpu"; a scheme ends with ':' ("plugin:")
  std::string usage;        // how --backend spells it: "cpu", "plugin:<path.so>"
  std::string description;  // one line
  // Makes the backend; `arg` is what follows a scheme's name ("" for a plain name). Throws
  // std::invalid_argument naming the problem.
  std::function<std::unique_ptr<Backend>(const std::string& spec, const std::string& arg)> make;
};
// Every registered backend, the built-in ones first, in registration order.
const std::vector<BackendEntry>& registered_backends();
// Adds a backend; throws std::invalid_argument when the name is taken, empty or has no factory.
void register_backend(BackendEntry entry);
// The usages joined with `separator`: "cpu | sim | plugin:<path.so>" for help texts.
std::string backend_usages(const std::string& separator = " | ");
// --backend: its help lists backend_usages(), then `more` ("" for nothing).
OptionSpec& describe_backend(OptionSink& s, std::string& backend, const std::string& more = "");

// Makes a backend from its name; throws std::invalid_argument naming the problem (an unknown name
// lists the registered ones). `profile`, when set, replaces the backend's own profile name
// (--profile).
std::unique_ptr<Backend> make_backend(const std::string& spec, const std::string& profile = "");
// The profile of a backend library that exports no name: the file's stem without "lib"
// (libfoo.so -> foo, /opt/x/libfoo.so.1 -> foo).
std::string library_profile(const std::string& path);
// Where `sim` loads the simulator from: $GAUNTLET_SIM_LIB, else libgauntlet_sim.so beside the
// running gauntlet binary, in ../lib from it, or in the build tree this binary came from.
std::string simulator_library();

}  // namespace gauntlet
