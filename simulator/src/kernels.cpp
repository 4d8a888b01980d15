// The simulated device's kernels and its CPU fallback.
//
// Note [Simulated kernels]: a kernel computes on CPU views of device memory (cpu_alias) with the
// accelerator's numerics (Note [Accelerator numerics]), charges its cost to the device clock
// (Note [Simulated time]) and applies any configured fault. One boxed function serves every op
// in kKernels, so adding an op is one line; ops with their own numerics (tree sums, softmax with
// the approximate exp) have a handler. Every other op reaches the fallback: it warns once per op,
// records the op for the harness, and runs on the CPU through at::native::cpu_fallback, paying
// host transfers both ways.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <c10/util/Exception.h>
#include <torch/library.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "sim_torch.h"
#include "state.h"

namespace gauntlet::sim {

namespace {

enum class Kind : std::uint8_t { Plain, Matmul, Conv, ConvBackward, Transcendental };

struct KernelInfo {
  Kind kind = Kind::Plain;
  std::set<std::string> operands;  // Matmul/Conv: the arguments rounded to bf16 (never the bias)
};

// Base names of the aten ops with a simulator kernel (every overload: functional, in-place
// "add_", out=). An op here that has no CPU kernel in this libtorch (a composite) is not registered:
// it decomposes into ops that are.
const std::map<std::string, KernelInfo>& kernel_table() {
  static const std::map<std::string, KernelInfo> table = [] {
    std::map<std::string, KernelInfo> t;
    for (const char* op :
         {"abs", "neg", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos",
          "atan", "sinh", "cosh", "erfc", "relu", "reciprocal", "floor", "ceil", "round", "trunc", "sign", "sgn",
          "frac", "leaky_relu", "elu", "hardtanh", "softplus", "hardsigmoid", "hardswish", "clamp", "clamp_min",
          "clamp_max", "add", "sub", "mul", "div", "remainder", "fmod", "pow", "maximum", "minimum", "atan2", "eq",
          "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not", "logical_xor", "bitwise_and",
          "bitwise_or", "bitwise_xor", "bitwise_not", "where", "lerp", "addcmul", "addcdiv", "amax", "amin", "max",
          "min", "argmax", "argmin", "prod", "any", "all", "cumsum", "cat", "index_select", "gather", "masked_fill",
          "fill", "fill_", "zero_", "_local_scalar_dense", "threshold_backward", "sigmoid_backward", "tanh_backward",
          "gelu_backward", "silu_backward", "_softmax_backward_data", "_log_softmax_backward_data", "native_layer_norm",
          "native_layer_norm_backward", "sum", "mean", "_softmax", "_log_softmax", "isnan", "nan_to_num",
          "embedding_dense_backward", "index", "sort", "topk",
          // running statistics are updated in place without an alias annotation: a fallback's
          // copies would lose the update (a kernel works on the device memory itself)
          "native_batch_norm", "native_batch_norm_backward",
          // and the name AOT autograd's graphs call it by (torch.compile: docs/compile-path.md)
          "_native_batch_norm_legit", "nansum", "std", "var", "var_mean", "std_mean", "scatter_add", "scatter",
          "avg_pool2d", "avg_pool2d_backward", "max_pool2d_with_indices", "max_pool2d_with_indices_backward",
          "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward", "masked_select", "nonzero", "flip", "roll", "tril",
          "triu", "cumprod", "logsumexp", "norm", "linalg_vector_norm", "mse_loss", "mse_loss_backward",
          "smooth_l1_loss", "huber_loss", "l1_loss",
          // what real models run beyond those (the op table's corpus family): padding, 3-d
          // adaptive pooling, gated and parametric activations, grid sampling, im2col/col2im,
          // group norm, advanced-index writes and the fused attention and encoder layer; recurrent
          // layers and cells decompose into matrix products and activations that have kernels
          "constant_pad_nd", "reflection_pad1d", "reflection_pad2d", "reflection_pad3d", "reflection_pad1d_backward",
          "reflection_pad2d_backward", "reflection_pad3d_backward", "replication_pad1d", "replication_pad2d",
          "replication_pad3d", "replication_pad1d_backward", "replication_pad2d_backward", "replication_pad3d_backward",
          "_adaptive_avg_pool3d", "_adaptive_avg_pool3d_backward", "glu", "glu_backward", "prelu", "_prelu_kernel",
          "_prelu_kernel_backward", "prelu_backward", "grid_sampler_2d", "grid_sampler_2d_backward", "grid_sampler_3d",
          "grid_sampler_3d_backward", "im2col", "col2im", "native_group_norm", "native_group_norm_backward",
          "index_put", "_index_put_impl", "_native_multi_head_attention", "_transformer_encoder_layer_fwd",
          "_transform_bias_rescale_qkv", "clamp_min_backward", "floor_divide"}) {
      t[op] = {};
    }
    for (const char* op : {"exp", "exp2", "tanh", "sigmoid", "gelu", "silu", "erf"}) t[op] = {Kind::Transcendental, {}};
    t["mm"] = {Kind::Matmul, {"self", "mat2"}};
    t["bmm"] = {Kind::Matmul, {"self", "mat2"}};
    t["addmm"] = {Kind::Matmul, {"mat1", "mat2"}};
    t["baddbmm"] = {Kind::Matmul, {"batch1", "batch2"}};
    t["addbmm"] = {Kind::Matmul, {"batch1", "batch2"}};
    t["mv"] = {Kind::Matmul, {"self", "vec"}};
    t["addmv"] = {Kind::Matmul, {"mat", "vec"}};
    t["dot"] = {Kind::Matmul, {"self", "tensor"}};
    t["convolution"] = {Kind::Conv, {"input", "weight"}};
    t["convolution_backward"] = {Kind::ConvBackward, {"grad_output", "input", "weight"}};
    // What aten::_convolution (every traced convolution) reaches on a PrivateUse1 tensor: real
    // out-of-tree backends register these two; their handlers compute with the CPU's convolution.
    t["convolution_overrideable"] = {Kind::Conv, {"input", "weight"}};
    t["convolution_backward_overrideable"] = {Kind::ConvBackward, {"grad_output", "input", "weight"}};
    return t;
  }();
  return table;
}

// Registered although they have no CPU kernel: on PrivateUse1 the composites convolution and
// convolution_backward would reach convolution_overrideable, and a traced graph's _convolution
// reaches it directly (Note [Overrideable convolution]).
const std::set<std::string> kForced = {"convolution", "convolution_backward", "convolution_overrideable",
                                       "convolution_backward_overrideable"};

std::vector<std::string>& registered() {
  static std::vector<std::string> names;
  return names;
}

std::string full_name(const c10::FunctionSchema& s) {
  return s.overload_name().empty() ? s.name() : s.name() + "." + s.overload_name();
}

std::string base_name(const c10::FunctionSchema& s) {
  const std::string& n = s.name();
  return n.rfind("aten::", 0) == 0 ? n.substr(6) : n;
}

const KernelInfo& info_of(const c10::FunctionSchema& s) {
  std::string base = base_name(s);
  auto it = kernel_table().find(base);
  if (it == kernel_table().end() && base.back() == '_') it = kernel_table().find(base.substr(0, base.size() - 1));
  return it->second;
}

bool returns_view(const c10::FunctionSchema& s) {
  for (const auto& r : s.returns()) {
    if (r.alias_info() && !r.alias_info()->isWrite()) return true;
  }
  return false;
}

// ---- numerics ----

// Rounds floating values to `bits` fraction bits (round half away from zero in magnitude),
// keeping NaN and Inf. For f32 this is a reduced-precision unit's result: relative error
// <= 2^-(bits+1). f64 values are computed in f32 first (the device has no f64 unit).
at::Tensor round_fraction(const at::Tensor& t, int bits) {
  if (!at::isFloatingType(t.scalar_type()) || bits >= 23) return t;
  at::Tensor x = t.to(at::kFloat).contiguous();
  at::Tensor i = x.view(at::kInt);
  const std::int32_t drop = 23 - bits;
  const std::int32_t half = std::int32_t{1} << (drop - 1);
  const std::int32_t mask = ~((std::int32_t{1} << drop) - 1);
  at::Tensor rounded = i.add(half).bitwise_and(mask);
  at::Tensor out = at::where(at::isfinite(x), rounded, i).view(at::kFloat);
  return out.to(t.scalar_type()).reshape(t.sizes());
}

at::Tensor round_like(const at::Tensor& t, int bits) {
  if (!at::isFloatingType(t.scalar_type())) return t;
  at::Tensor r = round_fraction(t, bits);
  at::Tensor out = at::empty_strided(t.sizes(), t.strides(), t.options());
  out.copy_(r);
  return out;
}

// Fraction bits that "compute in a lower precision" keeps: half the dtype's.
int lower_precision_bits(at::ScalarType t) {
  switch (t) {
    case at::kDouble:
      return 23;  // f64 -> f32
    case at::kFloat:
      return 7;  // f32 -> bf16
    case at::kHalf:
      return 5;
    case at::kBFloat16:
      return 3;
    default:
      return 23;
  }
}

at::Tensor to_bf16_operand(const at::Tensor& t) {
  if (t.scalar_type() != at::kFloat) return t;
  return t.to(at::kBFloat16).to(at::kFloat);
}

bool numerics_apply(const at::Tensor& t) {
  return t.defined() && t.scalar_type() != at::kDouble && at::isFloatingType(t.scalar_type());
}

// Sum over `dims` adding pairwise in a balanced tree; 16-bit inputs accumulate in f32.
at::Tensor tree_sum(const at::Tensor& self, at::IntArrayRef dims_in, bool keepdim, at::ScalarType out_dtype) {
  const std::int64_t nd = self.dim();
  std::vector<bool> reduced(static_cast<std::size_t>(std::max<std::int64_t>(nd, 1)), dims_in.empty());
  for (std::int64_t d : dims_in)
    reduced[static_cast<std::size_t>(c10::maybe_wrap_dim(d, std::max<std::int64_t>(nd, 1)))] = true;
  std::vector<std::int64_t> perm, kept_sizes, out_sizes;
  std::int64_t n = 1;
  for (std::int64_t d = 0; d < nd; ++d) {
    if (!reduced[static_cast<std::size_t>(d)]) {
      perm.push_back(d);
      kept_sizes.push_back(self.size(d));
    }
  }
  for (std::int64_t d = 0; d < nd; ++d) {
    if (reduced[static_cast<std::size_t>(d)]) {
      perm.push_back(d);
      n *= self.size(d);
    }
    if (keepdim) out_sizes.push_back(reduced[static_cast<std::size_t>(d)] ? 1 : self.size(d));
  }
  if (!keepdim) out_sizes = kept_sizes;
  const at::ScalarType acc = self.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  std::int64_t m = 1;
  for (std::int64_t s : kept_sizes) m *= s;
  at::Tensor x = (nd == 0 ? self.reshape({1}) : self.permute(perm)).to(acc).reshape({m, n});
  while (x.size(1) > 1) {
    const std::int64_t w = x.size(1), h = w / 2;
    at::Tensor s = x.narrow(1, 0, h) + x.narrow(1, h, h);
    if (w % 2) s = at::cat({s, x.narrow(1, 2 * h, 1)}, 1);
    x = s;
  }
  return x.reshape(out_sizes).to(out_dtype);
}

std::vector<std::int64_t> dims_of(const c10::IValue& v) {
  if (v.isNone()) return {};
  return v.toIntVector();
}

// Handlers: ops whose numerics differ from the CPU kernel's; they read the (CPU-converted)
// arguments and return the results. nullopt: use the CPU kernel.
using Handler = std::function<c10::optional<std::vector<c10::IValue>>(const std::vector<c10::IValue>&)>;

c10::optional<std::vector<c10::IValue>> sum_handler(const std::vector<c10::IValue>& a, bool mean, bool has_dims) {
  const Numerics& num = State::get().config().numerics;
  const at::Tensor self = a[0].toTensor();
  if (!num.tree_reduction || !at::isFloatingType(self.scalar_type()) || self.numel() == 0 || self.dim() == 0) {
    return c10::nullopt;
  }
  std::vector<std::int64_t> dims = has_dims ? dims_of(a[1]) : std::vector<std::int64_t>{};
  const bool keepdim = has_dims ? a[2].toBool() : false;
  const c10::IValue& dtype_arg = has_dims ? a[3] : a[1];
  const at::ScalarType out_dtype = dtype_arg.isNone() ? self.scalar_type() : dtype_arg.toScalarType();
  if (!at::isFloatingType(out_dtype)) return c10::nullopt;
  const at::ScalarType acc = self.scalar_type() == at::kDouble || out_dtype == at::kDouble ? at::kDouble : at::kFloat;
  at::Tensor s = tree_sum(self, dims, keepdim, acc);
  if (mean) {
    std::int64_t n = 1;
    if (dims.empty()) {
      n = self.numel();
    } else {
      for (std::int64_t d : dims) n *= self.size(c10::maybe_wrap_dim(d, self.dim()));
    }
    s = s / double(n);
  }
  return std::vector<c10::IValue>{s.to(out_dtype)};
}

c10::optional<std::vector<c10::IValue>> softmax_handler(const std::vector<c10::IValue>& a, bool log) {
  const Numerics& num = State::get().config().numerics;
  const at::Tensor self = a[0].toTensor();
  if (!num.approx_transcendental || !numerics_apply(self)) return c10::nullopt;
  const std::int64_t dim = a[1].toInt();
  const bool half_to_float = a[2].toBool();
  const at::ScalarType out_dtype = half_to_float ? at::kFloat : self.scalar_type();
  at::Tensor x = self.to(at::kFloat);
  at::Tensor shifted = x - std::get<0>(x.max(dim, true));
  at::Tensor e = round_fraction(shifted.exp(), num.approx_bits);
  at::Tensor out = log ? shifted - e.sum(dim, true).log() : e / e.sum(dim, true);
  return std::vector<c10::IValue>{out.to(out_dtype)};
}

// Note [Overrideable convolution]: aten::_convolution, which every traced convolution calls (13
// arguments, not conv2d), picks its implementation by device; for a device it does not know
// (PrivateUse1) that is convolution_overrideable and, for the gradient,
// convolution_backward_overrideable, whose default kernels throw and which no CPU kernel or boxed
// fallback serves. Out-of-tree backends register both; so does the simulator: the arguments
// (already CPU views, operands rounded as for any convolution) go to the CPU's convolution.
c10::optional<std::vector<c10::IValue>> conv_overrideable_handler(const std::vector<c10::IValue>& a) {
  // (input, weight, bias?, stride, padding, dilation, transposed, output_padding, groups)
  const c10::optional<at::Tensor> bias = a[2].isNone() ? c10::nullopt : c10::optional<at::Tensor>(a[2].toTensor());
  return std::vector<c10::IValue>{at::convolution(a[0].toTensor(), a[1].toTensor(), bias, a[3].toIntVector(),
                                                  a[4].toIntVector(), a[5].toIntVector(), a[6].toBool(),
                                                  a[7].toIntVector(), a[8].toInt())};
}

c10::optional<std::vector<c10::IValue>> conv_backward_overrideable_handler(const std::vector<c10::IValue>& a) {
  // (grad_output, input, weight, stride, padding, dilation, transposed, output_padding, groups,
  //  output_mask) -> (grad_input, grad_weight, grad_bias)
  const at::Tensor weight = a[2].toTensor();
  const bool transposed = a[6].toBool();
  const std::int64_t groups = a[8].toInt();
  const std::vector<std::int64_t> bias_sizes{transposed ? weight.size(1) * groups : weight.size(0)};
  const std::vector<bool> mask_v = a[9].toBoolList().vec();
  std::array<bool, 3> mask{mask_v.at(0), mask_v.at(1), mask_v.at(2)};
  auto [gi, gw, gb] =
      at::convolution_backward(a[0].toTensor(), a[1].toTensor(), weight, bias_sizes, a[3].toIntVector(),
                               a[4].toIntVector(), a[5].toIntVector(), transposed, a[7].toIntVector(), groups, mask);
  return std::vector<c10::IValue>{gi, gw, gb};
}

const std::map<std::string, Handler>& handlers() {
  static const std::map<std::string, Handler> h = {
      {"aten::sum", [](const auto& a) { return sum_handler(a, false, false); }},
      {"aten::sum.dim_IntList", [](const auto& a) { return sum_handler(a, false, true); }},
      {"aten::mean", [](const auto& a) { return sum_handler(a, true, false); }},
      {"aten::mean.dim", [](const auto& a) { return sum_handler(a, true, true); }},
      {"aten::_softmax", [](const auto& a) { return softmax_handler(a, false); }},
      {"aten::_log_softmax", [](const auto& a) { return softmax_handler(a, true); }},
      {"aten::convolution_overrideable", conv_overrideable_handler},
      {"aten::convolution_backward_overrideable", conv_backward_overrideable_handler},
  };
  return h;
}

// ---- faults ----

struct FaultPlan {
  double slowdown = 1.0;
  bool fallback = false;
  bool precision = false;
  std::vector<const FaultRule*> outputs;  // bias, flip, nan
};

struct CallFacts {
  std::string dtype;
  std::int64_t numel = 0;
};

CallFacts facts_of(const c10::FunctionSchema& schema, torch::jit::Stack* stack) {
  CallFacts f;
  auto args = torch::jit::last(*stack, schema.arguments().size());
  auto see = [&](const at::Tensor& t) {
    if (!t.defined()) return;
    if (f.dtype.empty()) f.dtype = dtype_name(t.scalar_type());
    f.numel = std::max(f.numel, t.numel());
  };
  for (const auto& v : args) {
    if (v.isTensor()) {
      see(v.toTensor());
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList().vec()) see(t);
    }
  }
  return f;
}

// Acts on the faults that stop or slow the call now; returns the ones that change its results.
FaultPlan plan_faults(const std::string& op, const CallFacts& facts) {
  FaultPlan plan;
  const FaultSpec& spec = State::get().config().faults;
  if (spec.empty()) return plan;
  for (const FaultRule* r : spec.match(op, facts.dtype, facts.numel)) {
    switch (r->kind) {
      case FaultKind::Segv:
        std::raise(SIGSEGV);
        break;
      case FaultKind::Abort:
        std::abort();
      case FaultKind::Hang:
        for (;;) pause();
      case FaultKind::Oom:
        TORCH_CHECK_WITH(OutOfMemoryError, false, "gauntlet_sim: out of device memory in ", op,
                         " (injected fault: ", r->text, ")");
        break;
      case FaultKind::Sleep:
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(r->factor));
        break;
      case FaultKind::Slow:
        plan.slowdown *= r->factor;
        break;
      case FaultKind::Fallback:
        plan.fallback = true;
        break;
      case FaultKind::Precision:
        plan.precision = true;
        break;
      case FaultKind::Bias:
      case FaultKind::Flip:
      case FaultKind::NaN:
        plan.outputs.push_back(r);
        break;
    }
  }
  return plan;
}

