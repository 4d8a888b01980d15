// Note [Closed backend interface]: everything that differs between backends is a virtual of
// Backend, implemented here (the plugin's through its exports): device plumbing, the dispatch key,
// the compile path and process groups. Code outside this file asks the backend, never
// device().is_cpu() or a library symbol (docs/architecture.md "How to add": a backend).
#define GAUNTLET_GLOO  // the CPU's process groups are Gloo's (Note [Gloo headers])
#include "gauntlet/core/backend/backend.h"

#include <ATen/ops/as_strided_native.h>
#include <c10/util/StringUtil.h>
#include <dlfcn.h>
#include <torch/csrc/jit/ir/ir.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "gauntlet/base/strings.h"
#include "gauntlet/core/cases/compile_path.h"
#include "gauntlet/core/cases/dispatch_probe.h"
#include "gauntlet/plugin/plugin_abi.h"
#include "gauntlet/plugin/torch_compat.h"
#include "gauntlet/python/compiled.h"

namespace gauntlet {

// Note [Device plumbing]: moving inputs in and results out asks of a backend only what every
// backend has: aten::empty.memory_format and a copy of contiguous data (aten::_copy_from). A
// vendor's first library often has little more, and a harness step that needed more would fail
// every case in the harness's name (a missing as_strided blamed on every op under test). A
// layout with other strides is a view of a flat buffer, which only the backend's own
// aten::as_strided can make: without it the case says so (CapabilityMissing), and only the cases
// with such layouts pay. Results come back as their contiguous storage span, viewed on the CPU.
at::Tensor Backend::to_device(const at::Tensor& cpu) const {
  if (device().is_cpu()) return cpu;
  if (cpu.is_contiguous()) {
    at::Tensor d = at::empty(cpu.sizes(), cpu.options().device(device()));
    if (cpu.numel() > 0) d.copy_(cpu);
    return d;
  }
  if (!has_native_kernel("aten::as_strided", backend_dispatch_key(device().type()))) {
    throw CapabilityMissing("a tensor with strides [" + c10::Join(", ", cpu.strides()) +
                            "] needs aten::as_strided, which the backend lacks");
  }
  // Keep the exact strides, including the gaps of a sliced layout: copy into a same-sized
  // buffer on the device and view it with the original geometry.
  const std::int64_t extent = cpu.numel() == 0 ? 0 : cpu.storage().nbytes() / cpu.element_size();
  at::Tensor base = at::empty({extent}, cpu.options().device(device()));
  at::Tensor src = at::empty({extent}, cpu.options());
  if (extent > 0) {
    src.as_strided(cpu.sizes(), cpu.strides(), cpu.storage_offset()).copy_(cpu);
    base.copy_(src);
  }
  return base.as_strided(cpu.sizes(), cpu.strides(), cpu.storage_offset());
}

std::optional<c10::DispatchKey> Backend::dispatch_key() const {
  if (device().is_cpu()) return std::nullopt;
  return backend_dispatch_key(device().type());
}

std::unique_ptr<CompiledGraph> Backend::compile_graph(const std::shared_ptr<torch::jit::Graph>&,
                                                      const python::Program*) {
  throw c10::NotImplementedError({__func__, __FILE__, __LINE__}, "backend " + name() + " has no compile path");
}

c10::intrusive_ptr<c10d::Backend> Backend::new_process_group(const c10::intrusive_ptr<c10d::Store>&, int, int,
                                                             std::chrono::milliseconds) {
  throw c10::NotImplementedError({__func__, __FILE__, __LINE__}, "backend " + name() + " has no process group");
}

at::Tensor Backend::to_host(const at::Tensor& t) const {
  if (!t.defined() || t.device().is_cpu()) return t;
  if (t.is_contiguous()) return t.cpu();
  // The span of storage the tensor covers, as a contiguous view made here (metadata only, no
  // kernel of the backend), copied out, then given its geometry again on the CPU.
  std::int64_t span = t.numel() == 0 ? 0 : 1;
  for (std::int64_t d = 0; d < t.dim() && span > 0; ++d) {
    if (t.size(d) > 1) span += (t.size(d) - 1) * std::abs(t.stride(d));
  }
  at::Tensor flat = at::native::as_strided_tensorimpl(t, {span}, {1}, t.storage_offset());
  at::Tensor host = flat.cpu();
  return host.as_strided(t.sizes(), t.strides(), 0).clone();
}

namespace {

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::string version() const override { return "libtorch-" + compat::torch_version(); }
  c10::Device device() const override { return c10::Device(c10::kCPU); }
  std::optional<c10::DispatchKey> dispatch_key() const override { return std::nullopt; }
  std::unique_ptr<CompiledGraph> compile_graph(const std::shared_ptr<torch::jit::Graph>& graph,
                                               const python::Program* source) override {
    return python::compile_with_dynamo(source ? *source : python::program_from_graph(*graph, "<traced op>"),
                                       dynamo_backend());
  }
  bool has_compile_path() const override { return true; }
  void prepare_compile_path() override { python::warm_up(dynamo_backend()); }
  // inductor, unless $GAUNTLET_DYNAMO_BACKEND names another
  static python::DynamoBackend dynamo_backend() {
    if (auto env = python::dynamo_backend_from_env()) return *env;
    python::DynamoBackend inductor;
    inductor.options_json = python::dynamo_options_from_env();
    return inductor;
  }
  c10::intrusive_ptr<c10d::Backend> new_process_group(const c10::intrusive_ptr<c10d::Store>& store, int rank, int world,
                                                      std::chrono::milliseconds timeout) override {
    return compat::make_gloo_backend(store, rank, world, timeout);
  }
};

template <typename Fn>
Fn symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

// The dynamo backend a library names (gauntlet_backend_dynamo_backend): "NAME" or
// "NAME@MODULE", a relative .py path taken from the library's folder.
python::DynamoBackend library_dynamo_backend(const std::string& value, const std::string& library) {
  python::DynamoBackend b = python::parse_dynamo_backend(value, library + ": gauntlet_backend_dynamo_backend");
  const std::filesystem::path module(b.module);
  if (module.extension() == ".py" && module.is_relative())
    b.module = (std::filesystem::path(library).parent_path() / module).string();
  return b;
}

// A vendor's backend library: loading it registers its PrivateUse1 kernels; what it exports of
// the plugin ABI (Note [Plugin ABI]) tells the harness its memory, fallbacks and device time.
class PluginBackend final : public Backend {
 public:
  PluginBackend(std::string spec, const std::string& path)
      : spec_(std::move(spec)), path_(path), profile_(library_profile(path)) {
    if (!std::filesystem::exists(path)) throw std::invalid_argument("backend library not found: " + path);
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle_) throw std::invalid_argument(std::string("cannot load backend library: ") + dlerror());
    if (auto fn = symbol<gauntlet_backend_load_error_t>(handle_, "gauntlet_backend_load_error")) {
      if (const char* e = fn()) throw std::invalid_argument(path + ": " + e);
    }
    if (auto fn = symbol<gauntlet_backend_abi_version_t>(handle_, "gauntlet_backend_abi_version")) {
      if (fn() > GAUNTLET_PLUGIN_ABI_VERSION) {
        throw std::invalid_argument(path + ": plugin ABI version " + std::to_string(fn()) +
                                    " is newer than this gauntlet's " + std::to_string(GAUNTLET_PLUGIN_ABI_VERSION));
      }
    }
    if (auto fn = symbol<gauntlet_backend_version_t>(handle_, "gauntlet_backend_version")) version_ = fn();
    if (auto fn = symbol<gauntlet_backend_name_t>(handle_, "gauntlet_backend_name")) profile_ = fn();
    if (auto fn = symbol<gauntlet_backend_config_json_t>(handle_, "gauntlet_backend_config_json")) config_ = fn();
    if (auto fn = symbol<gauntlet_backend_dynamo_backend_t>(handle_, "gauntlet_backend_dynamo_backend"))
      dynamo_ = library_dynamo_backend(fn() ? fn() : "", path);
    sync_ = symbol<gauntlet_backend_synchronize_t>(handle_, "gauntlet_backend_synchronize");
    memory_ = symbol<gauntlet_backend_memory_t>(handle_, "gauntlet_backend_memory");
    reset_peak_ = symbol<gauntlet_backend_reset_peak_memory_t>(handle_, "gauntlet_backend_reset_peak_memory");
    take_fallbacks_ = symbol<gauntlet_backend_take_fallbacks_t>(handle_, "gauntlet_backend_take_fallbacks");
    reset_time_ = symbol<gauntlet_backend_reset_device_time_t>(handle_, "gauntlet_backend_reset_device_time");
    time_ = symbol<gauntlet_backend_device_time_us_t>(handle_, "gauntlet_backend_device_time_us");
    kernels_ = symbol<gauntlet_backend_kernels_t>(handle_, "gauntlet_backend_kernels");
  }
  std::string name() const override { return spec_; }
  std::vector<std::string> replay_arguments() const override {
    return {"--load", std::filesystem::absolute(path_).string(), "--device", device().str()};
  }
  std::string version() const override { return version_; }
  std::string profile() const override { return profile_; }
  bool reports_fallbacks() const override { return take_fallbacks_ != nullptr; }
  std::string config_json() const override { return config_.empty() ? "{}" : config_; }
  c10::Device device() const override { return compat::privateuse1_device(0); }
  void synchronize() override {
    if (sync_) sync_();
  }
  void reset_peak_memory() override {
    if (reset_peak_) reset_peak_();
  }
  MemoryStats memory() const override {
    MemoryStats m;
    if (memory_) memory_(&m.current_bytes, &m.peak_bytes, nullptr);
    return m;
  }
  std::vector<std::string> take_fallback_ops() override {
    std::vector<std::string> ops;
    if (take_fallbacks_) take_fallbacks_(&collect, &ops);
    std::sort(ops.begin(), ops.end());
    return ops;
  }
  std::vector<std::string> kernels() const override {
    std::vector<std::string> ops;
    if (kernels_) kernels_(&collect, &ops);
    std::sort(ops.begin(), ops.end());
    return ops;
  }
  void reset_device_time() override {
    if (reset_time_) reset_time_();
  }
  // Note [Compile path]: the library's device compiles through torch.compile, with the dynamo
  // backend $GAUNTLET_DYNAMO_BACKEND names, else the one the library names by exporting
  // gauntlet_backend_dynamo_backend (`sim`: gauntlet_sim, from the Python file beside the
  // library); none: no compile path.
  std::optional<python::DynamoBackend> dynamo_backend() const {
    if (auto env = python::dynamo_backend_from_env()) return env;
    if (!dynamo_) return std::nullopt;
    python::DynamoBackend shipped = *dynamo_;
    shipped.options_json = python::dynamo_options_from_env();
    return shipped;
  }
  bool has_compile_path() const override { return dynamo_backend().has_value(); }
  void prepare_compile_path() override {
    if (auto dynamo = dynamo_backend()) python::warm_up(*dynamo);
  }
  std::unique_ptr<CompiledGraph> compile_graph(const std::shared_ptr<torch::jit::Graph>& graph,
                                               const python::Program* source) override {
    auto dynamo = dynamo_backend();
    if (!dynamo) return Backend::compile_graph(graph, source);
    return python::compile_with_dynamo(source ? *source : python::program_from_graph(*graph, "<traced op>"), *dynamo);
  }
  c10::intrusive_ptr<c10d::Backend> new_process_group(const c10::intrusive_ptr<c10d::Store>& store, int rank, int world,
                                                      std::chrono::milliseconds timeout) override {
    auto make = symbol<gauntlet_backend_new_process_group_t>(handle_, "gauntlet_backend_new_process_group");
    if (!make) return Backend::new_process_group(store, rank, world, timeout);
    void* pg = make(store.get(), rank, world, static_cast<int>(timeout.count()));
    if (!pg) throw std::runtime_error("backend " + name() + ": its process group factory failed");
    return c10::intrusive_ptr<c10d::Backend>::reclaim(static_cast<c10d::Backend*>(pg));
  }
  std::optional<double> device_time_us() const override {
    if (!time_) return std::nullopt;
    const double t = time_();
    return t < 0 ? std::nullopt : std::optional<double>(t);
  }

