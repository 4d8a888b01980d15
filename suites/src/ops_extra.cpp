// Op table: ops a backend must get right beyond what the corpus runs: special functions,
// more elementwise binaries, shrink activations, statistics and searching, vector/matrix
// products, pixel and index ops, distances, and the remaining torch.nn losses.
//
// Conventions as in the other families: inputs stay inside each function's domain (poles and
// branch cuts avoided), the dtypes are those CPU libtorch 1.13 computes (the `cpu` backend runs
// the case dtype), and ops returning indices of ties return comparable values instead.
#include "gauntlet/suites/op_impl.h"

namespace gauntlet {

namespace {

using T = std::vector<at::Tensor>;
constexpr DTypeSet kF32F64 = dtype_bit(DType::F64) | dtype_bit(DType::F32);
constexpr DTypeSet kNoHalf = kF32F64 | dtype_bit(DType::BF16);
constexpr DTypeSet kNumeric = kFloatDTypes | kIntDTypes;
constexpr DTypeSet kSignedInt =
    dtype_bit(DType::I64) | dtype_bit(DType::I32) | dtype_bit(DType::I16) | dtype_bit(DType::I8);

InputSpec input(const char* name, Domain domain = Domain::Real, double lo = -2, double hi = 2) {
  InputSpec s;
  s.name = name;
  s.domain = domain;
  s.lo = lo;
  s.hi = hi;
  return s;
}

InputSpec fixed(const char* name, Domain domain = Domain::Real, double lo = -2, double hi = 2) {
  InputSpec s = input(name, domain, lo, hi);
  s.differentiable = false;
  return s;
}

std::int64_t reduction_of(const OpCall& c) {
  const std::string r = c.s("reduction");
  return r == "none" ? at::Reduction::None : r == "sum" ? at::Reduction::Sum : at::Reduction::Mean;
}

// A +-1 target from a real input (sign, 0 counted as +1): margin and embedding losses.
at::Tensor plus_minus_one(const at::Tensor& t) { return at::where(t >= 0, at::ones_like(t), -at::ones_like(t)); }

OpBuilder special(const char* name, const char* aten, double lo, double hi, bool positive = false) {
  OpBuilder b(name, aten, "special");
  if (positive)
    b.pos(lo, hi);
  else
    b.x(lo, hi);
  b.dtypes(kF32F64).grad().special().strides_like_input();
  return b;
}

OpBuilder loss(const char* name, const char* aten) {
  OpBuilder b(name, aten, "loss");
  b.arg("reduction", ArgType::Str, "mean", {"mean", "sum", "none"}).grad().dtypes(kF32F64);
  return b;
}

}  // namespace

void register_extra_ops(OpRegistry& r) {
  auto add = [&r](OpBuilder& b) { r.add(std::move(b).build()); };
#define SPECIAL(NAME, ATEN, LO, HI, POS, EXPR) \
  {                                            \
    auto b = special(NAME, ATEN, LO, HI, POS); \
    b.fn([](const OpCall& c) {                 \
      const auto& x = c.t(0);                  \
      return T{EXPR};                          \
    });                                        \
    add(b);                                    \
  }

  // ---- Special functions (f32/f64: the CPU's bf16/f16 coverage of these is partial). ----
  // No special values: sin of values near f32's max (0.9 * 3.4e38) differs between the f32 and
  // the f64 kernels by more than f32's tolerance (measured on CPU), so sinc's special-value
  // cases would judge the CPU's own argument reduction, not a backend.
  {
    OpBuilder b("sinc", "aten::sinc", "special");
    b.x(-4, 4).dtypes(kF32F64).grad().strides_like_input();
    b.fn([](const OpCall& c) { return T{at::sinc(c.t(0))}; });
    add(b);
  }
  SPECIAL("i0", "aten::i0", -4, 4, false, at::i0(x))
  SPECIAL("special_i0e", "aten::special_i0e", -4, 4, false, at::special_i0e(x))
  SPECIAL("special_i1", "aten::special_i1", -4, 4, false, at::special_i1(x))
  SPECIAL("special_i1e", "aten::special_i1e", -4, 4, false, at::special_i1e(x))
  SPECIAL("special_ndtr", "aten::special_ndtr", -4, 4, false, at::special_ndtr(x))
  SPECIAL("special_ndtri", "aten::special_ndtri", 0.02, 0.98, true, at::special_ndtri(x))
  SPECIAL("special_log_ndtr", "aten::special_log_ndtr", -4, 4, false, at::special_log_ndtr(x))
  SPECIAL("special_erfcx", "aten::special_erfcx", -2, 4, false, at::special_erfcx(x))
  SPECIAL("special_entr", "aten::special_entr", 0.05, 4, true, at::special_entr(x))
  SPECIAL("deg2rad", "aten::deg2rad", -360, 360, false, at::deg2rad(x))
  SPECIAL("rad2deg", "aten::rad2deg", -4, 4, false, at::rad2deg(x))
#undef SPECIAL
  {
    auto b = special("polygamma", "aten::polygamma", 0.5, 5, true);
    b.arg("n", ArgType::Int, "1");
    b.note("n-th derivative of digamma; positive inputs keep clear of the poles");
    b.fn([](const OpCall& c) { return T{at::polygamma(c.i("n"), c.t(0))}; });
    add(b);
  }
  {
    auto b = special("mvlgamma", "aten::mvlgamma", 1.2, 5, true);
    b.arg("p", ArgType::Int, "2");
    b.note("inputs > (p - 1) / 2 for p <= 3");
    b.fn([](const OpCall& c) { return T{at::mvlgamma(c.t(0), c.i("p"))}; });
    add(b);
  }
  {
    OpBuilder b("xlog1py", "aten::special_xlog1py", "special");
    b.x().pos(0.1, 4).dtypes(kF32F64).grad();
    b.fn([](const OpCall& c) { return T{at::special_xlog1py(c.t(0), c.t(1))}; });
    add(b);
  }

  // ---- More elementwise binaries. ----
  {
    OpBuilder b("logaddexp", "aten::logaddexp", "elementwise");
    b.x(-4, 4).x(-4, 4).dtypes(kNoHalf).grad().special();
    b.fn([](const OpCall& c) { return T{at::logaddexp(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("logaddexp2", "aten::logaddexp2", "elementwise");
    b.x(-4, 4).x(-4, 4).dtypes(kNoHalf).grad().special();
    b.fn([](const OpCall& c) { return T{at::logaddexp2(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("float_power", "aten::float_power.Tensor_Tensor", "elementwise");
    b.pos(0.1, 3).x(-2, 2).dtypes(dtype_bit(DType::F64)).grad();
    b.note(
        "f64 only: float_power computes and returns float64 whatever the input dtype, and the harness expects "
        "outputs in the case dtype");
    b.fn([](const OpCall& c) { return T{at::float_power(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("heaviside", "aten::heaviside", "elementwise");
    b.x().x().dtypes(kNumeric & ~dtype_bit(DType::F16));
    b.note("values where self == 0 (integer inputs hit it)");
    b.fn([](const OpCall& c) { return T{at::heaviside(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("gcd", "aten::gcd", "elementwise");
    b.x(-8, 8).x(-8, 8).dtypes(kIntDTypes);
    b.fn([](const OpCall& c) { return T{at::gcd(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("lcm", "aten::lcm", "elementwise");
    b.x(-8, 8).x(-8, 8).dtypes(kIntDTypes);
    b.fn([](const OpCall& c) { return T{at::lcm(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("bitwise_left_shift", "aten::bitwise_left_shift.Tensor", "elementwise");
    b.x(-8, 8).x(0, 4).dtypes(kSignedInt);
    b.note("shift amounts 0..4");
    b.fn([](const OpCall& c) { return T{at::bitwise_left_shift(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("bitwise_right_shift", "aten::bitwise_right_shift.Tensor", "elementwise");
    b.x(-8, 8).x(0, 4).dtypes(kSignedInt);
    b.note("shift amounts 0..4 (arithmetic shift of negatives)");
    b.fn([](const OpCall& c) { return T{at::bitwise_right_shift(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("ldexp", "aten::ldexp.Tensor", "elementwise");
    b.x();
    InputSpec e = fixed("exponent", Domain::Real, -4, 4);
    e.type = InputType::Int64;
    b.in(e).dtypes(kF32F64).grad();
    b.note("self * 2^exponent, int64 exponents in -4..4");
    b.fn([](const OpCall& c) { return T{at::ldexp(c.t(0), c.t(1))}; });
    add(b);
  }

  // ---- Shrink and threshold activations (kinks at +-lambd and at threshold). ----
  {
    OpBuilder b("hardshrink", "aten::hardshrink", "nn");
    b.x(-2, 2).kinks({-0.5, 0.5}).dtypes(kNoHalf).grad().special().arg("lambd", ArgType::Float, "0.5");
    b.fn([](const OpCall& c) { return T{at::hardshrink(c.t(0), c.f("lambd"))}; });
    add(b);
  }
  {
    OpBuilder b("softshrink", "aten::softshrink", "nn");
    b.x(-2, 2).kinks({-0.5, 0.5}).dtypes(kNoHalf).grad().special().arg("lambd", ArgType::Float, "0.5");
    b.fn([](const OpCall& c) { return T{at::softshrink(c.t(0), c.f("lambd"))}; });
    add(b);
  }
  {
    OpBuilder b("threshold", "aten::threshold", "nn");
    b.x(-2, 2).kinks({0.25}).dtypes(kNoHalf).grad().special();
    b.arg("threshold", ArgType::Float, "0.25").arg("value", ArgType::Float, "-1");
    b.note("y = x if x > threshold else value (the kink is the default threshold)");
    b.fn([](const OpCall& c) { return T{at::threshold(c.t(0), c.f("threshold"), c.f("value"))}; });
    add(b);
  }

  // ---- Statistics, scans, searching. ----
  {
    OpBuilder b("logcumsumexp", "aten::logcumsumexp", "scan");
    b.x(-4, 4).dtypes(kF32F64).grad().arg("dim", ArgType::Int, "0");
    b.fn([](const OpCall& c) { return T{at::logcumsumexp(c.t(0), c.i("dim"))}; });
    add(b);
  }
  {
    OpBuilder b("nanmean", "aten::nanmean", "reduction");
    b.x().dtypes(kF32F64).grad().special().arg("dim", ArgType::Int, "-1").arg("keepdim", ArgType::Bool, "0");
    b.fn([](const OpCall& c) { return T{at::nanmean(c.t(0), at::IntArrayRef{c.i("dim")}, c.b("keepdim"))}; });
    add(b);
  }
  {
    OpBuilder b("std_mean", "aten::std_mean.correction", "reduction");
    b.x().dtypes(kNoHalf).grad();
    b.arg("dim", ArgType::Int, "-1").arg("correction", ArgType::Int, "1").arg("keepdim", ArgType::Bool, "0");
    b.fn([](const OpCall& c) {
      auto [s, m] = at::std_mean(c.t(0), at::IntArrayRef{c.i("dim")}, c.i("correction"), c.b("keepdim"));
      return T{s, m};
    });
    add(b);
  }
  {
    OpBuilder b("aminmax", "aten::aminmax", "reduction");
    b.x().dtypes(kNumeric & ~dtype_bit(DType::F16)).special();
    b.arg("dim", ArgType::Int, "-1").arg("keepdim", ArgType::Bool, "0");
    b.fn([](const OpCall& c) {
      auto [mn, mx] = at::aminmax(c.t(0), c.i("dim"), c.b("keepdim"));
      return T{mn, mx};
    });
    add(b);
  }
  {
    OpBuilder b("nanmedian", "aten::nanmedian.dim", "reduction");
    b.x().dtypes(kF32F64).grad().special();
    b.arg("dim", ArgType::Int, "-1").arg("keepdim", ArgType::Bool, "0");
    b.note("out0 = values, out1 = input gathered at the indices (ties); NaNs are ignored");
    b.fn([](const OpCall& c) {
      const at::Tensor& x = c.t(0);
      const std::int64_t d = c.i("dim");
      const bool keep = c.b("keepdim");
      auto [v, i] = at::nanmedian(x, d, keep);
      if (x.dim() == 0) return T{v, x.clone()};
      at::Tensor g = x.gather(d, keep ? i : i.unsqueeze(d));
      return T{v, keep ? g : g.squeeze(d)};
    });
    add(b);
  }
  {
    OpBuilder b("renorm", "aten::renorm", "reduction");
    b.x().dtypes(kF32F64).grad().rank(2);
    b.arg("p", ArgType::Float, "2").arg("dim", ArgType::Int, "0").arg("maxnorm", ArgType::Float, "1");
    b.note("sub-tensors along dim with a p-norm above maxnorm are scaled down to it");
    b.fn([](const OpCall& c) { return T{at::renorm(c.t(0), c.f("p"), c.i("dim"), c.f("maxnorm"))}; });
    add(b);
  }
  {
    OpBuilder b("histc", "aten::histc", "reduction");
    b.x(-2, 2).dtypes(kF32F64);
    b.arg("bins", ArgType::Int, "10").arg("min", ArgType::Float, "-2").arg("max", ArgType::Float, "2");
    b.note("counts per bin, in the input dtype");
    b.fn([](const OpCall& c) { return T{at::histc(c.t(0), c.i("bins"), c.f("min"), c.f("max"))}; });
    add(b);
  }
  {
    OpBuilder b("bucketize", "aten::bucketize.Tensor", "sort");
    b.x().in(fixed("boundaries")).dtypes(kNumeric & ~dtype_bit(DType::F16));
    b.arg("right", ArgType::Bool, "0");
    b.note("1-d boundaries, sorted first; int64 bucket indices (exact)");
    b.fn([](const OpCall& c) {
      return T{at::bucketize(c.t(0), std::get<0>(at::sort(c.t(1).reshape({-1}))), false, c.b("right"))};
    });
    add(b);
  }
  {
    OpBuilder b("searchsorted", "aten::searchsorted.Tensor", "sort");
    b.in(fixed("sorted_sequence")).x().dtypes(kNumeric & ~dtype_bit(DType::F16));
    b.arg("right", ArgType::Bool, "0");
    b.note("sorted_sequence is sorted along its last dim first; its leading dims match self's; int64 (exact)");
    b.fn([](const OpCall& c) {
      return T{at::searchsorted(std::get<0>(at::sort(c.t(0), -1)), c.t(1), false, c.b("right"))};
    });
    add(b);
  }

  // ---- Vector and matrix products. ----
  {
    OpBuilder b("trace", "aten::trace", "matmul");
    b.x().dtypes(kF32F64 | kIntDTypes).grad().rank(2);
    b.fn([](const OpCall& c) { return T{at::trace(c.t(0))}; });
    add(b);
  }
  {
    OpBuilder b("outer", "aten::outer", "matmul");
    b.x().x().dtypes(kNoHalf | kIntDTypes).grad().rank(1);
    b.fn([](const OpCall& c) { return T{at::outer(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("kron", "aten::kron", "matmul");
    b.x().x().dtypes(kNoHalf | kIntDTypes).grad();
    b.fn([](const OpCall& c) { return T{at::kron(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("cross", "aten::linalg_cross", "matmul");
    b.x().x().dtypes(kF32F64 | kIntDTypes).grad().rank(1).arg("dim", ArgType::Int, "-1");
    b.note("size 3 along dim");
    b.fn([](const OpCall& c) { return T{at::linalg_cross(c.t(0), c.t(1), c.i("dim"))}; });
    add(b);
  }
  {
    OpBuilder b("dot", "aten::dot", "matmul");
    b.x().x().dtypes(kF32F64 | kIntDTypes).grad().rank(1);
    b.fn([](const OpCall& c) { return T{at::dot(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("mv", "aten::mv", "matmul");
    b.x().x().dtypes(kNoHalf | kIntDTypes).grad().rank(2);
    b.fn([](const OpCall& c) { return T{at::mv(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("addmv", "aten::addmv", "matmul");
    b.x().x().x().dtypes(kNoHalf).grad().arg("beta", ArgType::Float, "0.5").arg("alpha", ArgType::Float, "2");
    b.fn([](const OpCall& c) { return T{at::addmv(c.t(0), c.t(1), c.t(2), c.f("beta"), c.f("alpha"))}; });
    add(b);
  }
  {
    OpBuilder b("addr", "aten::addr", "matmul");
    b.x().x().x().dtypes(kNoHalf).grad().arg("beta", ArgType::Float, "0.5").arg("alpha", ArgType::Float, "2");
    b.fn([](const OpCall& c) { return T{at::addr(c.t(0), c.t(1), c.t(2), c.f("beta"), c.f("alpha"))}; });
    add(b);
  }

  // ---- Pixel, channel and index ops. ----
  {
    OpBuilder b("pixel_shuffle", "aten::pixel_shuffle", "shape");
    b.x().dtypes(kAllTypes).grad().rank(3).arg("upscale_factor", ArgType::Int, "2");
    b.fn([](const OpCall& c) { return T{at::pixel_shuffle(c.t(0), c.i("upscale_factor"))}; });
    add(b);
  }
  {
    OpBuilder b("pixel_unshuffle", "aten::pixel_unshuffle", "shape");
    b.x().dtypes(kAllTypes).grad().rank(3).arg("downscale_factor", ArgType::Int, "2");
    b.fn([](const OpCall& c) { return T{at::pixel_unshuffle(c.t(0), c.i("downscale_factor"))}; });
    add(b);
  }
  {
    OpBuilder b("channel_shuffle", "aten::channel_shuffle", "shape");
    b.x().dtypes(kF32F64).rank(3).arg("groups", ArgType::Int, "2");
    b.note("no backward: libtorch 1.13 has no derivative for channel_shuffle");
    b.fn([](const OpCall& c) { return T{at::channel_shuffle(c.t(0), c.i("groups"))}; });
    add(b);
  }
  {
    OpBuilder b("rot90", "aten::rot90", "shape");
    b.x().dtypes(kAllTypes).grad().rank(2).arg("k", ArgType::Int, "1").arg("dims", ArgType::Ints, "0:1");
    b.fn([](const OpCall& c) { return T{at::rot90(c.t(0), c.i("k"), c.ints("dims"))}; });
    add(b);
  }
  {
    OpBuilder b("one_hot", "aten::one_hot", "index");
    InputSpec cls = fixed("self", Domain::Real, 0, 4);
    cls.type = InputType::Int64;
    b.in(cls).dtypes(dtype_bit(DType::I64)).arg("num_classes", ArgType::Int, "5");
    b.note("int64 class ids in 0..4");
    b.fn([](const OpCall& c) { return T{at::one_hot(c.t(0), c.i("num_classes"))}; });
    add(b);
  }
  {
    OpBuilder b("index_copy", "aten::index_copy", "index");
    InputSpec idx = fixed("index", Domain::UniqueIndex);
    b.x().in(idx).in(input("source")).dtypes(kAllTypes).grad().arg("dim", ArgType::Int, "0");
    b.note("1-d unique index; source has self's shape with index.numel() along dim");
    b.fn([](const OpCall& c) { return T{at::index_copy(c.t(0), c.i("dim"), c.t(1), c.t(2))}; });
    add(b);
  }
  {
    OpBuilder b("masked_scatter", "aten::masked_scatter", "index");
    b.x().in(fixed("mask", Domain::Mask)).in(input("source")).dtypes(kAllTypes).grad();
    b.note("source needs at least as many elements as the mask has true values");
    b.fn([](const OpCall& c) { return T{at::masked_scatter(c.t(0), c.t(1), c.t(2))}; });
    add(b);
  }
  {
    OpBuilder b("masked_select", "aten::masked_select", "index");
    b.x().in(fixed("mask", Domain::Mask)).dtypes(kAllTypes).grad();
    b.note("1-d output whose length is the mask's true count");
    b.fn([](const OpCall& c) { return T{at::masked_select(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("col2im", "aten::col2im", "nn");
    b.x().dtypes(kF32F64).grad().rank(2);
    b.arg("output_size", ArgType::Ints, "5").arg("kernel_size", ArgType::Ints, "2").arg("dilation", ArgType::Ints, "1");
    b.arg("padding", ArgType::Ints, "0").arg("stride", ArgType::Ints, "1");
    b.note("F.fold: (N, C*kh*kw, L) -> (N, C, H, W); overlapping blocks add up");
    b.fn([](const OpCall& c) {
      auto two = [](std::vector<std::int64_t> v) {
        if (v.size() == 1) v.assign(2, v[0]);
        return v;
      };
      return T{at::col2im(c.t(0), two(c.ints("output_size")), two(c.ints("kernel_size")), two(c.ints("dilation")),
                          two(c.ints("padding")), two(c.ints("stride")))};
    });
    add(b);
  }

  // ---- Distances. ----
  {
    OpBuilder b("cosine_similarity", "aten::cosine_similarity", "distance");
    b.x().x().dtypes(kF32F64).grad().rank(1);
    b.arg("dim", ArgType::Int, "-1").arg("eps", ArgType::Float, "1e-08");
    b.fn([](const OpCall& c) { return T{at::cosine_similarity(c.t(0), c.t(1), c.i("dim"), c.f("eps"))}; });
    add(b);
  }
  {
    OpBuilder b("pairwise_distance", "aten::pairwise_distance", "distance");
    b.x().x().dtypes(kF32F64).grad().rank(1);
    b.arg("p", ArgType::Float, "2").arg("eps", ArgType::Float, "1e-06").arg("keepdim", ArgType::Bool, "0");
    b.fn(
        [](const OpCall& c) { return T{at::pairwise_distance(c.t(0), c.t(1), c.f("p"), c.f("eps"), c.b("keepdim"))}; });
    add(b);
  }
  {
    OpBuilder b("cdist", "aten::cdist", "distance");
    b.x().x().dtypes(kF32F64).grad().rank(2).arg("p", ArgType::Float, "2");
    b.note("(B, P, M) x (B, R, M) -> (B, P, R); compute_mode: the default (matmul beyond 25 rows for p = 2)");
    b.fn([](const OpCall& c) { return T{at::cdist(c.t(0), c.t(1), c.f("p"))}; });
    add(b);
  }
  {
    OpBuilder b("pdist", "aten::pdist", "distance");
    b.x().dtypes(kF32F64).grad().rank(2).arg("p", ArgType::Float, "2");
    b.fn([](const OpCall& c) { return T{at::pdist(c.t(0), c.f("p"))}; });
    add(b);
  }

  // ---- Losses. ----
  {
    auto b = loss("huber_loss", "aten::huber_loss");
    b.x().in(input("target")).arg("delta", ArgType::Float, "1");
    b.fn([](const OpCall& c) { return T{at::huber_loss(c.t(0), c.t(1), reduction_of(c), c.f("delta"))}; });
    add(b);
  }
  {
    auto b = loss("kl_div", "aten::kl_div");
    b.x(-4, -0.1).in(input("target", Domain::Prob)).arg("log_target", ArgType::Bool, "0");
    b.note("input: log-probabilities (negative); target: probabilities (log_target=0) or read as log-probabilities");
    b.fn([](const OpCall& c) { return T{at::kl_div(c.t(0), c.t(1), reduction_of(c), c.b("log_target"))}; });
    add(b);
  }
  {
    auto b = loss("margin_ranking_loss", "aten::margin_ranking_loss");
    b.x().x().in(fixed("target")).arg("margin", ArgType::Float, "0.1");
    b.note("target = +-1 from the sign of the third input");
    b.fn([](const OpCall& c) {
      return T{at::margin_ranking_loss(c.t(0), c.t(1), plus_minus_one(c.t(2)), c.f("margin"), reduction_of(c))};
    });
    add(b);
  }
  {
    auto b = loss("hinge_embedding_loss", "aten::hinge_embedding_loss");
    b.x().in(fixed("target")).arg("margin", ArgType::Float, "1");
    b.note("target = +-1 from the sign of the second input");
    b.fn([](const OpCall& c) {
      return T{at::hinge_embedding_loss(c.t(0), plus_minus_one(c.t(1)), c.f("margin"), reduction_of(c))};
    });
    add(b);
  }
  {
    auto b = loss("soft_margin_loss", "aten::soft_margin_loss");
    b.x().in(fixed("target"));
    b.note("target = +-1 from the sign of the second input");
    b.fn([](const OpCall& c) { return T{at::soft_margin_loss(c.t(0), plus_minus_one(c.t(1)), reduction_of(c))}; });
    add(b);
  }
  {
    auto b = loss("binary_cross_entropy", "aten::binary_cross_entropy");
    b.in(input("self", Domain::Prob)).in(input("target", Domain::Prob));
    b.note("probabilities in (0.02, 0.98)");
    b.fn([](const OpCall& c) { return T{at::binary_cross_entropy(c.t(0), c.t(1), {}, reduction_of(c))}; });
    add(b);
  }
  {
    auto b = loss("poisson_nll_loss", "aten::poisson_nll_loss");
    b.x().in(input("target", Domain::Positive, 0.1, 4)).arg("log_input", ArgType::Bool, "1");
    b.arg("full", ArgType::Bool, "0");
    b.note("log_input=0 reads the input as rates (give a positive input then)");
    b.fn([](const OpCall& c) {
      return T{at::poisson_nll_loss(c.t(0), c.t(1), c.b("log_input"), c.b("full"), 1e-8, reduction_of(c))};
    });
    add(b);
  }
  {
    auto b = loss("cosine_embedding_loss", "aten::cosine_embedding_loss");
    b.x().x().in(fixed("target")).arg("margin", ArgType::Float, "0.2");
    b.note("(N, D) inputs; target (N) = +-1 from the sign of the third input");
    b.fn([](const OpCall& c) {
      return T{at::cosine_embedding_loss(c.t(0), c.t(1), plus_minus_one(c.t(2)), c.f("margin"), reduction_of(c))};
    });
    add(b);
  }
  {
    auto b = loss("triplet_margin_loss", "aten::triplet_margin_loss");
    b.x().x().x().arg("margin", ArgType::Float, "1").arg("swap", ArgType::Bool, "0");
    b.note("anchor, positive, negative (N, D); p = 2");
    b.fn([](const OpCall& c) {
      return T{at::triplet_margin_loss(c.t(0), c.t(1), c.t(2), c.f("margin"), 2.0, 1e-6, c.b("swap"), reduction_of(c))};
    });
    add(b);
  }
  {
    auto b = loss("multi_margin_loss", "aten::multi_margin_loss");
    b.x().in(fixed("target", Domain::Class)).arg("margin", ArgType::Float, "1");
    b.note("(N, C) input, class-index targets; p = 1");
    b.fn([](const OpCall& c) {
      return T{at::multi_margin_loss(c.t(0), c.t(1), 1, c.f("margin"), {}, reduction_of(c))};
    });
    add(b);
  }
  {
    auto b = loss("multilabel_margin_loss", "aten::multilabel_margin_loss");
    b.x().in(fixed("target", Domain::Class));
    b.note("(N, C) input, (N, C) class-index targets (a -1 would end each row's list; none here)");
    b.fn([](const OpCall& c) { return T{at::multilabel_margin_loss(c.t(0), c.t(1), reduction_of(c))}; });
    add(b);
  }
}

}  // namespace gauntlet