// Changes a result (a CPU tensor, possibly viewing device memory) as a faulty kernel would.
void apply_output_faults(const FaultPlan& plan, at::Tensor& t, bool first_output) {
  if (!t.defined() || t.numel() == 0) return;
  const bool floating = at::isFloatingType(t.scalar_type());
  if (plan.precision && floating) t.copy_(round_fraction(t, lower_precision_bits(t.scalar_type())));
  for (const FaultRule* r : plan.outputs) {
    const std::int64_t mid = t.numel() / 2;
    at::Tensor flat = t.reshape({-1});  // a view for dense results; written back below if not
    const bool is_view = flat.data_ptr() == t.data_ptr() && t.is_contiguous();
    if (!is_view) flat = t.contiguous().reshape({-1});
    switch (r->kind) {
      case FaultKind::Bias:
        if (floating) {
          at::Tensor a = flat.to(at::kDouble).abs();
          double m = at::where(at::isfinite(a), a, at::zeros_like(a)).max().item<double>();
          flat.add_(r->factor * (m > 0 ? m : 1.0));
        }
        break;
      case FaultKind::Flip:
        if (!first_output) break;
        if (t.scalar_type() == at::kBool) {
          flat[mid].fill_(!flat[mid].item<bool>());
        } else if (floating) {
          const double v = flat[mid].item<double>();
          flat[mid].fill_(std::isfinite(v) ? v + std::max(1.0, std::abs(v)) : 0.0);
        } else {
          flat[mid].add_(1);
        }
        break;
      case FaultKind::NaN:
        if (floating) flat[mid].fill_(std::numeric_limits<double>::quiet_NaN());
        break;
      default:
        break;
    }
    if (!is_view) t.copy_(flat.reshape(t.sizes()));
  }
}