 private:
  static void collect(void* ctx, const char* op, int64_t) {
    static_cast<std::vector<std::string>*>(ctx)->push_back(op);
  }

  std::string spec_;
  std::string path_;        // the library
  void* handle_ = nullptr;  // never closed: kernels stay registered for the process lifetime
  std::string version_ = "unknown", profile_, config_;
  std::optional<python::DynamoBackend> dynamo_;  // the dynamo backend the library ships with
  gauntlet_backend_synchronize_t sync_ = nullptr;
  gauntlet_backend_memory_t memory_ = nullptr;
  gauntlet_backend_reset_peak_memory_t reset_peak_ = nullptr;
  gauntlet_backend_take_fallbacks_t take_fallbacks_ = nullptr;
  gauntlet_backend_reset_device_time_t reset_time_ = nullptr;
  gauntlet_backend_device_time_us_t time_ = nullptr;
  gauntlet_backend_kernels_t kernels_ = nullptr;
};

// The one PrivateUse1 library this process loaded: a second would register the same kernels.
std::string& loaded_plugin() {
  static std::string path;
  return path;
}

std::unique_ptr<Backend> make_plugin(const std::string& spec, const std::string& path) {
  std::error_code ec;
  const std::string canonical = std::filesystem::weakly_canonical(path, ec).string();
  if (!loaded_plugin().empty() && loaded_plugin() != canonical) {
    throw std::invalid_argument("a process can load one backend library; " + loaded_plugin() + " is loaded, " + path +
                                " was asked for");
  }
  auto backend = std::make_unique<PluginBackend>(spec, path);
  loaded_plugin() = canonical;
  return backend;
}

}  // namespace

