// A small out-of-tree PrivateUse1 backend, written the way a vendor's first port looks (cf. PyTorch's
// test/cpp_extensions/open_registration_extension.cpp): a device guard, an allocator and a handful
// of kernels registered with TORCH_LIBRARY_IMPL(aten, PrivateUse1, m).
//
// Gauntlet builds this one file several times (CMakeLists.txt beside it) as test backends that are
// deliberately *not* written for Gauntlet: no gauntlet_backend_* exports, nothing from
// the harness's headers. A harness has to cope with such libraries as they are. Compile definitions
// choose what a build registers:
//
//   TB_NAME                     the library's name, used in messages ("tb_sparse")
//   TB_WITH_FALLBACK            + _copy_from_and_resize and a boxed CPU fallback for every other op
//   TB_WITH_AS_STRIDED          + a native as_strided (views that share the device memory)
//   TB_AS_STRIDED_DROPS_OFFSET  ... that ignores the storage offset (a planted bug)
//   TB_NO_COPY_FROM_AND_RESIZE  ... but without _copy_from_and_resize, which the fallback needs
//   TB_FLOOD                    a fallback that warns on every call, and a _copy_from that
//                               corrupts the heap on a view copy (a source past its storage's
//                               start), after a flood of warnings: glibc aborts the process
//   TB_HOLLOW                   registers nothing at all
//   TB_DEVICE_NAME="npu"        renames PrivateUse1 (c10::register_privateuse1_backend), as a 2.x
//                               vendor library does: its device prints and parses as "npu:0"
//
// Every build but the hollow one registers a PrivateUse1HooksInterface (device count, primary
// context, device of a pointer, storage resize) and a name for its device ("privateuseone" unless
// renamed), as 2.x asks of a PrivateUse1 backend.
//
//   libtb_sparse.so    (none)             guard, allocator, empty, empty_strided, _copy_from,
//                                         add.Tensor, mul.Tensor, relu, neg; nothing else
//   libtb_fallback.so  FALLBACK           sparse + _copy_from_and_resize + CPU fallback
//   libtb_views.so     FALLBACK AS_STRIDED                 the reference twin of tb_buggy
//   libtb_buggy.so     FALLBACK AS_STRIDED DROPS_OFFSET    one kernel ignores storage offsets,
//                                                          and neg crashes on bf16
//   libtb_hollow.so    HOLLOW             an exported dummy function, no registration
//   libtb_npu.so       FALLBACK DEVICE_NAME="npu"      tb_fallback with its device renamed to npu
//   libtb_nocfr.so     FALLBACK NO_COPY_FROM_AND_RESIZE  a fallback that cannot copy results back
//   libtb_flood.so     FALLBACK AS_STRIDED FLOOD       crashes copying views out, warning first
//
// Note: these libraries all register for the one PrivateUse1 key: load at most one per process.

#ifndef TB_NAME
#error "TB_NAME must name the library, e.g. -DTB_NAME=\"tb_sparse\""
#endif

#if defined(TB_HOLLOW)

// A library that loads fine and registers nothing: what a vendor ships when the registration
// translation unit fell out of the build.
extern "C" __attribute__((visibility("default"))) const char* tb_hollow_name() { return TB_NAME; }

#else

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/CPUFallback.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#if defined(TB_WITH_AS_STRIDED)
#include <ATen/ops/as_strided_native.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>

namespace tb {
namespace {

constexpr c10::DeviceType kDeviceType = c10::DeviceType::PrivateUse1;
#if defined(TB_DEVICE_NAME)
constexpr const char* kDeviceName = TB_DEVICE_NAME;
#else
constexpr const char* kDeviceName = "privateuseone";
#endif
constexpr c10::DispatchKeySet kKeySet(c10::DispatchKey::PrivateUse1);

bool on_device(const at::Tensor& t) { return t.device().type() == kDeviceType; }

void check_device_index(c10::DeviceIndex index) {
  TORCH_CHECK(index <= 0, TB_NAME, ": there is one device (", kDeviceName, ":0); ", kDeviceName, ":",
              static_cast<int>(index), " does not exist");
}

// ---------------------------------------------------------------------------------------------
// Device memory and the device guard
// ---------------------------------------------------------------------------------------------

// "Device" memory is host memory from malloc: kernels can read and write it directly.
void device_free(void* ptr) { std::free(ptr); }

class DeviceAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    void* ptr = nbytes == 0 ? nullptr : std::malloc(nbytes);
    TORCH_CHECK(nbytes == 0 || ptr != nullptr, TB_NAME, ": out of memory allocating ", nbytes, " bytes");
    // The context is the pointer itself, so raw_deleter() can free raw allocations too.
    return {ptr, ptr, &device_free, c10::Device(kDeviceType, 0)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &device_free; }
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
};

DeviceAllocator device_allocator;

// One device, one stream, synchronous kernels: the guard has nothing to switch.
struct DeviceGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kDeviceType; }
  c10::Device exchangeDevice(c10::Device d) const override {
    check_device_index(d.index());
    return {kDeviceType, 0};
  }
  c10::Device getDevice() const override { return {kDeviceType, 0}; }
  void setDevice(c10::Device d) const override { check_device_index(d.index()); }
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device d) const noexcept override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override { return s; }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
};