// ---- cost ----

double nbytes(const at::Tensor& t) { return t.defined() ? double(t.numel()) * double(t.element_size()) : 0.0; }

Precision precision_of(at::ScalarType t, bool autocast) {
  if (t == at::kDouble) return Precision::Fp64;
  if (t == at::kHalf || t == at::kBFloat16 || (t == at::kFloat && autocast)) return Precision::Low;
  return Precision::Fp32;
}

// ---- the boxed kernel ----

at::Tensor to_cpu_arg(const at::Tensor& t) { return on_device(t) ? cpu_alias(t) : t; }

void run_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack, const std::string& name,
                  const FaultPlan& plan);

// A native kernel's arguments, moved to the CPU (device tensors as CPU aliases), and what the
// cost model needs of them.
struct Marshalled {
  struct OutArg {
    at::Tensor device, cpu;
  };
  std::vector<OutArg> outs;         // out= arguments: computed into CPU tensors, copied back
  std::vector<at::Tensor> inplace;  // in-place arguments: CPU aliases of device memory
  std::vector<at::Tensor> device_inplace;
  double in_bytes = 0;
  std::vector<at::Tensor> tensor_args;  // for the cost model, in argument order (CPU)
  std::vector<at::Tensor> operands;     // Matmul/Conv operands, in argument order
  bool autocast = false;
};

