// Note [libtorch versions]: every difference between Debian's libtorch 1.13 and a current 2.x
// that Gauntlet depends on lives in this header, nowhere else.
#pragma once

#include <torch/torch.h>
#include <torch/version.h>

#include <string>

namespace gauntlet::compat {

inline constexpr bool kTorch2 = TORCH_VERSION_MAJOR >= 2;

inline std::string torch_version() { return TORCH_VERSION; }

// 1.13's AT_DISPATCH macros report an unsupported dtype with a plain c10::Error
// ("\"exp_vml_cpu\" not implemented for 'Half'"); 2.x throws c10::NotImplementedError.
// Both mean the backend does not implement the op for this dtype: UNSUPPORTED, not ERROR.
// Some kernels check their dtype with checkScalarTypes instead ("Expected tensor for argument #1
// 'weight' to have one of the following scalar types: Half, Float, Double; but got ..."); and
// TorchScript's interpreter rethrows either as a std::runtime_error with the same text.
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
// where). 1.13 takes a std::function<std::string()>; 2.x adds a lazy Backtrace overload beside it.
inline void fetch_no_error_backtraces() {
  c10::SetStackTraceFetcher(std::function<std::string()>([] { return std::string(); }));
}

// The PrivateUse1 device as it prints. 2.x lets a backend rename it
// (c10::register_privateuse1_backend); 1.13 always prints "privateuseone".
inline c10::Device privateuse1_device(int index) {
  return c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(index));
}

}  // namespace gauntlet::compat

// Collectives (Note [Collective ranks], Note [Simulated collectives]). 1.13's process groups
// implement the collectives themselves (ProcessGroupGloo is a c10d::ProcessGroup); in 2.x a
// c10d::ProcessGroup dispatches to a c10d::Backend, and ProcessGroupGloo is a Backend. Gauntlet
// calls the collectives on whichever does the work, with the same signatures in both. Declared
// here for gauntlet/backend.h; defined for the translation units that define GAUNTLET_COMPAT_C10D
// before including this header (the c10d headers are heavy).
namespace c10d {
class Store;
class ProcessGroup;
class Backend;
}  // namespace c10d
namespace gauntlet::compat {
#if TORCH_VERSION_MAJOR >= 2
using CollectiveGroup = c10d::Backend;
#else
using CollectiveGroup = c10d::ProcessGroup;
#endif
}  // namespace gauntlet::compat
#ifdef GAUNTLET_COMPAT_C10D
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