// ---------------------------------------------------------------------------------------------
// Tensor creation and copies
// ---------------------------------------------------------------------------------------------

at::Tensor empty_on_device(at::IntArrayRef size, at::ScalarType dtype,
                           c10::optional<at::MemoryFormat> memory_format = c10::nullopt) {
  return at::detail::empty_generic(size, &device_allocator, kKeySet, dtype, memory_format);
}

at::Tensor empty_memory_format(at::IntArrayRef size, c10::optional<at::ScalarType> dtype,
                               c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                               c10::optional<bool> /*pin_memory*/, c10::optional<at::MemoryFormat> memory_format) {
  TORCH_CHECK(c10::layout_or_default(layout) == at::kStrided, TB_NAME, ": only strided tensors are supported");
  if (device) check_device_index(device->index());
  // Note: empty_generic honours memory_format (channels_last gets channels-last strides).
  return empty_on_device(size, c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride, c10::optional<at::ScalarType> dtype,
                         c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                         c10::optional<bool> /*pin_memory*/) {
  TORCH_CHECK(c10::layout_or_default(layout) == at::kStrided, TB_NAME, ": only strided tensors are supported");
  if (device) check_device_index(device->index());
  return at::detail::empty_strided_generic(size, stride, &device_allocator, kKeySet, c10::dtype_or_default(dtype));
}

// copy_ redispatches every copy that involves this device here: host to device, device to host and
// device to device. This first version copies bytes only: same dtype, same number of elements, both
// sides contiguous (no casts, no broadcasting, no strided gathers).
// Note: data_ptr() already points at the first element, storage offset included.
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking*/) {
  TORCH_CHECK((on_device(self) || self.is_cpu()) && (on_device(dst) || dst.is_cpu()), TB_NAME,
              ": _copy_from copies between ", kDeviceName, " and cpu only, not from ", self.device(), " to ",
              dst.device());
  TORCH_CHECK(self.scalar_type() == dst.scalar_type(), TB_NAME, ": _copy_from does not convert dtypes (",
              self.scalar_type(), " to ", dst.scalar_type(), "): copy first, then convert");
  TORCH_CHECK(self.numel() == dst.numel(), TB_NAME, ": _copy_from needs the same number of elements on both ",
              "sides (", self.sizes(), " to ", dst.sizes(), "); broadcasting copies are not supported");
  TORCH_CHECK(self.is_contiguous() && dst.is_contiguous(), TB_NAME,
              ": _copy_from supports contiguous tensors only (source strides ", self.strides(),
              ", destination strides ", dst.strides(), ")");
#if defined(TB_FLOOD)
  // The planted crash: a view copied out from past its storage's start. A real port's first
  // _copy_from computes such an address wrongly and corrupts the heap; here glibc sees a free of
  // memory that is not the heap's and aborts ("free(): invalid pointer"), after a warning flood.
  if (on_device(self) && dst.is_cpu() && self.storage_offset() > 0 && self.numel() > 0) {
    for (int i = 0; i < 300; ++i) {
      TORCH_WARN(TB_NAME, ": _copy_from of a view at offset ", self.storage_offset() + i,
                 ": as_strided appears to be a view operator");
    }
    static char not_heap[64];
    char* volatile p = not_heap + 16;  // volatile: the compiler would see through it and warn
    std::free(p);
  }
#endif
  // memmove: a device-to-device copy may be between overlapping views of one buffer.
  if (self.numel() > 0) std::memmove(dst.data_ptr(), self.data_ptr(), self.nbytes());
  return dst;
}

// ---------------------------------------------------------------------------------------------
// Compute kernels: the CPU does the work on aliases of the device memory
// ---------------------------------------------------------------------------------------------

// A CPU tensor over a device tensor's memory: same sizes, strides and dtype. Non-owning: it never
// outlives the kernel that made it, and the device tensor keeps the memory alive meanwhile.
at::Tensor cpu_alias(const at::Tensor& t) {
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), at::TensorOptions().dtype(t.scalar_type()));
}

