// Op table: the ops real models execute (the models_real corpus, `gauntlet list --ops-of-models
// models_real`) that the other families did not cover: traced convolution, advanced indexing,
// padding, recurrent layers and cells, fused attention, spectral ops, factories, packed
// sequences, unique and torchvision's detection ops.
//
// Conventions of this family:
//  - Factories (arange, linspace, eye, full, *_like, hann_window) take one input, `like`: its
//    shape is the output's (arange, linspace, hann_window: its element count is the length) and
//    its device and dtype are the factory's options; its values are not read. So a factory runs
//    on the device under test in the case dtype, and the golden makes it in fp64 on the CPU.
//  - Recurrent ops build their tensor lists (hx, params) from fixed named inputs: one layer, one
//    direction; biases are optional (both or neither).
//  - Complex values travel as real (..., 2) pairs (view_as_real): the dtype system has no complex
//    dtypes, and comparing the pairs compares the real and imaginary parts.
//  - torchvision::nms and torchvision::roi_align come from Debian's torchvision op library,
//    dlopened on first use (as a model file naming "torchvision" does); without it the case is
//    UNSUPPORTED.
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cmath>

#include "gauntlet/models/model_file.h"
#include "gauntlet/suites/op_impl.h"

namespace gauntlet {

namespace {

using T = std::vector<at::Tensor>;
constexpr DTypeSet kF32F64 = dtype_bit(DType::F64) | dtype_bit(DType::F32);
constexpr DTypeSet kNoHalf = kF32F64 | dtype_bit(DType::BF16);
constexpr DTypeSet kNumeric = kFloatDTypes | kIntDTypes;
constexpr DTypeSet kIntBool = kIntDTypes | kBoolDType;

InputSpec input(const char* name, bool optional = false) {
  InputSpec s;
  s.name = name;
  s.optional = optional;
  return s;
}

InputSpec fixed(const char* name, Domain domain = Domain::Real, double lo = -2, double hi = 2) {
  InputSpec s;
  s.name = name;
  s.domain = domain;
  s.lo = lo;
  s.hi = hi;
  s.differentiable = false;
  return s;
}

InputSpec positive(const char* name, double lo, double hi, bool optional = false) {
  InputSpec s = input(name, optional);
  s.domain = Domain::Positive;
  s.lo = lo;
  s.hi = hi;
  return s;
}

std::vector<std::int64_t> per_dim(std::vector<std::int64_t> v, std::size_t n) {
  if (v.size() == 1) v.assign(n, v[0]);
  return v;
}

// A scalar arg in the type an op of the case dtype expects (integral tensors reject doubles).
at::Scalar scalar(const OpCall& c, const std::string& name) {
  const double v = c.f(name);
  if (c.dtype() == at::kBool) return at::Scalar(v != 0);
  if (!at::isFloatingType(c.dtype())) return at::Scalar(static_cast<std::int64_t>(v));
  return at::Scalar(v);
}

// The options of a factory: the `like` input's device and dtype.
at::TensorOptions like_options(const OpCall& c) { return c.t(0).options(); }

// A key rule: the first `n` inputs hold complex values as (..., 2) pairs, so their last dim is 2.
std::function<std::optional<std::string>(const CaseKey&)> last_dim_two(std::size_t n) {
  return [n](const CaseKey& k) -> std::optional<std::string> {
    for (std::size_t i = 0; i < n && i < k.shapes.size(); ++i) {
      const Shape& s = k.shapes[i];
      if (s.empty() || s.back() != 2) return std::string("complex inputs are (..., 2) pairs: their last dim must be 2");
    }
    return std::nullopt;
  };
}

// The optional biases of a recurrent layer or cell: both or neither.
bool has_biases(const OpCall& c, std::size_t first_bias) {
  TORCH_CHECK(c.has(first_bias) == c.has(first_bias + 1), "give both biases (b_ih, b_hh) or neither");
  return c.has(first_bias);
}

std::vector<at::Tensor> params_of(const OpCall& c, std::size_t first) {
  std::vector<at::Tensor> p;
  for (std::size_t i = first; i < c.size(); ++i) p.push_back(c.t(i));
  return p;
}

// Lengths of a padded (T, B, ...) batch for packing: T, T-1, ... (at least 1), sorted decreasing as
// pack_padded_sequence(enforce_sorted=True) wants; on the CPU, as torch.nn.utils.rnn makes them.
at::Tensor packed_lengths(const at::Tensor& padded) {
  TORCH_CHECK(padded.dim() >= 2, "a padded sequence batch is (T, B, *)");
  const std::int64_t t = padded.size(0), b = padded.size(1);
  std::vector<std::int64_t> l(static_cast<std::size_t>(b));
  for (std::int64_t i = 0; i < b; ++i) l[static_cast<std::size_t>(i)] = std::max<std::int64_t>(t - i, 1);
  return at::tensor(l, at::kLong);
}

// Loads Debian's torchvision op library once; a missing library is a missing kernel.
void need_torchvision() {
  static const bool loaded = [] {
    ModelFileSpec spec;
    spec.manifest = "the op table";
    spec.libraries = {"torchvision"};
    try {
      load_model_libraries(spec);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }();
  TORCH_CHECK_NOT_IMPLEMENTED(loaded,
                              "torchvision's op library (torchvision beside torch, or $GAUNTLET_TORCHVISION_LIB) "
                              "is not available: torchvision:: ops cannot run");
}

// (K, 4) raw box values -> boxes with x1 <= x2, y1 <= y2.
at::Tensor ordered_boxes(const at::Tensor& raw) {
  at::Tensor x = raw.narrow(1, 0, 1), y = raw.narrow(1, 1, 1), x2 = raw.narrow(1, 2, 1), y2 = raw.narrow(1, 3, 1);
  return at::cat({at::minimum(x, x2), at::minimum(y, y2), at::maximum(x, x2), at::maximum(y, y2)}, 1);
}

}  // namespace

void register_corpus_ops(OpRegistry& r) {
  auto add = [&r](OpBuilder& b) { r.add(std::move(b).build()); };

  // ---- Traced convolution: what torch.jit.trace records for every Conv/ConvTranspose layer. ----
  {
    OpBuilder b("_convolution", "aten::_convolution", "conv");
    b.in(input("input")).in(input("weight")).in(input("bias", true)).dtypes(kNoHalf).grad().rank(3);
    b.arg("stride", ArgType::Ints, "1").arg("padding", ArgType::Ints, "0").arg("dilation", ArgType::Ints, "1");
    b.arg("transposed", ArgType::Bool, "0").arg("output_padding", ArgType::Ints, "0").arg("groups", ArgType::Int, "1");
    b.note(
        "(N, C, spatial...) input; transposed=1 takes a (C_in, C_out/groups, k...) weight; no bf16 transposed "
        "(CPU libtorch 1.13 runs it as a forward conv); on PrivateUse1 it reaches convolution_overrideable");
    b.check_key([](const CaseKey& k) -> std::optional<std::string> {
      auto t = k.args.find("transposed");
      if (t != k.args.end() && t->second == "1" && k.dtype == DType::BF16) {
        return std::string("op _convolution: transposed=1 has no bf16 (CPU libtorch 1.13 runs it as a forward conv)");
      }
      return std::nullopt;
    });
    b.fn([](const OpCall& c) {
      const std::size_t nd = static_cast<std::size_t>(c.t(0).dim() - 2);
      return T{at::_convolution(c.t(0), c.t(1), c.opt(2), per_dim(c.ints("stride"), nd), per_dim(c.ints("padding"), nd),
                                per_dim(c.ints("dilation"), nd), c.b("transposed"),
                                per_dim(c.ints("output_padding"), nd), c.i("groups"), false, false, true, true)};
    });
    add(b);
  }

  // ---- Advanced indexing: self[:, ..., index] along `dim` (an int64 index tensor). ----
  {
    OpBuilder b("index_tensor", "aten::index.Tensor", "index");
    InputSpec idx = fixed("indices", Domain::Index);
    b.x().in(idx).dtypes(kAllTypes).grad().rank(1).arg("dim", ArgType::Int, "0");
    b.note("self[(slice(None),) * dim + (indices,)]: indices of any shape, duplicates allowed");
    b.fn([](const OpCall& c) {
      const at::Tensor& x = c.t(0);
      std::int64_t d = c.i("dim");
      if (d < 0) d += x.dim();
      c10::List<c10::optional<at::Tensor>> idx;
      for (std::int64_t i = 0; i < d; ++i) idx.push_back(c10::nullopt);
      idx.push_back(c.t(1));
      return T{at::index(x, idx)};
    });
    add(b);
  }

  // ---- Elementwise forms the corpus calls. ----
  {
    OpBuilder b("floor_divide", "aten::floor_divide", "elementwise");
    b.x(-8, 8).pos(0.5, 4).dtypes(kNumeric).strides_like_input();
    b.note("rounds the quotient down (floor), as torch >= 1.13 does");
    b.fn([](const OpCall& c) { return T{at::floor_divide(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("rsub", "aten::rsub.Scalar", "elementwise");
    b.x().dtypes(kNumeric).grad().special().strides_like_input();
    b.arg("other", ArgType::Float, "1").arg("alpha", ArgType::Float, "1");
    b.note("other - alpha * self (1 - x in the corpus)");
    b.fn([](const OpCall& c) { return T{at::rsub(c.t(0), scalar(c, "other"), scalar(c, "alpha"))}; });
    add(b);
  }
  {
    OpBuilder b("__and__", "aten::__and__.Tensor", "elementwise");
    b.x().x().dtypes(kIntBool);
    b.note("the & operator (mask combination in detection models)");
    b.fn([](const OpCall& c) { return T{at::__and__(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("clamp_min", "aten::clamp_min", "ternary");
    b.x(-4, 4).dtypes(kNumeric).grad().special().strides_like_input();
    b.arg("min", ArgType::Float, "-0.5");
    b.fn([](const OpCall& c) { return T{at::clamp_min(c.t(0), scalar(c, "min"))}; });
    add(b);
  }
  {
    OpBuilder b("equal", "aten::equal", "comparison");
    b.x().x().dtypes(kAllTypes);
    b.note("out0 = equal(self, other), out1 = equal(self, a copy of self): bool scalars");
    b.fn([](const OpCall& c) {
      const at::Tensor& x = c.t(0);
      return T{at::scalar_tensor(at::equal(x, c.t(1)), at::kBool),
               at::scalar_tensor(at::equal(x, x.clone()), at::kBool)};
    });
    add(b);
  }

  // ---- Padding (torch.nn.functional.pad's aten op). ----
  {
    OpBuilder b("pad", "aten::pad", "pad");
    b.x().dtypes(kNoHalf).grad();
    b.arg("pad", ArgType::Ints, "1:1")
        .arg("mode", ArgType::Str, "constant", {"constant", "reflect", "replicate", "circular"});
    b.arg("value", ArgType::Float, "0");
    b.note("F.pad order (last dim first); value only for constant; reflect/replicate: no bf16 on CPU");
    b.check_key([](const CaseKey& k) -> std::optional<std::string> {
      const auto m = k.args.find("mode");
      const std::string mode = m == k.args.end() ? "constant" : m->second;
      if (mode == "constant") return std::nullopt;
      if (k.dtype == DType::BF16 && mode != "circular")
        return "op pad: mode " + mode + " has no bf16 CPU kernel in libtorch 1.13";
      const auto p = k.args.find("pad");
      const std::string pad = p == k.args.end() ? "1:1" : p->second;
      const std::size_t values = static_cast<std::size_t>(std::count(pad.begin(), pad.end(), ':')) + 1,
                        dims = values / 2;
      const std::size_t rank = k.shapes.front().size();
      if (values % 2 != 0 || dims > 3 || (rank != dims + 1 && rank != dims + 2)) {
        return "op pad: mode " + mode +
               " pads the last 1 to 3 dims of a (C, spatial) or (N, C, spatial) input; pad=" + pad +
               " does not fit rank " + std::to_string(rank);
      }
      return std::nullopt;
    });
    b.fn([](const OpCall& c) {
      const std::string mode = c.s("mode");
      return T{at::pad(c.t(0), c.ints("pad"), mode,
                       mode == "constant" ? c10::optional<double>(c.f("value")) : c10::nullopt)};
    });
    add(b);
  }

  // ---- Pooling, activations, grid sampling, im2col. ----
  {
    OpBuilder b("adaptive_avg_pool3d", "aten::adaptive_avg_pool3d", "pool");
    b.x().dtypes(kF32F64).grad().rank(4).arg("output_size", ArgType::Ints, "2");
    b.fn([](const OpCall& c) { return T{at::adaptive_avg_pool3d(c.t(0), per_dim(c.ints("output_size"), 3))}; });
    add(b);
  }
  {
    OpBuilder b("glu", "aten::glu", "nn");
    b.x(-4, 4).dtypes(kF32F64).grad().rank(1).arg("dim", ArgType::Int, "-1");
    b.note("the size of dim must be even");
    b.fn([](const OpCall& c) { return T{at::glu(c.t(0), c.i("dim"))}; });
    add(b);
  }
  {
    OpBuilder b("prelu", "aten::prelu", "nn");
    b.x(-4, 4).kinks({0}).in(input("weight")).dtypes(kF32F64).grad().rank(1);
    b.note("weight: 1 value, or one per channel (dim 1)");
    b.fn([](const OpCall& c) { return T{at::prelu(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("grid_sampler", "aten::grid_sampler", "interpolate");
    b.in(input("input")).x(-1.1, 1.1).dtypes(kF32F64).grad().rank(4);
    b.arg("mode", ArgType::Str, "bilinear", {"bilinear", "nearest", "bicubic"});
    b.arg("padding_mode", ArgType::Str, "zeros", {"zeros", "border", "reflection"})
        .arg("align_corners", ArgType::Bool, "0");
    b.note("input (N, C, H, W) with grid (N, Ho, Wo, 2), or 5-d with a (N, Do, Ho, Wo, 3) grid (no bicubic)");
    b.fn([](const OpCall& c) {
      const std::string m = c.s("mode"), p = c.s("padding_mode");
      const std::int64_t mode = m == "bilinear"  ? 0
                                : m == "nearest" ? 1
                                                 : 2,
                         pad = p == "zeros"    ? 0
                               : p == "border" ? 1
                                               : 2;
      return T{at::grid_sampler(c.t(0), c.t(1), mode, pad, c.b("align_corners"))};
    });
    add(b);
  }
  {
    OpBuilder b("im2col", "aten::im2col", "nn");
    b.x().dtypes(kF32F64).grad().rank(3);
    b.arg("kernel_size", ArgType::Ints, "2")
        .arg("dilation", ArgType::Ints, "1")
        .arg("padding", ArgType::Ints, "0")
        .arg("stride", ArgType::Ints, "1");
    b.note("F.unfold: (N, C, H, W) -> (N, C*kh*kw, L)");
    b.fn([](const OpCall& c) {
      return T{at::im2col(c.t(0), per_dim(c.ints("kernel_size"), 2), per_dim(c.ints("dilation"), 2),
                          per_dim(c.ints("padding"), 2), per_dim(c.ints("stride"), 2))};
    });
    add(b);
  }

  // ---- Recurrent layers (one layer, one direction) and cells. ----
  {
    OpBuilder b("lstm", "aten::lstm.input", "recurrent");
    b.in(input("input"))
        .in(input("h0"))
        .in(input("c0"))
        .in(input("w_ih"))
        .in(input("w_hh"))
        .in(input("b_ih", true))
        .in(input("b_hh", true));
    b.dtypes(kF32F64).grad().rank(3).arg("batch_first", ArgType::Bool, "0");
    b.note(
        "input (T, B, I) (batch_first: (B, T, I)), h0/c0 (1, B, H), w_ih (4H, I), w_hh (4H, H), biases (4H); "
        "outputs: output, h_n, c_n");
    b.fn([](const OpCall& c) {
      const bool bias = has_biases(c, 5);
      auto [out, h, cs] =
          at::lstm(c.t(0), {c.t(1), c.t(2)}, params_of(c, 3), bias, 1, 0.0, false, false, c.b("batch_first"));
      return T{out, h, cs};
    });
    add(b);
  }
  for (const char* name : {"gru", "rnn_tanh", "rnn_relu"}) {
    const std::string n = name;
    OpBuilder b(n, "aten::" + n + ".input", "recurrent");
    b.in(input("input"))
        .in(input("h0"))
        .in(input("w_ih"))
        .in(input("w_hh"))
        .in(input("b_ih", true))
        .in(input("b_hh", true));
    b.dtypes(kF32F64).grad().rank(3).arg("batch_first", ArgType::Bool, "0");
    b.note(std::string("input (T, B, I), h0 (1, B, H), w_ih (") + (n == "gru" ? "3H" : "H") + ", I), w_hh (" +
           (n == "gru" ? "3H" : "H") + ", H), biases; outputs: output, h_n");
    b.fn([n](const OpCall& c) {
      const bool bias = has_biases(c, 4);
      const auto p = params_of(c, 2);
      const bool bf = c.b("batch_first");
      auto [out, h] = n == "gru"        ? at::gru(c.t(0), c.t(1), p, bias, 1, 0.0, false, false, bf)
                      : n == "rnn_tanh" ? at::rnn_tanh(c.t(0), c.t(1), p, bias, 1, 0.0, false, false, bf)
                                        : at::rnn_relu(c.t(0), c.t(1), p, bias, 1, 0.0, false, false, bf);
      return T{out, h};
    });
    add(b);
  }
  {
    OpBuilder b("lstm_cell", "aten::lstm_cell", "recurrent");
    b.in(input("input"))
        .in(input("hx"))
        .in(input("cx"))
        .in(input("w_ih"))
        .in(input("w_hh"))
        .in(input("b_ih", true))
        .in(input("b_hh", true));
    b.dtypes(kF32F64).grad().rank(1);
    b.note("input (B, I), hx/cx (B, H), w_ih (4H, I), w_hh (4H, H), biases (4H); outputs: h', c'");
    b.fn([](const OpCall& c) {
      auto [h, cs] = at::lstm_cell(c.t(0), {c.t(1), c.t(2)}, c.t(3), c.t(4), c.opt(5), c.opt(6));
      return T{h, cs};
    });
    add(b);
  }
  for (const char* name : {"gru_cell", "rnn_tanh_cell", "rnn_relu_cell"}) {
    const std::string n = name;
    OpBuilder b(n, "aten::" + n, "recurrent");
    b.in(input("input"))
        .in(input("hx"))
        .in(input("w_ih"))
        .in(input("w_hh"))
        .in(input("b_ih", true))
        .in(input("b_hh", true));
    b.dtypes(kF32F64).grad().rank(1);
    b.note(std::string("input (B, I), hx (B, H), w_ih (") + (n == "gru_cell" ? "3H" : "H") +
           ", I), w_hh, biases; output: h'");
    b.fn([n](const OpCall& c) {
      if (n == "gru_cell") return T{at::gru_cell(c.t(0), c.t(1), c.t(2), c.t(3), c.opt(4), c.opt(5))};
      if (n == "rnn_tanh_cell") return T{at::rnn_tanh_cell(c.t(0), c.t(1), c.t(2), c.t(3), c.opt(4), c.opt(5))};
      return T{at::rnn_relu_cell(c.t(0), c.t(1), c.t(2), c.t(3), c.opt(4), c.opt(5))};
    });
    add(b);
  }

  // ---- Packed sequences: lengths T, T-1, ... (at least 1) for a padded (T, B, *) batch. ----
  {
    OpBuilder b("pack_padded_sequence", "aten::_pack_padded_sequence", "recurrent");
    b.in(input("input")).dtypes(kF32F64).grad().rank(2);
    b.note("packs a (T, B, *) batch with lengths T, T-1, ...; outputs: data, batch_sizes (int64)");
    b.fn([](const OpCall& c) {
      auto [data, sizes] = at::_pack_padded_sequence(c.t(0), packed_lengths(c.t(0)), false);
      return T{data, sizes};
    });
    add(b);
  }
  {
    OpBuilder b("pad_packed_sequence", "aten::_pad_packed_sequence", "recurrent");
    b.in(input("input")).dtypes(kF32F64).grad().rank(2).arg("padding_value", ArgType::Float, "0");
    b.note("packs as pack_padded_sequence, then pads back: the padding is padding_value; outputs: padded, lengths");
    b.fn([](const OpCall& c) {
      auto [data, sizes] = at::_pack_padded_sequence(c.t(0), packed_lengths(c.t(0)), false);
      auto [padded, lengths] = at::_pad_packed_sequence(data, sizes, false, c.f("padding_value"), c.t(0).size(0));
      return T{padded, lengths};
    });
    add(b);
  }
  {
    OpBuilder b("lstm_packed", "aten::lstm.data", "recurrent");
    b.in(input("input"))
        .in(input("h0"))
        .in(input("c0"))
        .in(input("w_ih"))
        .in(input("w_hh"))
        .in(input("b_ih", true))
        .in(input("b_hh", true));
    b.dtypes(kF32F64).grad().rank(3);
    b.note("nn.LSTM on a packed sequence: pack (lengths T, T-1, ...), lstm.data, pad back; outputs: output, h_n, c_n");
    b.fn([](const OpCall& c) {
      const bool bias = has_biases(c, 5);
      auto [data, sizes] = at::_pack_padded_sequence(c.t(0), packed_lengths(c.t(0)), false);
      auto [out, h, cs] = at::lstm(data, sizes, {c.t(1), c.t(2)}, params_of(c, 3), bias, 1, 0.0, false, false);
      auto [padded, lengths] = at::_pad_packed_sequence(out, sizes, false, 0.0, c.t(0).size(0));
      (void)lengths;
      return T{padded, h, cs};
    });
    add(b);
  }

  // ---- Fused attention and encoder layer (CPU inference fast paths; no backward). ----
  {
    OpBuilder b("_native_multi_head_attention", "aten::_native_multi_head_attention", "attention");
    b.in(input("query")).in(input("key")).in(input("value")).in(input("qkv_weight")).in(input("qkv_bias"));
    b.in(input("proj_weight")).in(input("proj_bias")).dtypes(kF32F64).rank(3);
    b.arg("num_heads", ArgType::Int, "2").arg("need_weights", ArgType::Bool, "0");
    b.note(
        "q/k/v (B, L, E), qkv_weight (3E, E), qkv_bias (3E), proj (E, E), (E); need_weights=1 adds the "
        "head-averaged attention weights; what nn.MultiheadAttention runs under no_grad");
    b.fn([](const OpCall& c) {
      const bool w = c.b("need_weights");
      auto [out, weights] = at::_native_multi_head_attention(c.t(0), c.t(1), c.t(2), c.t(0).size(-1), c.i("num_heads"),
                                                             c.t(3), c.t(4), c.t(5), c.t(6), {}, w, true);
      return w ? T{out, weights} : T{out};
    });
    add(b);
  }
  {
    OpBuilder b("_transformer_encoder_layer_fwd", "aten::_transformer_encoder_layer_fwd", "attention");
    b.in(input("src")).in(input("qkv_weight")).in(input("qkv_bias")).in(input("proj_weight")).in(input("proj_bias"));
    b.in(positive("norm_weight_1", 0.5, 1.5))
        .in(input("norm_bias_1"))
        .in(positive("norm_weight_2", 0.5, 1.5))
        .in(input("norm_bias_2"));
    b.in(input("ffn_weight_1")).in(input("ffn_bias_1")).in(input("ffn_weight_2")).in(input("ffn_bias_2"));
    b.dtypes(kF32F64).rank(3);
    b.arg("num_heads", ArgType::Int, "2")
        .arg("use_gelu", ArgType::Bool, "0")
        .arg("norm_first", ArgType::Bool, "0")
        .arg("eps", ArgType::Float, "1e-05");
    b.note(
        "src (B, L, E), qkv (3E, E), (3E), proj (E, E), (E), two norms (E), ffn (F, E), (F), (E, F), (E); "
        "nn.TransformerEncoderLayer under no_grad");
    b.fn([](const OpCall& c) {
      return T{at::_transformer_encoder_layer_fwd(c.t(0), c.t(0).size(-1), c.i("num_heads"), c.t(1), c.t(2), c.t(3),
                                                  c.t(4), c.b("use_gelu"), c.b("norm_first"), c.f("eps"), c.t(5),
                                                  c.t(6), c.t(7), c.t(8), c.t(9), c.t(10), c.t(11), c.t(12))};
    });
    add(b);
  }

  // ---- Spectral ops and complex views. ----
  {
    OpBuilder b("stft", "aten::stft", "spectral");
    b.x().in(positive("window", 0.5, 1.5, true)).dtypes(kF32F64).grad().rank(1);
    b.arg("n_fft", ArgType::Int, "16").arg("hop_length", ArgType::Int, "4").arg("center", ArgType::Bool, "1");
    b.arg("normalized", ArgType::Bool, "0").arg("onesided", ArgType::Bool, "1");
    b.note("(L) or (B, L) signal, optional window of n_fft; complex output as view_as_real pairs (..., 2)");
    b.fn([](const OpCall& c) {
      const std::int64_t n = c.i("n_fft");
      return T{at::view_as_real(at::stft(c.t(0), n, c.i("hop_length"), n, c.opt(1), c.b("center"), "reflect",
                                         c.b("normalized"), c.b("onesided"), true))};
    });
    add(b);
  }
  {
    OpBuilder b("istft", "aten::istft", "spectral");
    b.x().in(positive("window", 0.5, 1.5, true)).dtypes(kF32F64).grad().rank(3);
    b.arg("n_fft", ArgType::Int, "16").arg("hop_length", ArgType::Int, "4").arg("center", ArgType::Bool, "1");
    b.arg("normalized", ArgType::Bool, "0");
    b.note(
        "onesided spectrogram (n_fft/2+1, frames, 2) or (B, n_fft/2+1, frames, 2) as real pairs; the window is "
        "positive so the overlap-add envelope stays away from zero");
    b.check_key(last_dim_two(1));
    b.fn([](const OpCall& c) {
      const std::int64_t n = c.i("n_fft");
      return T{at::istft(at::view_as_complex(c.t(0).contiguous()), n, c.i("hop_length"), n, c.opt(1), c.b("center"),
                         c.b("normalized"), true, c10::nullopt, false)};
    });
    add(b);
  }
  {
    OpBuilder b("view_as_complex", "aten::view_as_complex", "spectral");
    b.x().x().dtypes(kF32F64).grad().rank(1);
    b.note("(..., 2) pairs viewed as complex, multiplied (a complex kernel), and viewed back as pairs");
    b.check_key(last_dim_two(2));
    b.fn([](const OpCall& c) {
      return T{at::view_as_real(at::view_as_complex(c.t(0).contiguous()) * at::view_as_complex(c.t(1).contiguous()))};
    });
    add(b);
  }
  {
    OpBuilder b("view_as_real", "aten::view_as_real", "spectral");
    b.pos(0.1, 3).x(-3.2, 3.2).dtypes(kF32F64).grad();
    b.note("polar(abs, angle) viewed as (..., 2) real pairs");
    b.fn([](const OpCall& c) { return T{at::view_as_real(at::polar(c.t(0), c.t(1)))}; });
    add(b);
  }

  // ---- Factories: one `like` input gives the shape, device and dtype (see the conventions). ----
  {
    OpBuilder b("arange", "aten::arange.start_step", "factory");
    b.in(fixed("like")).dtypes(kNumeric);
    b.arg("start", ArgType::Float, "-3").arg("step", ArgType::Float, "0.5");
    b.note("like.numel() values start, start + step, ...; integer dtypes truncate start and step");
    b.fn([](const OpCall& c) {
      const double n = static_cast<double>(c.t(0).numel());
      if (!at::isFloatingType(c.dtype())) {
        const auto s = static_cast<std::int64_t>(c.f("start")),
                   st = std::max<std::int64_t>(static_cast<std::int64_t>(c.f("step")), 1);
        return T{at::arange(s, s + st * static_cast<std::int64_t>(n), st, like_options(c))};
      }
      // end half a step past the last value: the length is like.numel() whatever the rounding.
      const double s = c.f("start"), st = c.f("step");
      return T{at::arange(s, s + st * (n - 0.5), st, like_options(c))};
    });
    add(b);
  }
  {
    OpBuilder b("linspace", "aten::linspace", "factory");
    b.in(fixed("like")).dtypes(kFloatDTypes);
    b.arg("start", ArgType::Float, "-2").arg("end", ArgType::Float, "3");
    b.fn([](const OpCall& c) { return T{at::linspace(c.f("start"), c.f("end"), c.t(0).numel(), like_options(c))}; });
    add(b);
  }
  {
    OpBuilder b("eye", "aten::eye.m", "factory");
    b.in(fixed("like")).dtypes(kAllTypes).rank(2);
    b.note("an identity of like's (n, m)");
    b.fn([](const OpCall& c) { return T{at::eye(c.t(0).size(0), c.t(0).size(1), like_options(c))}; });
    add(b);
  }
  {
    OpBuilder b("full", "aten::full", "factory");
    b.in(fixed("like")).dtypes(kAllTypes).arg("value", ArgType::Float, "1.5");
    b.fn([](const OpCall& c) { return T{at::full(c.t(0).sizes(), scalar(c, "value"), like_options(c))}; });
    add(b);
  }
  {
    OpBuilder b("full_like", "aten::full_like", "factory");
    b.in(fixed("like")).dtypes(kAllTypes).arg("value", ArgType::Float, "1.5");
    b.fn([](const OpCall& c) { return T{at::full_like(c.t(0), scalar(c, "value"))}; });
    add(b);
  }
  {
    OpBuilder b("zeros_like", "aten::zeros_like", "factory");
    b.in(fixed("like")).dtypes(kAllTypes);
    b.fn([](const OpCall& c) { return T{at::zeros_like(c.t(0))}; });
    add(b);
  }
  {
    OpBuilder b("ones_like", "aten::ones_like", "factory");
    b.in(fixed("like")).dtypes(kAllTypes);
    b.fn([](const OpCall& c) { return T{at::ones_like(c.t(0))}; });
    add(b);
  }
  {
    OpBuilder b("hann_window", "aten::hann_window.periodic", "factory");
    b.in(fixed("like")).dtypes(kFloatDTypes).arg("periodic", ArgType::Bool, "1");
    b.note("a window of like.numel() points");
    b.fn([](const OpCall& c) { return T{at::hann_window(c.t(0).numel(), c.b("periodic"), like_options(c))}; });
    add(b);
  }

  // ---- Shape ops. ----
  {
    OpBuilder b("tensor_split", "aten::tensor_split.indices", "shape");
    b.x().dtypes(kAllTypes).grad().rank(1);
    b.arg("indices", ArgType::Ints, "1:3").arg("dim", ArgType::Int, "0");
    b.note("splits before each index along dim; every piece is an output");
    b.fn([](const OpCall& c) { return at::tensor_split(c.t(0), c.ints("indices"), c.i("dim")); });
    add(b);
  }
  {
    OpBuilder b("meshgrid", "aten::meshgrid.indexing", "shape");
    b.x().x().in(input("third", true)).dtypes(kAllTypes).grad().arg("indexing", ArgType::Str, "ij", {"ij", "xy"});
    b.note("1-d inputs; the expanded grids are made contiguous before comparison");
    b.fn([](const OpCall& c) {
      std::vector<at::Tensor> in;
      for (std::size_t i = 0; i < c.size(); ++i) in.push_back(c.t(i));
      T out;
      for (const at::Tensor& g : at::meshgrid(in, c.s("indexing"))) out.push_back(g.contiguous());
      return out;
    });
    add(b);
  }
  {
    OpBuilder b("unique", "aten::_unique2", "sort");
    b.x().dtypes(kAllTypes & ~dtype_bit(DType::F16));
    b.arg("return_inverse", ArgType::Bool, "1").arg("return_counts", ArgType::Bool, "1");
    b.note("torch.unique(sorted=True): out0 = sorted unique values, then the inverse indices and counts (int64)");
    b.fn([](const OpCall& c) {
      const bool inv = c.b("return_inverse"), cnt = c.b("return_counts");
      auto [v, i, n] = at::_unique2(c.t(0), true, inv, cnt);
      T out{v};
      if (inv) out.push_back(i);
      if (cnt) out.push_back(n);
      return out;
    });
    add(b);
  }

  // ---- torchvision's detection ops. ----
  {
    OpBuilder b("nms", "torchvision::nms", "detection");
    b.in(fixed("boxes", Domain::Real, 0, 8)).in(fixed("scores")).dtypes(kF32F64);
    b.arg("iou_threshold", ArgType::Float, "0.5");
    b.note(
        "boxes (N, 4) made x1 <= x2, y1 <= y2; outputs the kept boxes and scores (in score order), not the "
        "indices; runs under InferenceMode (1.13 has no AutogradPrivateUse1 fallthrough for custom ops)");
    b.fn([](const OpCall& c) {
      need_torchvision();
      static const auto op = c10::Dispatcher::singleton()
                                 .findSchemaOrThrow("torchvision::nms", "")
                                 .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double)>();
      const at::Tensor boxes = ordered_boxes(c.t(0));
      at::Tensor kept, scores;
      {
        c10::InferenceMode guard;
        const at::Tensor keep = op.call(boxes, c.t(1), c.f("iou_threshold"));
        kept = boxes.index_select(0, keep);
        scores = c.t(1).index_select(0, keep);
      }
      return T{kept.clone(), scores.clone()};
    });
    add(b);
  }
  {
    OpBuilder b("roi_align", "torchvision::roi_align", "detection");
    b.in(input("input")).in(fixed("boxes", Domain::Real, 0, 7)).dtypes(kF32F64).grad().rank(4);
    b.arg("output_size", ArgType::Int, "2")
        .arg("spatial_scale", ArgType::Float, "1")
        .arg("sampling_ratio", ArgType::Int, "2");
    b.arg("aligned", ArgType::Bool, "0");
    b.note("input (N, C, H, W), boxes (K, 4) made x1 <= x2, y1 <= y2, box k on image k mod N");
    b.fn([](const OpCall& c) {
      need_torchvision();
      static const auto op =
          c10::Dispatcher::singleton()
              .findSchemaOrThrow("torchvision::roi_align", "")
              .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double, int64_t, int64_t, int64_t, bool)>();
      const at::Tensor boxes = ordered_boxes(c.t(1));
      // The image column is bookkeeping, not the op under test: made on the CPU, then moved.
      const at::Tensor image =
          at::arange(boxes.size(0), at::kDouble).remainder(c.t(0).size(0)).unsqueeze(1).to(boxes.options());
      const std::int64_t s = c.i("output_size");
      return T{op.call(c.t(0), at::cat({image, boxes}, 1), c.f("spatial_scale"), s, s, c.i("sampling_ratio"),
                       c.b("aligned"))};
    });
    add(b);
  }
}

}  // namespace gauntlet
