// What the dispatcher knows about a backend, read without any help from the backend's library:
// which ops it implements natively, whether it registered a CPU fallback, and, while a case runs,
// which ops went through that fallback (Note [Dispatcher-derived fallbacks]).
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/DispatchKey.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gauntlet {

// How the dispatcher runs an op on a backend's dispatch key, in its own order of preference
// (1.13's OperatorEntry::computeDispatchTableEntry): a kernel registered for the key, a composite
// kernel that decomposes the op into others, the backend's boxed fallback, else nothing.
enum class KernelSource { Native, Composite, Fallback, Missing };
const char* kernel_source_name(KernelSource s);

// The dispatch key of a device type's tensors (PrivateUse1 for plugin backends).
c10::DispatchKey backend_dispatch_key(c10::DeviceType device);
// How `op` ("aten::add.Tensor", "aten::relu") runs on `key`; Missing for an unknown op.
KernelSource kernel_source(const std::string& op, c10::DispatchKey key);
bool has_native_kernel(const std::string& op, c10::DispatchKey key);

// One op the harness itself needs of a backend, and why.
struct Requirement {
  std::string op, needed_for;
  bool required = false;  // without it no case can run at all
  bool present = false;
  // Note [What a fallback cannot cover]: an op the boxed CPU fallback itself needs from the
  // backend (copying a mutated argument back, making a result on the device). Present means a
  // kernel of the backend's own, or, where a call through the fallback is safe, a tiny call
  // that ran (check_fallback_needs); `how` says which, or why not.
  bool fallback_needs = false;
  std::string how;
};

struct Capabilities {
  std::vector<std::string> native;           // ops with a kernel for the key, sorted
  std::vector<std::string> autograd_native;  // ops with a kernel for the key's autograd key
  bool backend_fallback = false;             // a boxed fallback for every other op
  bool autograd_fallback = false;            // the autograd key falls through (or has a fallback)
  std::vector<Requirement> requirements;     // what the harness asks of the backend
  bool can_take_inputs() const;              // every required op present
  std::vector<std::string> missing_required() const;
};
Capabilities probe_capabilities(c10::DispatchKey key);

class Backend;
struct Case;
// Note [What a fallback cannot cover]: settles each requirement of `caps` that the dispatcher
// alone cannot, for a backend with a boxed CPU fallback: an op the fallback needs that has no
// kernel of the backend's own is called once on tiny tensors of the device. A boxed fallback
// "has" every op as far as the dispatcher tells, yet it cannot run the ops it relies on itself:
// aten::_copy_from_and_resize through a CPU fallback reaches the CPU, which has no kernel for
// it, and every in-place or out= op through the fallback then fails.
void check_fallback_needs(const Backend& backend, Capabilities& caps);
// Note [Device plumbing] (backend.cpp): before any case, what the harness needs of `backend`.
// `cannot_run`: the one-line reason it cannot take even contiguous inputs ("" when it can);
// `warnings`: one line for each missing optional capability, with the cases of `cases` it costs.
struct CapabilityCheck {
  std::string cannot_run;
  std::vector<std::string> warnings;
};
// `call_fallback_needs`: settle what the fallback cannot cover by calling it (check_fallback_needs);
// false where one case follows in the same process (repro), which must meet the library as a
// worker does, its fallback never called before.
CapabilityCheck check_capabilities(const Backend& backend, const std::vector<const Case*>& cases,
                                   bool call_fallback_needs = true);

// Note [Dispatcher-derived fallbacks]: while alive, observes every op this thread calls through
// the dispatcher (a thread-local RecordFunction callback with inputs) and classifies the ones
// whose arguments live on the observed device by kernel_source(). An op served by the backend's
// fallback is recorded in fallback_ops() and everything it calls (the copies to and from the
// CPU, the CPU kernel) is ignored; an op served by a composite kernel is recorded in
// decomposed_ops() and the ops it decomposes into are classified in turn. Nothing is asked of
// the backend's library, so this works for any PrivateUse1 backend.
//
// It also remembers the innermost device op that an exception left (raised_in()): whether a
// failure came from the op under test lacking a kernel, from a native kernel, or from the
// fallback machinery (Note [Outcome classification] in runner.cpp).
class DispatchObserver {
 public:
  DispatchObserver(c10::DeviceType device, c10::DispatchKey key);
  ~DispatchObserver();
  DispatchObserver(const DispatchObserver&) = delete;
  DispatchObserver& operator=(const DispatchObserver&) = delete;

  struct Raised {
    std::string op;
    KernelSource source = KernelSource::Missing;
    std::string in_fallback_of;  // set when the op ran inside another op's CPU fallback
  };

  std::vector<std::string> fallback_ops() const;    // sorted, unique
  std::vector<std::string> decomposed_ops() const;  // sorted, unique
  const std::optional<Raised>& raised_in() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
  std::uint64_t handle_ = 0;
};

}  // namespace gauntlet