std::string simulator_library() {
  if (const char* env = std::getenv("GAUNTLET_SIM_LIB"); env && *env) return env;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::filesystem::path> candidates;
  if (!ec) {
    candidates.push_back(exe.parent_path() / "libgauntlet_sim.so");
    candidates.push_back(exe.parent_path() / "../lib/libgauntlet_sim.so");
  }
#ifdef GAUNTLET_BUILD_SIM_LIB
  candidates.emplace_back(GAUNTLET_BUILD_SIM_LIB);
#endif
  for (const auto& c : candidates) {
    if (std::filesystem::exists(c, ec)) return std::filesystem::weakly_canonical(c, ec).string();
  }
  throw std::invalid_argument(
      "backend sim: libgauntlet_sim.so not found beside the gauntlet binary or in ../lib (set GAUNTLET_SIM_LIB)");
}

std::string library_profile(const std::string& path) {
  std::string stem = std::filesystem::path(path).filename().string();
  if (const auto so = stem.find(".so"); so != std::string::npos) stem.erase(so);
  if (stem.rfind("lib", 0) == 0 && stem.size() > 3) stem.erase(0, 3);
  return stem;
}

namespace {

// Wraps a backend to answer another profile name (--profile): tolerances and expectations
// written for a vendor's backend follow the name, wherever its library lives.
class Profiled final : public Backend {
 public:
  Profiled(std::unique_ptr<Backend> inner, std::string profile)
      : inner_(std::move(inner)), profile_(std::move(profile)) {}
  std::string name() const override { return inner_->name(); }
  std::string version() const override { return inner_->version(); }
  std::string profile() const override { return profile_; }
  std::string config_json() const override { return inner_->config_json(); }
  std::vector<std::string> kernels() const override { return inner_->kernels(); }
  c10::Device device() const override { return inner_->device(); }
  std::vector<std::string> replay_arguments() const override { return inner_->replay_arguments(); }
  void synchronize() override { inner_->synchronize(); }
  at::Tensor to_device(const at::Tensor& cpu) const override { return inner_->to_device(cpu); }
  bool reports_fallbacks() const override { return inner_->reports_fallbacks(); }
  void reset_peak_memory() override { inner_->reset_peak_memory(); }
  MemoryStats memory() const override { return inner_->memory(); }
  std::vector<std::string> take_fallback_ops() override { return inner_->take_fallback_ops(); }
  void reset_device_time() override { inner_->reset_device_time(); }
  std::optional<double> device_time_us() const override { return inner_->device_time_us(); }
  std::optional<c10::DispatchKey> dispatch_key() const override { return inner_->dispatch_key(); }
  std::unique_ptr<CompiledGraph> compile_graph(const std::shared_ptr<torch::jit::Graph>& graph,
                                               const python::Program* source) override {
    return inner_->compile_graph(graph, source);
  }
  bool has_compile_path() const override { return inner_->has_compile_path(); }
  void prepare_compile_path() override { inner_->prepare_compile_path(); }
  c10::intrusive_ptr<c10d::Backend> new_process_group(const c10::intrusive_ptr<c10d::Store>& store, int rank, int world,
                                                      std::chrono::milliseconds timeout) override {
    return inner_->new_process_group(store, rank, world, timeout);
  }

