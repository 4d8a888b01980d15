// Op table: matrix products, convolution, pooling, normalization, embedding, losses,
// interpolation and attention.
//
// Conventions of this family:
//  - Ints args of spatial ops (stride, padding, dilation, kernel_size, output_size, size) may give
//    one value for every spatial dim ("2") or one per dim ("2:3"), as torch.nn accepts.
//  - Optional inputs (bias, weight of norms) are left out by giving fewer shapes; they come last.
//  - Losses take a Str arg "reduction" in mean/sum/none.
#include <algorithm>
#include <cmath>
#include <limits>

#include "gauntlet/suites/op_impl.h"

namespace gauntlet {

namespace {

using T = std::vector<at::Tensor>;
constexpr DTypeSet kNoHalf = dtype_bit(DType::F64) | dtype_bit(DType::F32) | dtype_bit(DType::BF16);
constexpr DTypeSet kF32F64 = dtype_bit(DType::F64) | dtype_bit(DType::F32);
// CPU gemm also covers integer types (exact, wrapping like the device would).
constexpr DTypeSet kGemm = kNoHalf | kIntDTypes;

InputSpec input(const char* name, bool optional = false) {
  InputSpec s;
  s.name = name;
  s.optional = optional;
  return s;
}

// An input that is not differentiated: integer targets/indices, running statistics.
InputSpec fixed(const char* name, Domain domain, double lo = -2, double hi = 2) {
  InputSpec s;
  s.name = name;
  s.domain = domain;
  s.lo = lo;
  s.hi = hi;
  s.differentiable = false;
  return s;
}

// One value per spatial dim: a single value applies to all of them.
std::vector<std::int64_t> per_dim(std::vector<std::int64_t> v, std::size_t n) {
  if (v.size() == 1) v.assign(n, v[0]);
  return v;
}

std::int64_t reduction_of(const OpCall& c) {
  std::string r = c.s("reduction");
  return r == "none" ? at::Reduction::None : r == "sum" ? at::Reduction::Sum : at::Reduction::Mean;
}

// A scalar arg in the type an op of the case dtype expects (integral tensors reject doubles).
at::Scalar scalar(const OpCall& c, const std::string& name) {
  double v = c.f(name);
  if (!at::isFloatingType(c.dtype())) return at::Scalar(static_cast<std::int64_t>(v));
  return at::Scalar(v);
}

OpBuilder loss(const char* name, const char* aten) {
  OpBuilder b(name, aten, "loss");
  b.arg("reduction", ArgType::Str, "mean", {"mean", "sum", "none"}).grad();
  return b;
}

// conv{1,2,3}d. Non-zeros padding modes pad explicitly, then convolve without padding, as
// torch.nn.Conv*d does (F.pad takes the last dim first, each as (left, right)).
T conv(const OpCall& c, std::size_t nd) {
  at::Tensor x = c.t(0);
  auto stride = c.ints("stride"), dilation = c.ints("dilation");
  auto padding = per_dim(c.ints("padding"), nd);
  std::string mode = c.s("padding_mode");
  if (mode != "zeros") {
    std::vector<std::int64_t> p;
    for (std::size_t d = nd; d-- > 0;) p.insert(p.end(), {padding[d], padding[d]});
    x = at::pad(x, p, mode);
    padding.assign(nd, 0);
  }
  std::int64_t g = c.i("groups");
  if (nd == 1) return T{at::conv1d(x, c.t(1), c.opt(2), stride, padding, dilation, g)};
  if (nd == 2) return T{at::conv2d(x, c.t(1), c.opt(2), stride, padding, dilation, g)};
  return T{at::conv3d(x, c.t(1), c.opt(2), stride, padding, dilation, g)};
}

T conv_transpose(const OpCall& c, std::size_t nd) {
  auto s = c.ints("stride"), p = c.ints("padding"), op = c.ints("output_padding"), d = c.ints("dilation");
  std::int64_t g = c.i("groups");
  if (nd == 1) return T{at::conv_transpose1d(c.t(0), c.t(1), c.opt(2), s, p, op, g, d)};
  if (nd == 2) return T{at::conv_transpose2d(c.t(0), c.t(1), c.opt(2), s, p, op, g, d)};
  return T{at::conv_transpose3d(c.t(0), c.t(1), c.opt(2), s, p, op, g, d)};
}

// Pooling stride "0" stands for torch's default stride = kernel_size (an empty list in aten).
std::vector<std::int64_t> pool_stride(const OpCall& c) {
  auto s = c.ints("stride");
  if (s.size() == 1 && s[0] == 0) s.clear();
  return s;
}

T max_pool(const OpCall& c, std::size_t nd) {
  auto k = c.ints("kernel_size"), s = pool_stride(c), p = c.ints("padding"), d = c.ints("dilation");
  bool ceil = c.b("ceil_mode");
  if (nd == 1) return T{at::max_pool1d(c.t(0), k, s, p, d, ceil)};
  if (nd == 2) return T{at::max_pool2d(c.t(0), k, s, p, d, ceil)};
  return T{at::max_pool3d(c.t(0), k, s, p, d, ceil)};
}

T avg_pool(const OpCall& c, std::size_t nd) {
  auto k = c.ints("kernel_size"), s = pool_stride(c), p = c.ints("padding");
  bool ceil = c.b("ceil_mode"), inc = c.b("count_include_pad");
  if (nd == 1) return T{at::avg_pool1d(c.t(0), k, s, p, ceil, inc)};
  if (nd == 2) return T{at::avg_pool2d(c.t(0), k, s, p, ceil, inc)};
  return T{at::avg_pool3d(c.t(0), k, s, p, ceil, inc)};
}

// F.interpolate: a "size" of 0 means "use scale_factor", which is passed on to the kernel
// (recompute_scale_factor=None), so source indices use the scale, not the size ratio.
T interpolate(const OpCall& c, const std::string& mode) {
  const at::Tensor& x = c.t(0);
  TORCH_CHECK(x.dim() >= 3 && x.dim() <= 5, "interpolate takes a 3-d to 5-d (N, C, spatial...) input");
  const std::size_t nd = static_cast<std::size_t>(x.dim() - 2);
  auto size = c.ints("size");
  const bool by_size = !(size.size() == 1 && size[0] == 0);
  std::vector<std::int64_t> osz = per_dim(size, nd);
  std::vector<double> scales(nd, c.f("scale_factor"));
  at::OptionalIntArrayRef o = by_size ? at::OptionalIntArrayRef(osz) : c10::nullopt;
  c10::optional<at::ArrayRef<double>> sf = by_size ? c10::nullopt : c10::optional<at::ArrayRef<double>>(scales);
  if (mode == "nearest") {
    if (nd == 1) return T{at::upsample_nearest1d(x, o, sf)};
    if (nd == 2) return T{at::upsample_nearest2d(x, o, sf)};
    return T{at::upsample_nearest3d(x, o, sf)};
  }
  bool ac = c.b("align_corners");
  if (mode == "linear") {
    if (nd == 1) return T{at::upsample_linear1d(x, o, ac, sf)};
    if (nd == 2) return T{at::upsample_bilinear2d(x, o, ac, sf)};
    return T{at::upsample_trilinear3d(x, o, ac, sf)};
  }
  TORCH_CHECK(nd == 2, "bicubic interpolation takes a 4-d input");
  return T{at::upsample_bicubic2d(x, o, ac, sf)};
}

// Safe-token einsum equations: '.' separates operands and '-' stands for '->'.
std::string einsum_equation(std::string token) {
  std::string eq;
  for (char ch : token) {
    if (ch == '.')
      eq += ',';
    else if (ch == '-')
      eq += "->";
    else
      eq += ch;
  }
  return eq;
}

}  // namespace

void register_linalg_nn_ops(OpRegistry& r) {
  auto add = [&r](OpBuilder& b) { r.add(std::move(b).build()); };

  // ---- Matrix products. CPU libtorch 1.13 has no f16 gemm. ----
  {
    OpBuilder b("mm", "aten::mm", "matmul");
    b.x().x().dtypes(kGemm).grad().rank(2);
    b.fn([](const OpCall& c) { return T{at::mm(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("bmm", "aten::bmm", "matmul");
    b.x().x().dtypes(kGemm).grad().rank(3);
    b.fn([](const OpCall& c) { return T{at::bmm(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("matmul", "aten::matmul", "matmul");
    b.x().x().dtypes(kGemm).grad().rank(1);
    b.note("any ranks torch.matmul accepts (dot, mv, mm, batched with broadcast)");
    b.fn([](const OpCall& c) { return T{at::matmul(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("addmm", "aten::addmm", "matmul");
    b.x().x().x().dtypes(kGemm).grad();
    b.arg("beta", ArgType::Float, "0.5").arg("alpha", ArgType::Float, "2");
    b.fn([](const OpCall& c) { return T{at::addmm(c.t(0), c.t(1), c.t(2), scalar(c, "beta"), scalar(c, "alpha"))}; });
    add(b);
  }
  {
    OpBuilder b("baddbmm", "aten::baddbmm", "matmul");
    b.x().x().x().dtypes(kGemm).grad();
    b.arg("beta", ArgType::Float, "0.5").arg("alpha", ArgType::Float, "2");
    b.fn([](const OpCall& c) { return T{at::baddbmm(c.t(0), c.t(1), c.t(2), scalar(c, "beta"), scalar(c, "alpha"))}; });
    add(b);
  }
  {
    OpBuilder b("linear", "aten::linear", "matmul");
    b.in(input("input")).in(input("weight")).in(input("bias", true)).dtypes(kGemm).grad().rank(1);
    b.fn([](const OpCall& c) { return T{at::linear(c.t(0), c.t(1), c.opt(2))}; });
    add(b);
  }
  {
    OpBuilder b("einsum", "aten::einsum", "matmul");
    b.x().in(input("other", true)).in(input("third", true)).dtypes(kGemm).grad();
    b.arg("equation", ArgType::Str, "ij.jk-ik",
          {"ij.jk-ik", "bij.bjk-bik", "bhqd.bhkd-bhqk", "ij-ji", "ii-i", "ij-", "ij-j", "i.j-ij", "bi.bi-b",
           "ij.jk.kl-il", "bn.anm.bm-ba"});
    b.note("equation tokens: '.' is ',' and '-' is '->' (ij.jk-ik = ij,jk->ik); one shape per operand");
    b.fn([](const OpCall& c) {
      std::string eq = einsum_equation(c.s("equation"));
      std::vector<at::Tensor> ops;
      for (std::size_t i = 0; i < c.size(); ++i) ops.push_back(c.t(i));
      std::size_t want = static_cast<std::size_t>(std::count(eq.begin(), eq.end(), ',')) + 1;
      TORCH_CHECK(ops.size() == want, "einsum ", eq, " takes ", want, " operands, the key gives ", ops.size());
      return T{at::einsum(eq, ops)};
    });
    add(b);
  }

  // ---- Convolution: input, weight, optional bias. ----
  for (std::size_t nd : {1, 2, 3}) {
    std::string name = "conv" + std::to_string(nd) + "d";
    OpBuilder b(name, "aten::" + name, "conv");
    b.in(input("input")).in(input("weight")).in(input("bias", true)).dtypes(kNoHalf).grad();
    b.arg("stride", ArgType::Ints, "1").arg("padding", ArgType::Ints, "0").arg("dilation", ArgType::Ints, "1");
    b.arg("groups", ArgType::Int, "1")
        .arg("padding_mode", ArgType::Str, "zeros", {"zeros", "reflect", "replicate", "circular"});
    b.rank(static_cast<int>(nd) + 1);  // (C, spatial...) unbatched or (N, C, spatial...)
    b.note(
        "padding_mode other than zeros: at::pad then conv with padding 0, as torch.nn.Conv does; "
        "CPU has no bf16 reflect/replicate pad (the golden is fp64)");
    b.fn([nd](const OpCall& c) { return conv(c, nd); });
    add(b);
  }
  for (std::size_t nd : {1, 2, 3}) {
    std::string name = "conv_transpose" + std::to_string(nd) + "d";
    OpBuilder b(name, "aten::" + name + ".input", "conv");
    b.in(input("input")).in(input("weight")).in(input("bias", true)).dtypes(kF32F64).grad();
    b.rank(static_cast<int>(nd) + 1);
    b.note("no bf16: CPU libtorch 1.13 runs bf16 conv_transpose as a forward conv (wrong channel check)");
    b.arg("stride", ArgType::Ints, "1").arg("padding", ArgType::Ints, "0").arg("output_padding", ArgType::Ints, "0");
    b.arg("groups", ArgType::Int, "1").arg("dilation", ArgType::Ints, "1");
    b.fn([nd](const OpCall& c) { return conv_transpose(c, nd); });
    add(b);
  }

  // ---- Pooling. ----
  for (std::size_t nd : {1, 2, 3}) {
    std::string name = "max_pool" + std::to_string(nd) + "d";
    OpBuilder b(name, "aten::" + name, "pool");
    b.x()
        .dtypes(nd == 3 ? kF32F64 : kNoHalf)
        .grad()
        .arg("kernel_size", ArgType::Ints, "2")
        .arg("stride", ArgType::Ints, "0");
    b.arg("padding", ArgType::Ints, "0").arg("dilation", ArgType::Ints, "1").arg("ceil_mode", ArgType::Bool, "0");
    b.rank(static_cast<int>(nd) + 1);
    b.note("stride 0 = kernel_size; bwd routes to the chosen max (ties in f16/bf16)");
    b.fn([nd](const OpCall& c) { return max_pool(c, nd); });
    add(b);
  }
  for (std::size_t nd : {1, 2, 3}) {
    std::string name = "avg_pool" + std::to_string(nd) + "d";
    OpBuilder b(name, "aten::" + name, "pool");
    b.x()
        .dtypes(nd == 3 ? kF32F64 : kNoHalf)
        .grad()
        .arg("kernel_size", ArgType::Ints, "2")
        .arg("stride", ArgType::Ints, "0");
    b.arg("padding", ArgType::Ints, "0")
        .arg("ceil_mode", ArgType::Bool, "0")
        .arg("count_include_pad", ArgType::Bool, "1");
    b.rank(static_cast<int>(nd) + 1).note("stride 0 = kernel_size");
    b.fn([nd](const OpCall& c) { return avg_pool(c, nd); });
    add(b);
  }
  {
    OpBuilder b("adaptive_avg_pool1d", "aten::adaptive_avg_pool1d", "pool");
    b.x().dtypes(kNoHalf).grad().rank(2).arg("output_size", ArgType::Ints, "2");
    b.fn([](const OpCall& c) { return T{at::adaptive_avg_pool1d(c.t(0), c.ints("output_size"))}; });
    add(b);
  }
  {
    OpBuilder b("adaptive_avg_pool2d", "aten::adaptive_avg_pool2d", "pool");
    b.x().dtypes(kNoHalf).grad().rank(3).arg("output_size", ArgType::Ints, "2");
    b.fn([](const OpCall& c) { return T{at::adaptive_avg_pool2d(c.t(0), per_dim(c.ints("output_size"), 2))}; });
    add(b);
  }
  {
    OpBuilder b("adaptive_max_pool2d", "aten::adaptive_max_pool2d", "pool");
    b.x().dtypes(kNoHalf).grad().rank(3);
    b.arg("output_size", ArgType::Ints, "2").arg("return_indices", ArgType::Bool, "0");
    b.note("return_indices=1 adds the input gathered at the indices (not the indices: ties)");
    b.fn([](const OpCall& c) {
      const at::Tensor& x = c.t(0);
      auto [v, i] = at::adaptive_max_pool2d(x, per_dim(c.ints("output_size"), 2));
      if (!c.b("return_indices")) return T{v};
      // Indices are flat over the two spatial dims of each plane.
      at::Tensor g = x.flatten(-2).gather(-1, i.flatten(-2)).view_as(v);
      return T{v, g};
    });
    add(b);
  }

  // ---- Normalization. Running statistics are cloned: training mode updates them in place,
  // and the updated values are part of what train mode promises, so they are outputs too. ----
  {
    OpBuilder b("batch_norm", "aten::batch_norm", "normalization");
    b.in(input("input"))
        .in(fixed("running_mean", Domain::Real, -1, 1))
        .in(fixed("running_var", Domain::Positive, 0.5, 2));
    b.in(input("weight", true)).in(input("bias", true)).dtypes(kNoHalf).grad().rank(2);
    b.arg("training", ArgType::Bool, "0").arg("momentum", ArgType::Float, "0.1").arg("eps", ArgType::Float, "1e-05");
    b.note("training=1 returns out, updated running_mean, updated running_var");
    b.fn([](const OpCall& c) {
      at::Tensor rm = c.t(1).clone(), rv = c.t(2).clone();
      bool train = c.b("training");
      at::Tensor y = at::batch_norm(c.t(0), c.opt(3), c.opt(4), rm, rv, train, c.f("momentum"), c.f("eps"), true);
      return train ? T{y, rm, rv} : T{y};
    });
    add(b);
  }
  {
    OpBuilder b("layer_norm", "aten::layer_norm", "normalization");
    b.in(input("input")).in(input("weight", true)).in(input("bias", true)).dtypes(kNoHalf).grad().rank(1);
    b.arg("ndims", ArgType::Int, "1").arg("eps", ArgType::Float, "1e-05");
    b.note("normalized_shape = the last ndims dims of the input (weight/bias have that shape)");
    b.fn([](const OpCall& c) {
      const at::Tensor& x = c.t(0);
      auto shape = x.sizes().slice(static_cast<std::size_t>(x.dim() - c.i("ndims")));
      return T{at::layer_norm(x, shape, c.opt(1), c.opt(2), c.f("eps"))};
    });
    add(b);
  }
  {
    OpBuilder b("group_norm", "aten::group_norm", "normalization");
    b.in(input("input")).in(input("weight", true)).in(input("bias", true)).dtypes(kNoHalf).grad().rank(2);
    b.arg("num_groups", ArgType::Int, "2").arg("eps", ArgType::Float, "1e-05");
    b.fn([](const OpCall& c) { return T{at::group_norm(c.t(0), c.i("num_groups"), c.opt(1), c.opt(2), c.f("eps"))}; });
    add(b);
  }
  {
    OpBuilder b("instance_norm", "aten::instance_norm", "normalization");
    b.in(input("input"))
        .in(input("weight", true))
        .in(input("bias", true))
        .dtypes(kNoHalf)
        .grad()
        .rank(2)
        .arg("eps", ArgType::Float, "1e-05");
    b.note("use_input_stats=1, no running statistics");
    b.fn([](const OpCall& c) {
      return T{at::instance_norm(c.t(0), c.opt(1), c.opt(2), {}, {}, true, 0.1, c.f("eps"), true)};
    });
    add(b);
  }

  // ---- Embedding: row indices bounded by the weight's dim 0. ----
  {
    OpBuilder b("embedding", "aten::embedding", "embedding");
    InputSpec idx = fixed("indices", Domain::Index);
    idx.index_of = 0;
    b.in(input("weight")).in(idx).dtypes(kAllTypes).grad().arg("padding_idx", ArgType::Int, "-1");
    b.note("padding_idx -1 = none (aten's convention); that row gets no gradient");
    b.fn([](const OpCall& c) { return T{at::embedding(c.t(0), c.t(1), c.i("padding_idx"))}; });
    add(b);
  }

  // ---- Losses. ----
  {
    auto b = loss("cross_entropy", "aten::cross_entropy_loss");
    b.x(-4, 4).in(fixed("target", Domain::Class)).dtypes(kNoHalf).arg("label_smoothing", ArgType::Float, "0");
    b.note("class-index targets in [0, C), C = dim 1 of the input (dim 0 if 1-d)");
    b.fn([](const OpCall& c) {
      return T{at::cross_entropy_loss(c.t(0), c.t(1), {}, reduction_of(c), -100, c.f("label_smoothing"))};
    });
    add(b);
  }
  {
    auto b = loss("nll_loss", "aten::nll_loss_nd");
    b.x(-4, 4).in(fixed("target", Domain::Class)).dtypes(kNoHalf);
    b.note("the input is made log-probabilities with log_softmax over the class dim first");
    b.fn([](const OpCall& c) {
      at::Tensor lp = at::log_softmax(c.t(0), c.t(0).dim() >= 2 ? 1 : 0);
      return T{at::nll_loss_nd(lp, c.t(1), {}, reduction_of(c))};
    });
    add(b);
  }
  {
    auto b = loss("mse_loss", "aten::mse_loss");
    b.x().in(input("target")).dtypes(kFloatDTypes & ~dtype_bit(DType::BF16));
    b.note("CPU has no bf16 mse and no f16 mse backward");
    b.fn([](const OpCall& c) { return T{at::mse_loss(c.t(0), c.t(1), reduction_of(c))}; });
    add(b);
  }
  {
    auto b = loss("l1_loss", "aten::l1_loss");
    b.x().in(input("target"));
    b.fn([](const OpCall& c) { return T{at::l1_loss(c.t(0), c.t(1), reduction_of(c))}; });
    add(b);
  }
  {
    auto b = loss("smooth_l1_loss", "aten::smooth_l1_loss");
    b.x().in(input("target")).arg("beta", ArgType::Float, "1").note("CPU has no f16 backward");
    b.fn([](const OpCall& c) { return T{at::smooth_l1_loss(c.t(0), c.t(1), reduction_of(c), c.f("beta"))}; });
    add(b);
  }
  {
    auto b = loss("binary_cross_entropy_with_logits", "aten::binary_cross_entropy_with_logits");
    InputSpec target = input("target");
    target.domain = Domain::Prob;
    b.x(-4, 4).in(target).dtypes(kNoHalf);
    b.fn([](const OpCall& c) {
      return T{at::binary_cross_entropy_with_logits(c.t(0), c.t(1), {}, {}, reduction_of(c))};
    });
    add(b);
  }

  // ---- Interpolation: (N, C, spatial...) inputs. ----
  {
    OpBuilder b("interpolate_nearest", "aten::upsample_nearest2d.vec", "interpolate");
    b.x().rank(3).dtypes(kNoHalf | dtype_bit(DType::U8)).grad();
    b.arg("size", ArgType::Ints, "0").arg("scale_factor", ArgType::Float, "2");
    b.note("size 0 = use scale_factor; 3/4/5-d input calls upsample_nearest1d/2d/3d");
    b.fn([](const OpCall& c) { return interpolate(c, "nearest"); });
    add(b);
  }
  {
    OpBuilder b("interpolate_linear", "aten::upsample_bilinear2d.vec", "interpolate");
    b.x().rank(3).dtypes(kNoHalf).grad();
    b.arg("size", ArgType::Ints, "0").arg("scale_factor", ArgType::Float, "2").arg("align_corners", ArgType::Bool, "0");
    b.note("size 0 = use scale_factor; 3/4/5-d input: linear/bilinear/trilinear");
    b.fn([](const OpCall& c) { return interpolate(c, "linear"); });
    add(b);
  }
  {
    OpBuilder b("interpolate_bilinear", "aten::upsample_bilinear2d.vec", "interpolate");
    b.x().rank(4).dtypes(kNoHalf).grad();
    b.arg("size", ArgType::Ints, "0").arg("scale_factor", ArgType::Float, "2").arg("align_corners", ArgType::Bool, "0");
    b.note("size 0 = use scale_factor; 4-d input");
    b.fn([](const OpCall& c) {
      TORCH_CHECK(c.t(0).dim() == 4, "bilinear interpolation takes a 4-d input");
      return interpolate(c, "linear");
    });
    add(b);
  }
  {
    OpBuilder b("interpolate_bicubic", "aten::upsample_bicubic2d.vec", "interpolate");
    b.x().rank(4).dtypes(kNoHalf).grad();
    b.arg("size", ArgType::Ints, "0").arg("scale_factor", ArgType::Float, "2").arg("align_corners", ArgType::Bool, "0");
    b.note("size 0 = use scale_factor; 4-d input");
    b.fn([](const OpCall& c) { return interpolate(c, "bicubic"); });
    add(b);
  }

  // ---- Attention. libtorch 1.13 has no at::scaled_dot_product_attention: this is its math form.
  {
    OpBuilder b("sdpa_math", "aten::matmul+aten::softmax.int", "attention");
    b.in(input("query"))
        .in(input("key"))
        .in(input("value"))
        .dtypes(kNoHalf)
        .grad()
        .rank(2)
        .arg("is_causal", ArgType::Bool, "0");
    b.note(
        "math form of scaled_dot_product_attention (absent in libtorch 1.13): softmax(q k^T / sqrt(E) "
        "+ causal mask) v; is_causal masks with tril(ones(L, S)), so L <= S keeps every row finite");
    b.fn([](const OpCall& c) {
      const at::Tensor &q = c.t(0), &k = c.t(1), &v = c.t(2);
      at::Tensor s = at::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(q.size(-1))));
      if (c.b("is_causal")) {
        at::Tensor keep = at::ones({q.size(-2), k.size(-2)}, q.options().dtype(at::kBool)).tril();
        s = s.masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
      }
      return T{at::matmul(at::softmax(s, -1), v)};
    });
    add(b);
  }
}

}  // namespace gauntlet