// Replaces the op's arguments on the stack (from `first`) by CPU tensors, applying the
// simulated numerics to operands and the precision fault to inputs.
Marshalled marshal_args(const c10::FunctionSchema& schema, torch::jit::Stack* stack, std::size_t first,
                        const KernelInfo& info, const Numerics& num, const FaultPlan& plan) {
  Marshalled m;
  const std::size_t n_args = schema.arguments().size();
  for (std::size_t i = 0; i < n_args; ++i) {
    const c10::Argument& arg = schema.arguments()[i];
    c10::IValue& v = (*stack)[first + i];
    const bool written = arg.alias_info() && arg.alias_info()->isWrite();
    if (v.isTensor()) {
      const at::Tensor t = v.toTensor();
      if (!t.defined()) continue;
      if (written && arg.kwarg_only()) {
        at::Tensor cpu = at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kCPU));
        m.outs.push_back({t, cpu});
        v = cpu;
        continue;
      }
      at::Tensor c = to_cpu_arg(t);
      if (written) {
        m.inplace.push_back(c);
        m.device_inplace.push_back(t);
      } else {
        m.in_bytes += nbytes(c);
      }
      const bool operand = info.operands.count(arg.name()) > 0;
      if (operand) m.operands.push_back(c);
      if (operand && num.bf16_matmul && c.scalar_type() == at::kFloat) {
        c = to_bf16_operand(c);
        m.autocast = true;
      } else if (plan.precision && !written && numerics_apply(c)) {
        c = round_like(c, lower_precision_bits(c.scalar_type()));
      }
      m.tensor_args.push_back(c);
      v = c;
    } else if (v.isTensorList()) {
      c10::List<at::Tensor> list;
      for (const at::Tensor& t : v.toTensorList().vec()) {
        at::Tensor c = to_cpu_arg(t);
        m.in_bytes += nbytes(c);
        m.tensor_args.push_back(c);
        list.push_back(c);
      }
      v = list;
    } else if (v.isList() && arg.type()->kind() == c10::TypeKind::ListType) {
      // Tensor?[] (advanced indexing)
      auto elem = arg.type()->expectRef<c10::ListType>().getElementType();
      if (elem->kind() == c10::TypeKind::OptionalType) {
        c10::List<c10::optional<at::Tensor>> list;
        for (const c10::IValue& e : v.toListRef()) {
          if (e.isTensor()) {
            at::Tensor c = to_cpu_arg(e.toTensor());
            m.in_bytes += nbytes(c);
            list.push_back(c);
          } else {
            list.push_back(c10::nullopt);
          }
        }
        v = list;
      }
    }
  }

  return m;
}