 private:
  std::unique_ptr<Backend> inner_;
  std::string profile_;
};

// Note [Backend registry]: the built-in backends. A new one is a Backend subclass in a file of its
// own, a function making it, and one line here.
std::vector<BackendEntry>& registry() {
  static std::vector<BackendEntry> entries = {
      {"cpu", "cpu", "libtorch's own CPU kernels, in the case dtype (the reference device)",
       [](const std::string&, const std::string&) -> std::unique_ptr<Backend> {
         return std::make_unique<CpuBackend>();
       }},
      {"sim", "sim", "the simulated accelerator, libgauntlet_sim.so loaded as a backend library (docs/simulator.md)",
       [](const std::string&, const std::string&) {
         const std::string library = simulator_library();
         return make_plugin("sim", library);
       }},
      {"plugin:", "plugin:<path.so>", "a backend library that registers PrivateUse1 kernels when loaded",
       [](const std::string& spec, const std::string& path) {
         if (path.empty()) throw std::invalid_argument("--backend plugin: needs the library's path (plugin:<path.so>)");
         return make_plugin(spec, path);
       }},
  };
  return entries;
}

std::unique_ptr<Backend> make_named(const std::string& spec) {
  for (const BackendEntry& e : registry()) {
    const bool scheme = e.name.back() == ':';
    if (scheme ? spec.rfind(e.name, 0) == 0 : spec == e.name) {
      return e.make(spec, scheme ? spec.substr(e.name.size()) : std::string());
    }
  }
  std::vector<std::string> names;
  for (const BackendEntry& e : registry()) names.push_back(e.name);
  throw std::invalid_argument("unknown backend '" + spec + "'" + nearest_hint(spec, names) +
                              " (known: " + backend_usages(", ") + ")");
}

}  // namespace