// An input as the CPU kernel sees it: a device tensor through its alias, a 0-dim CPU tensor (how
// Python passes a number, `x + 1`: a "wrapped number") as it is. Anything else is a mistake.
at::Tensor cpu_input(const at::Tensor& t, const char* op) {
  if (on_device(t)) return cpu_alias(t);
  TORCH_CHECK(t.is_cpu() && t.dim() == 0, TB_NAME, ": ", op, " expects ", kDeviceName, " tensors or 0-dim cpu ",
              "scalars, got a ", t.device(), " tensor of shape ", t.sizes());
  return t;
}

// Output: on the device, broadcast shape, promoted dtype (at::result_type knows wrapped numbers).
// Note: every input of a non-empty output is non-empty, so aliases never see a null pointer.
at::Tensor binary_output(const at::Tensor& self, const at::Tensor& other) {
  return empty_on_device(at::infer_size(self.sizes(), other.sizes()), at::result_type(self, other));
}

at::Tensor add_tensor(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  at::Tensor out = binary_output(self, other);
  if (out.numel() == 0) return out;
  at::Tensor out_cpu = cpu_alias(out);
  at::add_out(out_cpu, cpu_input(self, "add"), cpu_input(other, "add"), alpha);
  return out;
}

at::Tensor mul_tensor(const at::Tensor& self, const at::Tensor& other) {
  at::Tensor out = binary_output(self, other);
  if (out.numel() == 0) return out;
  at::Tensor out_cpu = cpu_alias(out);
  at::mul_out(out_cpu, cpu_input(self, "mul"), cpu_input(other, "mul"));
  return out;
}

at::Tensor relu_kernel(const at::Tensor& self) {
  at::Tensor out = empty_on_device(self.sizes(), self.scalar_type());
  if (out.numel() == 0) return out;
  at::Tensor out_cpu = cpu_alias(out);
  at::relu_out(out_cpu, cpu_alias(self));
  return out;
}

at::Tensor neg_kernel(const at::Tensor& self) {
#if defined(TB_AS_STRIDED_DROPS_OFFSET)
  // The planted crash: a bf16 path that frees memory it does not own, as a real port's first
  // bf16 kernel might. glibc aborts the process with "free(): invalid pointer".
  if (self.scalar_type() == at::kBFloat16 && self.numel() > 0) {
    static char not_heap[64];
    char* volatile p = not_heap + 16;  // volatile: the compiler would see through it and warn
    std::free(p);
  }
#endif
  at::Tensor out = empty_on_device(self.sizes(), self.scalar_type());
  if (out.numel() == 0) return out;
  at::Tensor out_cpu = cpu_alias(out);
  at::neg_out(out_cpu, cpu_alias(self));
  return out;
}

#if defined(TB_WITH_FALLBACK)

// ---------------------------------------------------------------------------------------------
// Everything else runs on the CPU
// ---------------------------------------------------------------------------------------------

#if !defined(TB_NO_COPY_FROM_AND_RESIZE)
// at::native::cpu_fallback copies a mutated argument (in-place self, out=) back with
// _copy_from_and_resize(cpu_result, device_arg); an out= result may have a new shape. There is no
// resize_ kernel here, so this resizes only what is cheap to resize: a tensor with no elements
// (gets new memory) or a contiguous one with as many elements (gets new sizes).
// Note: new memory replaces the storage of `dst`, so other views of its old (empty) storage do
// not see it; PyTorch's resize_ would grow the shared storage instead.
at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (self.sizes() != dst.sizes()) {
    c10::TensorImpl* impl = dst.unsafeGetTensorImpl();
    if (dst.numel() == self.numel() && dst.is_contiguous()) {
      impl->set_sizes_contiguous(self.sizes());
    } else {
      TORCH_CHECK(dst.numel() == 0, TB_NAME, ": cannot resize a tensor of shape ", dst.sizes(), " to ", self.sizes(),
                  ": only empty tensors, or contiguous ones with as many elements, can be resized");
      at::Tensor fresh = empty_on_device(self.sizes(), dst.scalar_type());
      impl->set_storage_keep_dtype(fresh.storage());
      impl->set_storage_offset(0);
      impl->set_sizes_contiguous(self.sizes());
    }
  }
  // The CPU kernel may leave its result strided (a transpose); make it contiguous on the CPU side.
  return copy_from(self.is_cpu() ? self.contiguous() : self, dst, false);
}
#endif

// A view's return carries an alias set that is not written to: `view(Tensor(a) self, ...) ->
// Tensor(a)`, or `split(...) -> Tensor(a)[]` where the set sits on the list's element. In-place and
// out= returns are written to (`Tensor(a!)`): those the fallback handles.
bool is_view_alias(const c10::AliasInfo& alias) {
  if (!alias.isWrite() && !alias.beforeSets().empty()) return true;
  for (const c10::AliasInfo& inner : alias.containedTypes()) {
    if (is_view_alias(inner)) return true;
  }
  return false;
}