// The op's results, pushed back onto the stack as device tensors (in-place and out= arguments
// as the device tensors they alias), with the output faults and approximate numerics applied;
// returns the bytes written and the largest output's elements.
std::pair<double, double> return_results(std::vector<c10::IValue>& results, torch::jit::Stack* stack, Marshalled& m,
                                         const KernelInfo& info, const Numerics& num, const FaultPlan& plan) {
  double out_bytes = 0, out_numel = 0;
  bool first_output = true;
  auto finish = [&](const at::Tensor& r) -> at::Tensor {
    at::Tensor cpu = r;
    const bool approximate = info.kind == Kind::Transcendental && num.approx_transcendental && numerics_apply(cpu);
    for (std::size_t k = 0; k < m.inplace.size(); ++k) {
      if (cpu.unsafeGetTensorImpl() == m.inplace[k].unsafeGetTensorImpl()) {
        if (approximate) cpu.copy_(round_fraction(cpu, num.approx_bits));
        apply_output_faults(plan, cpu, first_output);
        out_bytes += nbytes(cpu);
        out_numel = std::max(out_numel, double(cpu.numel()));
        return m.device_inplace[k];
      }
    }
    for (Marshalled::OutArg& o : m.outs) {
      if (cpu.unsafeGetTensorImpl() == o.cpu.unsafeGetTensorImpl()) {
        if (approximate) cpu.copy_(round_fraction(cpu, num.approx_bits));
        apply_output_faults(plan, cpu, first_output);
        // An out= result keeps the layout the CPU kernel chose for it (a transposed input's, say).
        if (o.device.sizes() != cpu.sizes()) {
          at::native::resize_impl_cpu_(o.device.unsafeGetTensorImpl(), cpu.sizes(), cpu.strides());
        }
        if (cpu.numel() > 0) cpu_alias(o.device).copy_(cpu);
        out_bytes += nbytes(cpu);
        out_numel = std::max(out_numel, double(cpu.numel()));
        return o.device;
      }
    }
    if (approximate) cpu = round_like(cpu, num.approx_bits);
    if (!plan.outputs.empty() || plan.precision) {
      cpu = cpu.is_non_overlapping_and_dense() ? cpu.clone(at::MemoryFormat::Preserve) : cpu.contiguous();
      apply_output_faults(plan, cpu, first_output);
    }
    out_bytes += nbytes(cpu);
    out_numel = std::max(out_numel, double(cpu.numel()));
    return device_copy_of(cpu);
  };
  for (c10::IValue& r : results) {
    if (r.isTensor()) {
      if (r.toTensor().defined()) r = finish(r.toTensor());
      first_output = false;
    } else if (r.isTensorList()) {
      c10::List<at::Tensor> list;
      for (const at::Tensor& t : r.toTensorList().vec()) list.push_back(finish(t));
      r = list;
      first_output = false;
    }
    stack->push_back(std::move(r));
  }

  return {out_bytes, out_numel};
}