const std::vector<BackendEntry>& registered_backends() { return registry(); }

void register_backend(BackendEntry entry) {
  if (entry.name.empty() || entry.name == ":") throw std::invalid_argument("register_backend: an empty backend name");
  if (!entry.make) throw std::invalid_argument("register_backend: backend " + entry.name + " has no factory");
  for (const BackendEntry& e : registry()) {
    if (e.name == entry.name) throw std::invalid_argument("register_backend: backend " + entry.name + " is registered");
  }
  if (entry.usage.empty()) entry.usage = entry.name;
  registry().push_back(std::move(entry));
}

std::string backend_usages(const std::string& separator) {
  std::string out;
  for (const BackendEntry& e : registry()) out += (out.empty() ? "" : separator) + e.usage;
  return out;
}

std::unique_ptr<Backend> make_backend(const std::string& spec, const std::string& wanted) {
  std::unique_ptr<Backend> b = make_named(spec);
  std::string profile = wanted;
  if (const char* env = std::getenv("GAUNTLET_PROFILE"); profile.empty() && env && *env) profile = env;
  if (profile.empty() || profile == b->profile()) return b;
  return std::make_unique<Profiled>(std::move(b), profile);
}

OptionSpec& describe_backend(OptionSink& s, std::string& backend, const std::string& more) {
  return s.option("--backend", backend, backend_usages() + more);
}

}  // namespace gauntlet
