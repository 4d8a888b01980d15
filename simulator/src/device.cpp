// The simulated device itself: its memory, its guard, tensor creation, copies between host and
// device, resizing and the view ops (LIBTORCH-NOTES.md: without native view kernels a fallback
// silently returns copies).
#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/alloc_cpu.h>
#include <torch/library.h>

#include <algorithm>
#include <cstring>

#include "sim_torch.h"
#include "state.h"

namespace gauntlet::sim {

namespace {

constexpr c10::DeviceType kDevice = c10::DeviceType::PrivateUse1;

struct Block {
  void* ptr;
  std::int64_t bytes;
};

// Device memory: host memory with its own accounting and capacity, so the harness sees current
// and peak bytes and out-of-memory errors as it would on a device.
class DeviceAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    const c10::Device device(kDevice, 0);
    if (n == 0) return {nullptr, nullptr, &release, device};
    std::int64_t current = 0;
    if (!State::get().reserve(static_cast<std::int64_t>(n), &current)) {
      const auto& cfg = State::get().config();
      TORCH_CHECK_WITH(OutOfMemoryError, false, "gauntlet_sim: out of device memory: tried to allocate ", n,
                       " bytes with ", current, " of ", cfg.capacity_bytes,
                       " bytes in use (capacity: GAUNTLET_SIM_MEMORY)");
    }
    void* p = c10::alloc_cpu(n);
    return {p, new Block{p, static_cast<std::int64_t>(n)}, &release, device};
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  // Device memory is host memory: a device-to-device copy of raw bytes (clone of a storage).
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }

 private:
  static void release(void* ctx) {
    if (!ctx) return;
    auto* b = static_cast<Block*>(ctx);
    c10::free_cpu(b->ptr);
    State::get().release(b->bytes);
    delete b;
  }
};

// One device, one stream: kernels complete before they return.
struct GuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kDevice; }
  c10::Device exchangeDevice(c10::Device) const override { return {kDevice, 0}; }
  c10::Device getDevice() const override { return {kDevice, 0}; }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.index() <= 0, "gauntlet_sim: device index ", static_cast<int>(d.index()),
                " does not exist (one device)");
  }
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device d) const noexcept override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override { return s; }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

// What 2.x asks of a PrivateUse1 backend besides its guard: hooks, through which the autograd
// engine and torch.accelerator ask whether the device exists and has a context.
struct Hooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex index) const override { return index <= 0; }
  c10::DeviceIndex deviceCount() const override { return 1; }
  c10::DeviceIndex getCurrentDevice() const override { return 0; }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex) const override { return 0; }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex) const override { return 0; }
  void setCurrentDevice(c10::DeviceIndex index) const override { GuardImpl().setDevice({kDevice, index}); }
  at::Device getDeviceFromPtr(void*) const override { return {kDevice, 0}; }
  // resize_ of a device storage (storage.resize_): new device memory, the old bytes copied over.
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    c10::DataPtr fresh = device_allocator()->allocate(newsize);
    const size_t keep = std::min(newsize, storage.nbytes());
    if (keep > 0) std::memcpy(fresh.get(), storage.data(), keep);
    storage.set_data_ptr_noswap(std::move(fresh));
    storage.set_nbytes(newsize);
  }
};

// 2.x counts a PrivateUse1 backend as the accelerator only once its name is registered (the
// autograd engine asks for the accelerator on every backward): the simulator keeps PyTorch's own
// name for the key, so its device prints as privateuseone:0 as before.
const bool hooks_registered = [] {
  static Hooks hooks;
  at::RegisterPrivateUse1HooksInterface(&hooks);
  c10::register_privateuse1_backend("privateuseone");
  return true;
}();

constexpr c10::DispatchKeySet kKeys(c10::DispatchKey::PrivateUse1);