// The device clock: the op's work by its kind, charged to the simulated device.
void charge_work(const KernelInfo& info, const Marshalled& m, double out_bytes, double out_numel,
                 const FaultPlan& plan) {
  Work w;
  w.bytes = m.in_bytes + out_bytes;
  double in_numel = 0;
  for (const at::Tensor& t : m.tensor_args) in_numel = std::max(in_numel, double(t.numel()));
  const at::ScalarType dtype = m.tensor_args.empty() ? at::kFloat : m.tensor_args.front().scalar_type();
  switch (info.kind) {
    case Kind::Matmul: {
      // A[..., M, K] x B[..., K, N] is 2*M*K*N per batch: 2 * numel(A) * N (N = 1 for vectors).
      const double n = m.operands.size() >= 2 && m.operands[1].dim() >= 2 ? double(m.operands[1].size(-1)) : 1.0;
      w.engine = Engine::Tensor;
      w.precision = precision_of(dtype, m.autocast);
      w.flops = m.operands.empty() ? 0.0 : 2.0 * double(m.operands[0].numel()) * n;
      break;
    }
    case Kind::Conv:
    case Kind::ConvBackward: {
      // 2 * output elements * (input channels per group * kernel elements), twice for backward.
      // m.operands: (input, weight) forward, (grad_output, input, weight) backward.
      if (m.operands.empty()) break;
      const at::Tensor& weight = m.operands.back();
      const double per_out =
          weight.dim() > 0 && weight.size(0) > 0 ? double(weight.numel()) / double(weight.size(0)) : 1.0;
      const double outs_n = info.kind == Kind::Conv ? out_numel : double(m.operands.front().numel());
      w.engine = Engine::Tensor;
      w.precision = precision_of(dtype, m.autocast);
      w.flops = 2.0 * outs_n * per_out * (info.kind == Kind::Conv ? 1.0 : 2.0);
      break;
    }
    case Kind::Transcendental:
      w.engine = Engine::Vector;
      w.flops = 8.0 * std::max(in_numel, out_numel);
      break;
    case Kind::Plain:
      w.engine = Engine::Vector;
      w.flops = std::max(in_numel, out_numel);
      break;
  }
  State::get().charge(w, plan.slowdown);
}