bool returns_view(const c10::FunctionSchema& schema) {
  for (const c10::Argument& ret : schema.returns()) {
    if (ret.alias_info() != nullptr && is_view_alias(*ret.alias_info())) return true;
  }
  return false;
}

void warn_once(const std::string& op_name) {
#if defined(TB_FLOOD)
  // Every call warns, as some ports do: hundreds of lines before anything goes wrong.
  TORCH_WARN(TB_NAME, ": the operator '", op_name, "' is not supported on ", kDeviceName, " and falls back to the ",
             "CPU; this may hurt performance");
  return;
#endif
  static std::mutex mutex;
  static std::unordered_set<std::string> warned;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!warned.insert(op_name).second) return;
  }
  TORCH_WARN(TB_NAME, ": the operator '", op_name, "' is not supported on ", kDeviceName, " and falls back to the ",
             "CPU; this may hurt performance");
}

// Note: at::native::cpu_fallback runs a view op (view, as_strided, _reshape_alias, unfold,
// view_as_real, ...) on a CPU copy and hands back another copy, with a warning only: writes
// through the "view" are silently lost. Refuse views instead.
void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::string name = c10::toString(op.schema().operator_name());
  TORCH_CHECK(!returns_view(op.schema()), TB_NAME, ": '", name, "' is a view operator without a kernel on ",
              kDeviceName, "; the CPU fallback cannot run it (it would return a copy, not a view)");
  warn_once(name);
  at::native::cpu_fallback(op, stack);
}

#endif  // TB_WITH_FALLBACK

#if defined(TB_WITH_AS_STRIDED)

// A view: new sizes, strides and offset over the same device memory. PyTorch's own
// as_strided_tensorimpl does that for any strided backend; slicing, transpose, select, narrow and
// expand all end here.
at::Tensor as_strided(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride,
                      c10::optional<int64_t> storage_offset) {
#if defined(TB_AS_STRIDED_DROPS_OFFSET)
  // The planted bug: every view starts at the beginning of the storage. x.t() and x.expand() are
  // still right (offset 0); x[1:], x.narrow(0, 1, 2), x.select(0, 1) read the wrong elements.
  (void)storage_offset;
  return at::native::as_strided_tensorimpl(self, size, stride, 0);
#else
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
#endif
}

#endif  // TB_WITH_AS_STRIDED

// ---------------------------------------------------------------------------------------------
// What 2.x asks of a PrivateUse1 backend besides kernels: its hooks, and (optionally) its name
// ---------------------------------------------------------------------------------------------

struct Hooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex index) const override { return index <= 0; }
  c10::DeviceIndex deviceCount() const override { return 1; }
  at::Device getDeviceFromPtr(void*) const override { return {kDeviceType, 0}; }
  // resize_ of a device storage: new memory, the old bytes copied over.
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    c10::DataPtr fresh = device_allocator.allocate(newsize);
    const size_t keep = std::min(newsize, storage.nbytes());
    if (keep > 0) std::memcpy(fresh.get(), storage.data(), keep);
    storage.set_data_ptr_noswap(std::move(fresh));
    storage.set_nbytes(newsize);
  }
};

// At load, as a vendor's library does (torch_npu, OpenReg): the hooks, then the device's name.
const bool registered = [] {
  static Hooks hooks;
  at::RegisterPrivateUse1HooksInterface(&hooks);
  // Without a registered name 2.x has no accelerator, and every backward fails ("Cannot access
  // accelerator device when none is available").
  c10::register_privateuse1_backend(kDeviceName);
  return true;
}();

}  // namespace
}  // namespace tb

C10_REGISTER_GUARD_IMPL(PrivateUse1, tb::DeviceGuardImpl);
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &tb::device_allocator);

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", TORCH_FN(tb::empty_memory_format));
  m.impl("empty_strided", TORCH_FN(tb::empty_strided));
  m.impl("_copy_from", TORCH_FN(tb::copy_from));
  m.impl("add.Tensor", TORCH_FN(tb::add_tensor));
  m.impl("mul.Tensor", TORCH_FN(tb::mul_tensor));
  m.impl("relu", TORCH_FN(tb::relu_kernel));
  m.impl("neg", TORCH_FN(tb::neg_kernel));
#if defined(TB_WITH_FALLBACK) && !defined(TB_NO_COPY_FROM_AND_RESIZE)
  m.impl("_copy_from_and_resize", TORCH_FN(tb::copy_from_and_resize));
#endif
#if defined(TB_WITH_AS_STRIDED)
  m.impl("as_strided", TORCH_FN(tb::as_strided));
#endif
}

#if defined(TB_WITH_FALLBACK)
TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&tb::cpu_fallback>()); }
#endif

#endif  // TB_HOLLOW