at::Tensor empty(at::IntArrayRef size, c10::optional<at::ScalarType> dtype, c10::optional<at::Layout>,
                 c10::optional<at::Device>, c10::optional<bool>, c10::optional<at::MemoryFormat> memory_format) {
  return at::detail::empty_generic(size, device_allocator(), kKeys, c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride, c10::optional<at::ScalarType> dtype,
                         c10::optional<at::Layout>, c10::optional<at::Device>, c10::optional<bool>) {
  return at::detail::empty_strided_generic(size, stride, device_allocator(), kKeys, c10::dtype_or_default(dtype));
}

// Every copy that touches the device: host to device and back over the host link, device to
// device at HBM bandwidth. This is what charges a fallback's transfers.
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking*/) {
  at::Tensor src_view = on_device(self) ? cpu_alias(self) : self;
  // A lazily conjugated or negated device tensor (the backward of view_as_real/view_as_complex
  // makes them) keeps those bits out of its memory: the CPU alias takes them over, and the CPU copy
  // applies them (register_lazy_bit_copies sends such copies here).
  if (on_device(self) && self.is_conj()) src_view = src_view.conj();
  if (on_device(self) && self.is_neg()) src_view = at::_neg_view(src_view);
  TORCH_CHECK(!on_device(dst) || (!dst.is_conj() && !dst.is_neg()),
              "gauntlet_sim: a copy into a lazily conjugated or negated device tensor is not supported");
  at::Tensor dst_view = on_device(dst) ? cpu_alias(dst) : dst;
  dst_view.copy_(src_view);
  Work w;
  const double bytes = double(self.numel()) * double(self.element_size());
  if (!on_device(self)) {
    w.engine = Engine::HostToDevice;
    w.bytes = bytes;
  } else if (!on_device(dst)) {
    w.engine = Engine::DeviceToHost;
    w.bytes = bytes;
  } else {
    w.engine = Engine::Vector;
    w.bytes = bytes + double(dst.numel()) * double(dst.element_size());
  }
  State::get().charge(w);
  return dst;
}

const at::Tensor& resize_device(const at::Tensor& self, at::IntArrayRef size,
                                c10::optional<at::MemoryFormat> memory_format) {
  at::native::resize_impl_cpu_(self.unsafeGetTensorImpl(), size, c10::nullopt);
  if (memory_format) self.unsafeGetTensorImpl()->empty_tensor_restride(*memory_format);
  return self;
}

// How a fallback's out= result comes back: with the layout the CPU kernel gave it.
at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes())
    at::native::resize_impl_cpu_(dst.unsafeGetTensorImpl(), self.sizes(), self.strides());
  return copy_from(self, dst, false);
}

}  // namespace

c10::Allocator* device_allocator() {
  static DeviceAllocator allocator;
  return &allocator;
}

at::Tensor cpu_alias(const at::Tensor& t) {
  if (t.numel() == 0) return at::empty(t.sizes(), t.options().device(c10::kCPU));
  c10::Storage keep = t.storage();
  return at::from_blob(
      t.data_ptr(), t.sizes(), t.strides(), [keep](void*) mutable { keep = {}; },
      t.options().device(c10::kCPU).requires_grad(false));
}

at::Tensor device_copy_of(const at::Tensor& cpu) {
  at::Tensor src = cpu.is_non_overlapping_and_dense() ? cpu : cpu.contiguous();
  at::Tensor out =
      at::detail::empty_strided_generic(src.sizes(), src.strides(), device_allocator(), kKeys, src.scalar_type());
  if (src.numel() > 0) cpu_alias(out).copy_(src);
  return out;
}

std::string dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kDouble:
      return "f64";
    case at::kFloat:
      return "f32";
    case at::kHalf:
      return "f16";
    case at::kBFloat16:
      return "bf16";
    case at::kLong:
      return "i64";
    case at::kInt:
      return "i32";
    case at::kShort:
      return "i16";
    case at::kChar:
      return "i8";
    case at::kByte:
      return "u8";
    case at::kBool:
      return "bool";
    default:
      return c10::toString(t);
  }
}

// Note [Lazy conjugation]: libtorch's Conjugate and Negative fallbacks materialise a lazily
// conjugated (or negated) argument with a clone, and a clone copies through _copy_from again: on a
// device whose _copy_from is reached through those keys that never ends (a stack overflow in
// view_as_real's backward). Real backends let _copy_from through both keys and apply the bits in
// their copy, as copy_from above does.
void register_lazy_bit_copies(torch::Library& conj, torch::Library& neg) {
  for (torch::Library* lib : {&conj, &neg}) {
    lib->impl("_copy_from", torch::CppFunction::makeFallthrough());
    lib->impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
  }
}

void register_device_ops(torch::Library& m) {
  m.impl("empty.memory_format", TORCH_FN(empty));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  m.impl("resize_", TORCH_FN(resize_device));
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("unfold", TORCH_FN(at::native::unfold));
  // Complex views (stft, istft, real models' view_as_complex/view_as_real): the same device memory
  // read as (re, im) pairs; a CPU fallback cannot make a view, and these have no composite kernel.
  m.impl("view_as_complex", TORCH_FN(at::native::view_as_complex));
  m.impl("view_as_real", TORCH_FN(at::native::view_as_real));
}

}  // namespace gauntlet::sim