void native_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const std::string name = full_name(schema);
  const CallFacts facts = facts_of(schema, stack);
  const FaultPlan plan = plan_faults(name, facts);
  if (plan.fallback) return run_fallback(op, stack, name, plan);

  const KernelInfo& info = info_of(schema);
  const Numerics& num = State::get().config().numerics;
  const std::size_t n_args = schema.arguments().size();
  const std::size_t first = stack->size() - n_args;
  Marshalled m = marshal_args(schema, stack, first, info, num, plan);

  // Compute on the CPU views, or with the op's own numerics.
  std::vector<c10::IValue> results;
  auto h = handlers().find(name);
  c10::optional<std::vector<c10::IValue>> handled;
  if (h != handlers().end()) {
    std::vector<c10::IValue> args(stack->begin() + static_cast<std::ptrdiff_t>(first), stack->end());
    handled = h->second(args);
  }
  if (handled) {
    torch::jit::drop(*stack, n_args);
    results = std::move(*handled);
  } else {
    op.callBoxed(stack);
    results.assign(stack->end() - static_cast<std::ptrdiff_t>(schema.returns().size()), stack->end());
    torch::jit::drop(*stack, schema.returns().size());
  }

  // Results back to device tensors.
  const auto [out_bytes, out_numel] = return_results(results, stack, m, info, num, plan);
  charge_work(info, m, out_bytes, out_numel, plan);
}

