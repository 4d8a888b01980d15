// Op table: reductions (sum, mean, var, norm, ...), index reductions (argmax, max.dim, median),
// scans (cumsum, cumprod, cummax) and softmax.
//
// Conventions of this family:
//  - A Str arg "dim" is either "all" (reduce every dim) or dims written as in an Ints arg,
//    "0" or "0:2" (ops that take one dim accept only one). An Int arg "dim" is one dim.
//  - Ops returning indices return the input values gathered at those indices instead of the raw
//    indices: with ties (small integers, f16/bf16 rounding) any of the tied indices is correct, but
//    the values gathered at them are equal, so a device that breaks a tie differently cannot fail.
//  - Backward of max.dim/min.dim/median/cummax routes the gradient to the chosen index, so tied
//    inputs (likely in f16/bf16) may legitimately give a different gradient: use f32/f64 for
//    eager-bwd of those ops.
#include "gauntlet/suites/op_impl.h"

namespace gauntlet {

namespace {

using T = std::vector<at::Tensor>;
constexpr DTypeSet kNumeric = kFloatDTypes | kIntDTypes;
// Sets below drop what CPU libtorch 1.13 lacks: no f16 softmax, scans, median, logsumexp;
// no f16/bf16 prod.
constexpr DTypeSet kNoHalf = kAllTypes & ~dtype_bit(DType::F16);
constexpr DTypeSet kNoHalfFloat = kFloatDTypes & ~dtype_bit(DType::F16);

// "all" -> every dim of x (empty for a 0-d x); "0:2" -> {0, 2}.
std::vector<std::int64_t> dims_of(const OpCall& c, const at::Tensor& x) {
  if (c.s("dim") == "all") {
    std::vector<std::int64_t> all(static_cast<std::size_t>(x.dim()));
    for (std::int64_t d = 0; d < x.dim(); ++d) all[static_cast<std::size_t>(d)] = d;
    return all;
  }
  return c.ints("dim");
}

// The one dim of a single-dim reduction given as a Str "dim" arg; nullopt for "all".
c10::optional<std::int64_t> one_dim(const OpCall& c) {
  if (c.s("dim") == "all") return c10::nullopt;
  auto d = c.ints("dim");
  TORCH_CHECK(d.size() == 1, "op reduces a single dim or 'all'");
  return d[0];
}

// x's values at `idx` along `dim`, where idx comes from a reduction over dim (keepdim or not).
at::Tensor gather_reduced(const at::Tensor& x, std::int64_t dim, const at::Tensor& idx, bool keepdim) {
  if (x.dim() == 0) return x.clone();
  at::Tensor g = x.gather(dim, keepdim ? idx : idx.unsqueeze(dim));
  return keepdim ? g : g.squeeze(dim);
}

// argmax/argmin as gathered values (see the conventions above); "all" flattens as torch does.
T arg_reduce(const OpCall& c, bool is_max) {
  const auto& x = c.t(0);
  auto d = one_dim(c);
  bool keep = c.b("keepdim");
  if (!d) {
    at::Tensor flat = x.reshape({-1});
    at::Tensor idx = is_max ? at::argmax(flat) : at::argmin(flat);
    at::Tensor v = flat.gather(0, idx.reshape({1}));
    return T{keep ? v.reshape(std::vector<std::int64_t>(static_cast<std::size_t>(x.dim()), 1)) : v.reshape({})};
  }
  at::Tensor idx = is_max ? at::argmax(x, *d, keep) : at::argmin(x, *d, keep);
  return T{gather_reduced(x, *d, idx, keep)};
}

OpBuilder reduction(const char* name, const char* aten, DTypeSet dtypes = kFloatDTypes) {
  OpBuilder b(name, aten, "reduction");
  b.x().dtypes(dtypes).arg("dim", ArgType::Str, "all").arg("keepdim", ArgType::Bool, "0");
  return b;
}

OpBuilder scan(const char* name, const char* aten, DTypeSet dtypes = kFloatDTypes) {
  OpBuilder b(name, aten, "scan");
  b.x().dtypes(dtypes).arg("dim", ArgType::Int, "0");
  return b;
}

}  // namespace

void register_reduction_ops(OpRegistry& r) {
  auto add = [&r](OpBuilder& b) { r.add(std::move(b).build()); };

  // Sums and products. Integer inputs accumulate in int64 (torch's promotion for sum/prod).
  {
    auto b = reduction("sum", "aten::sum.dim_IntList", kAllTypes);
    b.grad();
    b.fn([](const OpCall& c) { return T{at::sum(c.t(0), dims_of(c, c.t(0)), c.b("keepdim"))}; });
    add(b);
  }
  {
    auto b = reduction("mean", "aten::mean.dim");
    b.grad();
    b.fn([](const OpCall& c) { return T{at::mean(c.t(0), dims_of(c, c.t(0)), c.b("keepdim"))}; });
    add(b);
  }
  {
    auto b = reduction("nansum", "aten::nansum", kAllTypes);
    b.grad();
    b.fn([](const OpCall& c) { return T{at::nansum(c.t(0), dims_of(c, c.t(0)), c.b("keepdim"))}; });
    add(b);
  }
  {
    auto b = reduction("prod", "aten::prod.dim_int", kAllTypes & ~dtype_bit(DType::F16) & ~dtype_bit(DType::BF16));
    b.grad().note("dim: one dim or all");
    b.fn([](const OpCall& c) {
      auto d = one_dim(c);
      if (!d) return T{at::prod(c.t(0))};
      return T{at::prod(c.t(0), *d, c.b("keepdim"))};
    });
    add(b);
  }
  {
    auto b = reduction("amax", "aten::amax", kAllTypes);
    b.grad().special();
    b.fn([](const OpCall& c) { return T{at::amax(c.t(0), dims_of(c, c.t(0)), c.b("keepdim"))}; });
    add(b);
  }
  {
    auto b = reduction("amin", "aten::amin", kAllTypes);
    b.grad().special();
    b.fn([](const OpCall& c) { return T{at::amin(c.t(0), dims_of(c, c.t(0)), c.b("keepdim"))}; });
    add(b);
  }
  {
    auto b = reduction("logsumexp", "aten::logsumexp", kNoHalf);
    b.grad();
    b.fn([](const OpCall& c) { return T{at::logsumexp(c.t(0), dims_of(c, c.t(0)), c.b("keepdim"))}; });
    add(b);
  }
  {
    OpBuilder b("count_nonzero", "aten::count_nonzero.dim_IntList", "reduction");
    b.x().dtypes(kAllTypes).arg("dim", ArgType::Str, "all");  // torch has no keepdim here
    b.fn([](const OpCall& c) { return T{at::count_nonzero(c.t(0), dims_of(c, c.t(0)))}; });
    add(b);
  }

  // Logical reductions: bool and numeric inputs (uint8 inputs give a uint8 result, as in torch).
  {
    auto b = reduction("all", "aten::all.dim", kAllTypes);
    b.note("dim: one dim or all");
    b.fn([](const OpCall& c) {
      auto d = one_dim(c);
      return T{d ? at::all(c.t(0), *d, c.b("keepdim")) : at::all(c.t(0))};
    });
    add(b);
  }
  {
    auto b = reduction("any", "aten::any.dim", kAllTypes);
    b.note("dim: one dim or all");
    b.fn([](const OpCall& c) {
      auto d = one_dim(c);
      return T{d ? at::any(c.t(0), *d, c.b("keepdim")) : at::any(c.t(0))};
    });
    add(b);
  }

  // Statistics. var/std need more elements than `correction` along the reduced dims.
  {
    auto b = reduction("var", "aten::var.correction");
    b.arg("correction", ArgType::Int, "1").grad();
    b.fn([](const OpCall& c) { return T{at::var(c.t(0), dims_of(c, c.t(0)), c.i("correction"), c.b("keepdim"))}; });
    add(b);
  }
  {
    auto b = reduction("std", "aten::std.correction");
    b.arg("correction", ArgType::Int, "1").grad();
    b.fn([](const OpCall& c) { return T{at::std(c.t(0), dims_of(c, c.t(0)), c.i("correction"), c.b("keepdim"))}; });
    add(b);
  }
  {
    auto b = reduction("var_mean", "aten::var_mean.correction");
    b.arg("correction", ArgType::Int, "1").grad();
    b.fn([](const OpCall& c) {
      auto [v, m] = at::var_mean(c.t(0), dims_of(c, c.t(0)), c.i("correction"), c.b("keepdim"));
      return T{v, m};
    });
    add(b);
  }
  {
    auto b = reduction("norm", "aten::linalg_vector_norm");
    b.arg("p", ArgType::Float, "2").grad();
    b.note("torch.norm of a strided tensor calls linalg_vector_norm; p = 2, 1, inf, ...");
    b.fn([](const OpCall& c) {
      return T{at::linalg_vector_norm(c.t(0), c.f("p"), dims_of(c, c.t(0)), c.b("keepdim"))};
    });
    add(b);
  }

  // Index reductions: values, plus the input gathered at the indices instead of the indices.
  {
    auto b = reduction("argmax", "aten::argmax", kNumeric);
    b.note("returns the input gathered at the argmax (ties); dim: one dim or all");
    b.fn([](const OpCall& c) { return arg_reduce(c, true); });
    add(b);
  }
  {
    auto b = reduction("argmin", "aten::argmin", kNumeric);
    b.note("returns the input gathered at the argmin (ties); dim: one dim or all");
    b.fn([](const OpCall& c) { return arg_reduce(c, false); });
    add(b);
  }
  for (const char* name : {"max_dim", "min_dim", "median"}) {
    std::string n = name;
    const char* aten = n == "max_dim" ? "aten::max.dim" : n == "min_dim" ? "aten::min.dim" : "aten::median.dim";
    OpBuilder b(name, aten, "reduction");
    b.x().dtypes(n == "median" ? kNumeric & ~dtype_bit(DType::F16) : kAllTypes);
    b.arg("dim", ArgType::Int, "-1").arg("keepdim", ArgType::Bool, "0").grad();
    if (n != "median") b.special();
    b.note("out0 = values, out1 = input gathered at the indices (ties); bwd routes to the chosen index");
    b.fn([n](const OpCall& c) {
      const auto& x = c.t(0);
      std::int64_t d = c.i("dim");
      bool keep = c.b("keepdim");
      auto [v, i] = n == "max_dim"   ? at::max(x, d, keep)
                    : n == "min_dim" ? at::min(x, d, keep)
                                     : at::median(x, d, keep);
      return T{v, gather_reduced(x, d, i, keep)};
    });
    add(b);
  }

  // Scans. Integer cumsum/cumprod accumulate in int64.
  {
    auto b = scan("cumsum", "aten::cumsum", kNoHalf);
    b.grad();
    b.fn([](const OpCall& c) { return T{at::cumsum(c.t(0), c.i("dim"))}; });
    add(b);
  }
  {
    auto b = scan("cumprod", "aten::cumprod", kNoHalf);
    b.grad();
    b.fn([](const OpCall& c) { return T{at::cumprod(c.t(0), c.i("dim"))}; });
    add(b);
  }
  for (const char* name : {"cummax", "cummin"}) {
    std::string n = name;
    auto b = scan(name, n == "cummax" ? "aten::cummax" : "aten::cummin", kNoHalf);
    b.grad().note("out0 = values, out1 = input gathered at the indices (ties)");
    b.fn([n](const OpCall& c) {
      const auto& x = c.t(0);
      std::int64_t d = c.i("dim");
      auto [v, i] = n == "cummax" ? at::cummax(x, d) : at::cummin(x, d);
      return T{v, x.dim() == 0 ? x.clone() : x.gather(d, i)};
    });
    add(b);
  }

  // Softmax.
  {
    OpBuilder b("softmax", "aten::softmax.int", "softmax");
    b.x(-4, 4).dtypes(kNoHalfFloat).arg("dim", ArgType::Int, "-1").grad().special();
    b.fn([](const OpCall& c) { return T{at::softmax(c.t(0), c.i("dim"))}; });
    add(b);
  }
  {
    OpBuilder b("log_softmax", "aten::log_softmax.int", "softmax");
    b.x(-4, 4).dtypes(kNoHalfFloat).arg("dim", ArgType::Int, "-1").grad().special();
    b.fn([](const OpCall& c) { return T{at::log_softmax(c.t(0), c.i("dim"))}; });
    add(b);
  }
}

}  // namespace gauntlet
