// Note [libtorch versions]: Gauntlet builds against PyTorch 2.x (cmake/torch.cmake, Note [Which
// torch]); every difference between 2.x releases that Gauntlet depends on lives in this header,
// nowhere else. (libtorch 1.13 was dropped: no vendor ships for it.)
#pragma once

#include <c10/core/CPUAllocator.h>
#include <dlfcn.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <chrono>
#include <string>

namespace gauntlet::compat {

// The version of the torch headers this build was compiled against, e.g. "2.14.1".
inline std::string torch_version() { return TORCH_VERSION; }

// Where the libtorch this process runs lives (…/site-packages/torch/lib): the directory of the
// libc10 that was loaded. "" if it cannot be told.
inline std::string torch_lib_dir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&c10::GetCPUAllocator), &info) == 0 || info.dli_fname == nullptr) return "";
  const std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// AT_DISPATCH macros report an unsupported dtype with c10::NotImplementedError ("\"exp_vml_cpu\"
// not implemented for 'Half'"); some kernels check their dtype with checkScalarTypes instead
// ("Expected tensor for argument #1 'weight' to have one of the following scalar types: Half,
// Float, Double; but got ..."); and TorchScript's interpreter rethrows either as a
// std::runtime_error with the same text. All mean the backend does not implement the op for this
// dtype: UNSUPPORTED, not ERROR.
inline bool says_dtype_not_implemented(const std::string& msg) {
  return msg.find(" not implemented for '") != std::string::npos ||
         msg.find("to have one of the following scalar types") != std::string::npos;
}
inline bool is_dtype_not_implemented(const c10::Error& e) {
  return says_dtype_not_implemented(e.what_without_backtrace());
}

// c10::Error's constructor fetches a C++ backtrace (symbolised with dladdr over libtorch's
// symbols: milliseconds an error) for what() to print. Gauntlet keeps what_without_backtrace()
// only, so processes that run cases fetch none (Note [Freed memory kept] in runner.cpp says
// where).
inline void fetch_no_error_backtraces() {
  c10::SetStackTraceFetcher(std::function<std::string()>([] { return std::string(); }));
}

// The PrivateUse1 device. A backend may rename it (c10::register_privateuse1_backend("npu")):
// it then prints as "npu:0" and parses from "npu".
inline c10::Device privateuse1_device(int index) {
  return c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(index));
}

// Whether a dispatcher event is torch.compile tracing rather than running (Note [Compile path]):
// dynamo and AOT autograd trace with fake tensors (the Python dispatch key, a meta tensor
// underneath, sizes that may be symbolic), which pass through the dispatcher, and its
// RecordFunction callbacks, like real ones. Nothing ran on a device; asking such a tensor for its
// strides or offset throws.
inline bool is_traced_value(const c10::IValue& v) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    return t.defined() && (t.unsafeGetTensorImpl()->has_symbolic_sizes_strides() ||
                           t.key_set().has(c10::DispatchKey::Python) || t.is_meta());
  }
  if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorVector()) {
      if (is_traced_value(c10::IValue(t))) return true;
    }
  }
  return false;
}
inline bool is_traced_call(c10::ArrayRef<const c10::IValue> inputs) {
  for (const c10::IValue& v : inputs) {
    if (is_traced_value(v)) return true;
  }
  return false;
}

}  // namespace gauntlet::compat

// Collectives (Note [Collective ranks], Note [Simulated collectives]). A c10d::ProcessGroup
// dispatches each collective to the c10d::Backend of the tensor's device; ProcessGroupGloo is such
// a Backend. Gauntlet calls the collectives on the Backend that does the work.
namespace c10d {
class Store;
class Backend;
}  // namespace c10d

// Note [Gloo headers]: the torch wheel ships ProcessGroupGloo.hpp but not the gloo headers it
// includes, so a Gloo backend cannot be made from C++ with the wheel alone. The translation units
// that make one (the `cpu` backend's, the simulator's transport) define GAUNTLET_GLOO before this
// header and compile against Debian's libgloo-dev headers (ci/setup.sh). That is sound because
// nothing links Debian's libgloo and nothing of gloo is used by value: the code below calls
// ProcessGroupGloo's out-of-line functions in libtorch_cpu and allocates its Options (184 bytes on
// torch 2.14.1) and the ProcessGroupGloo itself (544 bytes), whose members hold gloo objects only
// through pointers; the sizes these headers give were checked against the operator new calls of
// libtorch_cpu's own ProcessGroupGloo::Options::create_default and ProcessGroupGloo::split. The
// collective tests run every collective through it.
#ifdef GAUNTLET_GLOO
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
namespace gauntlet::compat {
// A Gloo backend of `world` ranks meeting at `store`, on the loopback interface.
inline c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                           int world, std::chrono::milliseconds timeout) {
  auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
  opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world, opts);
}
}  // namespace gauntlet::compat
#endif