void run_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack, const std::string& name,
                  const FaultPlan& plan) {
  const c10::FunctionSchema& schema = op.schema();
  TORCH_CHECK(!returns_view(schema), "gauntlet_sim: ", name,
              " returns a view and has no simulator kernel; a CPU fallback would return a copy");
  if (State::get().record_fallback(name)) {
    TORCH_WARN("gauntlet_sim: ", name, " has no kernel on the simulated device; it falls back to the CPU");
  }
  // The host's share; the transfers are charged by the copies cpu_fallback makes.
  double bytes = 0, numel = 0;
  for (const auto& v : torch::jit::last(*stack, schema.arguments().size())) {
    if (v.isTensor() && v.toTensor().defined()) {
      bytes += nbytes(v.toTensor());
      numel = std::max(numel, double(v.toTensor().numel()));
    }
  }
  at::native::cpu_fallback(op, stack);
  double out_bytes = 0;
  bool first_output = true;
  for (auto& v : torch::jit::last(*stack, schema.returns().size())) {
    if (!v.isTensor() || !v.toTensor().defined()) continue;
    const at::Tensor& t = v.toTensor();
    out_bytes += nbytes(t);
    if ((!plan.outputs.empty() || plan.precision) && on_device(t)) {
      at::Tensor alias = cpu_alias(t);
      apply_output_faults(plan, alias, first_output);
    }
    first_output = false;
  }
  Work w;
  w.engine = Engine::Host;
  w.flops = numel;
  w.bytes = bytes + out_bytes;
  State::get().charge(w, plan.slowdown);
}

void fallback_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::string name = full_name(op.schema());
  const FaultPlan plan = plan_faults(name, facts_of(op.schema(), stack));
  run_fallback(op, stack, name, plan);
}

}  // namespace

const std::vector<std::string>& kernel_names() { return registered(); }

void register_kernels(torch::Library& aten, torch::Library& fallback) {
  auto& dispatcher = c10::Dispatcher::singleton();
  const auto& table = kernel_table();
  for (const c10::OperatorName& opname : dispatcher.getAllOpNames()) {
    if (opname.name.rfind("aten::", 0) != 0) continue;
    std::string base = opname.name.substr(6);
    if (!table.count(base) && base.size() > 1 && base.back() == '_') base.pop_back();  // in-place
    if (!table.count(base)) continue;
    auto handle = dispatcher.findOp(opname);
    if (!handle || !handle->hasSchema()) continue;
    const c10::FunctionSchema& schema = handle->schema();
    if (returns_view(schema)) continue;
    if (!kForced.count(base) && !handle->hasKernelForDispatchKey(c10::DispatchKey::CPU)) continue;
    const std::string op = opname.name.substr(6);
    const std::string overload = opname.overload_name.empty() ? op : op + "." + opname.overload_name;
    aten.impl(overload.c_str(), torch::CppFunction::makeFromBoxedFunction<&native_kernel>());
    registered().push_back(full_name(schema));
  }
  for (const std::string& name : register_fused_cells(aten)) registered().push_back(name);
  std::sort(registered().begin(), registered().end());
  fallback.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback_kernel>());
}

}  // namespace gauntlet::sim
