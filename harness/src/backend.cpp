#include "gauntlet/backend.h"

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>

#include "gauntlet/torch_compat.h"

namespace gauntlet {

at::Tensor Backend::to_device(const at::Tensor& cpu) const {
  if (device().is_cpu()) return cpu;
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

namespace {

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::string version() const override { return "libtorch-" + compat::torch_version(); }
  c10::Device device() const override { return c10::Device(c10::kCPU); }
};

// A vendor's backend library: loading it registers its PrivateUse1 kernels.
class PluginBackend final : public Backend {
 public:
  PluginBackend(std::string spec, const std::string& path) : spec_(std::move(spec)) {
    if (!std::filesystem::exists(path)) throw std::invalid_argument("backend library not found: " + path);
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle_) throw std::invalid_argument(std::string("cannot load backend library: ") + dlerror());
    using VersionFn = const char* (*)();
    if (auto fn = reinterpret_cast<VersionFn>(dlsym(handle_, "gauntlet_backend_version"))) version_ = fn();
  }
  std::string name() const override { return spec_; }
  std::string version() const override { return version_; }
  c10::Device device() const override { return compat::privateuse1_device(0); }

 private:
  std::string spec_;
  void* handle_ = nullptr;  // never closed: kernels stay registered for the process lifetime
  std::string version_ = "unknown";
};

}  // namespace

std::unique_ptr<Backend> make_backend(const std::string& spec) {
  if (spec == "cpu") return std::make_unique<CpuBackend>();
  if (spec.rfind("plugin:", 0) == 0) return std::make_unique<PluginBackend>(spec, spec.substr(7));
  throw std::invalid_argument("unknown backend '" + spec + "' (known: cpu, plugin:<path.so>)");
}

std::vector<std::string> builtin_backends() { return {"cpu", "plugin:<path.so>"}; }

}  // namespace gauntlet
