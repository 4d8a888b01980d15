// Op table: indexing (gather, scatter, index_*), joining and splitting, views and layout changes,
// padding, triangles, sorting.
//
// Conventions of this family:
//  - Index inputs are bounded by the size of `self` along the "dim" arg (inputs.h); writes
//    (scatter, index_add, index_put) use UniqueIndex so that no element is written twice and the
//    result cannot depend on write order. For UniqueIndex, index.size(dim) <= self.size(dim).
//  - Ops returning indices of sorted/selected elements return the input gathered at them instead
//    (ties: any tied index is correct, the gathered values are equal).
//  - Outputs that are views are compared by value; expand is made contiguous first.
#include <algorithm>
#include <optional>
#include <string>

#include "gauntlet/suites/op_impl.h"

namespace gauntlet {

namespace {

using T = std::vector<at::Tensor>;
constexpr DTypeSet kNumeric = kFloatDTypes | kIntDTypes;

// An integer index input, not differentiated: its values are bounded by input `of`.
InputSpec idx_input(const char* name, Domain domain = Domain::Index, int of = 0) {
  InputSpec s;
  s.name = name;
  s.domain = domain;
  s.index_of = of;
  s.differentiable = false;
  return s;
}

InputSpec input(const char* name, bool optional = false) {
  InputSpec s;
  s.name = name;
  s.optional = optional;
  return s;
}

// A scalar arg in the case dtype's kind (integer and bool tensors reject fractional fills).
at::Scalar fill_value(const OpCall& c, const std::string& name) {
  double v = c.f(name);
  if (c.dtype() == at::kBool) return at::Scalar(v != 0);
  if (!at::isFloatingType(c.dtype())) return at::Scalar(static_cast<std::int64_t>(v));
  return at::Scalar(v);
}

std::vector<at::Tensor> all_inputs(const OpCall& c) {
  std::vector<at::Tensor> v;
  for (std::size_t i = 0; i < c.size(); ++i) v.push_back(c.t(i));
  return v;
}

OpBuilder shape(const char* name, const char* aten) {
  OpBuilder b(name, aten, "shape");
  b.x().dtypes(kAllTypes).grad();
  return b;
}

}  // namespace

void register_shape_index_ops(OpRegistry& r) {
  auto add = [&r](OpBuilder& b) { r.add(std::move(b).build()); };

  // ---- Gathering reads: duplicates are fine. ----
  {
    OpBuilder b("index_select", "aten::index_select", "index");
    b.x().in(idx_input("index")).dtypes(kAllTypes).grad();
    b.arg("dim", ArgType::Int, "0").note("1-d index");
    b.fn([](const OpCall& c) { return T{at::index_select(c.t(0), c.i("dim"), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("gather", "aten::gather", "index");
    b.x().in(idx_input("index")).dtypes(kAllTypes).grad();
    b.arg("dim", ArgType::Int, "0").note("index has self's rank, index.size(d) <= self.size(d) for d != dim");
    b.fn([](const OpCall& c) { return T{at::gather(c.t(0), c.i("dim"), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("take_along_dim", "aten::take_along_dim", "index");
    b.x().in(idx_input("indices")).dtypes(kAllTypes).grad();
    b.arg("dim", ArgType::Int, "0").note("indices broadcast against self except along dim");
    b.fn([](const OpCall& c) { return T{at::take_along_dim(c.t(0), c.t(1), c.i("dim"))}; });
    add(b);
  }

  // ---- Writes: unique indices, so the result is independent of write order. ----
  {
    OpBuilder b("scatter", "aten::scatter.src", "index");
    b.x()
        .in(idx_input("index", Domain::UniqueIndex))
        .in(input("src"))
        .dtypes(kAllTypes)
        .grad()
        .arg("dim", ArgType::Int, "0");
    b.note("index has self's rank, index.size(d) <= src.size(d), and <= self.size(d) for d != dim");
    b.fn([](const OpCall& c) { return T{at::scatter(c.t(0), c.i("dim"), c.t(1), c.t(2))}; });
    add(b);
  }
  {
    OpBuilder b("scatter_add", "aten::scatter_add", "index");
    b.x()
        .in(idx_input("index", Domain::UniqueIndex))
        .in(input("src"))
        .dtypes(kAllTypes)
        .grad()
        .arg("dim", ArgType::Int, "0");
    b.note("as scatter; unique indices keep float sums independent of the order of atomic adds");
    b.fn([](const OpCall& c) { return T{at::scatter_add(c.t(0), c.i("dim"), c.t(1), c.t(2))}; });
    add(b);
  }
  {
    OpBuilder b("index_add", "aten::index_add", "index");
    b.x().in(idx_input("index", Domain::UniqueIndex)).in(input("source")).dtypes(kAllTypes).grad();
    b.arg("dim", ArgType::Int, "0").arg("alpha", ArgType::Float, "1");
    b.note("1-d index; source has self's shape with index.numel() along dim");
    b.fn([](const OpCall& c) { return T{at::index_add(c.t(0), c.i("dim"), c.t(1), c.t(2), fill_value(c, "alpha"))}; });
    add(b);
  }
  {
    OpBuilder b("index_put", "aten::index_put", "index");
    b.x().in(idx_input("indices", Domain::UniqueIndex)).in(input("values")).dtypes(kAllTypes).grad();
    b.arg("accumulate", ArgType::Bool, "0");
    b.note("self[indices] = values along dim 0 (values: indices.shape + self.shape[1:], or broadcastable)");
    b.fn([](const OpCall& c) {
      c10::List<c10::optional<at::Tensor>> idx;
      idx.push_back(c.t(1));
      return T{at::index_put(c.t(0), idx, c.t(2), c.b("accumulate"))};
    });
    add(b);
  }
  {
    OpBuilder b("masked_fill", "aten::masked_fill.Scalar", "index");
    InputSpec mask = idx_input("mask", Domain::Mask);
    b.x().in(mask).dtypes(kAllTypes).grad().arg("value", ArgType::Float, "-1");
    b.note("mask broadcasts to self; value is cast to the case dtype");
    b.fn([](const OpCall& c) { return T{at::masked_fill(c.t(0), c.t(1), fill_value(c, "value"))}; });
    add(b);
  }
  {
    OpBuilder b("nonzero", "aten::nonzero", "index");
    b.x(-1, 1).dtypes(kAllTypes);
    b.note("int64 (n, rank) output: its row count depends on the values");
    b.fn([](const OpCall& c) { return T{at::nonzero(c.t(0))}; });
    add(b);
  }

  // ---- Joining and splitting. ----
  {
    OpBuilder b("cat", "aten::cat", "shape");
    b.x().x().in(input("third", true)).in(input("fourth", true)).dtypes(kAllTypes).grad().arg("dim", ArgType::Int, "0");
    b.fn([](const OpCall& c) { return T{at::cat(all_inputs(c), c.i("dim"))}; });
    add(b);
  }
  {
    OpBuilder b("stack", "aten::stack", "shape");
    b.x().x().in(input("third", true)).in(input("fourth", true)).dtypes(kAllTypes).grad().arg("dim", ArgType::Int, "0");
    b.fn([](const OpCall& c) { return T{at::stack(all_inputs(c), c.i("dim"))}; });
    add(b);
  }
  {
    auto b = shape("split", "aten::split.Tensor");
    b.rank(1);
    b.arg("split_size", ArgType::Int, "2").arg("dim", ArgType::Int, "0");
    b.note("every piece is an output");
    b.fn([](const OpCall& c) { return at::split(c.t(0), c.i("split_size"), c.i("dim")); });
    add(b);
  }
  {
    auto b = shape("split_with_sizes", "aten::split_with_sizes");
    b.rank(1);
    b.arg("split_sizes", ArgType::Ints, "1:2").arg("dim", ArgType::Int, "0");
    b.note("sizes must add up to self.size(dim); every piece is an output");
    b.fn([](const OpCall& c) { return at::split_with_sizes(c.t(0), c.ints("split_sizes"), c.i("dim")); });
    add(b);
  }
  {
    auto b = shape("chunk", "aten::chunk");
    b.rank(1);
    b.arg("chunks", ArgType::Int, "2").arg("dim", ArgType::Int, "0");
    b.note("every chunk is an output");
    b.fn([](const OpCall& c) { return at::chunk(c.t(0), c.i("chunks"), c.i("dim")); });
    add(b);
  }
  {
    auto b = shape("unbind", "aten::unbind.int");
    b.rank(1);
    b.arg("dim", ArgType::Int, "0");
    b.fn([](const OpCall& c) { return at::unbind(c.t(0), c.i("dim")); });
    add(b);
  }

  // ---- Views and layout changes (compared by value). ----
  {
    auto b = shape("permute", "aten::permute");
    b.arg("dims", ArgType::Ints, "1:0").note("dims: a permutation of self's dims");
    b.fn([](const OpCall& c) { return T{c.t(0).permute(c.ints("dims"))}; });
    add(b);
  }
  {
    auto b = shape("transpose", "aten::transpose.int");
    b.arg("dim0", ArgType::Int, "0").arg("dim1", ArgType::Int, "1").rank(2);
    b.fn([](const OpCall& c) { return T{at::transpose(c.t(0), c.i("dim0"), c.i("dim1"))}; });
    add(b);
  }
  {
    auto b = shape("movedim", "aten::movedim.int");
    b.arg("source", ArgType::Int, "0").arg("destination", ArgType::Int, "-1");
    b.fn([](const OpCall& c) { return T{at::movedim(c.t(0), c.i("source"), c.i("destination"))}; });
    add(b);
  }
  {
    auto b = shape("reshape", "aten::reshape");
    b.arg("shape", ArgType::Ints, "-1");
    b.fn([](const OpCall& c) { return T{at::reshape(c.t(0), c.ints("shape"))}; });
    add(b);
  }
  {
    auto b = shape("flatten", "aten::flatten.using_ints");
    b.arg("start_dim", ArgType::Int, "0").arg("end_dim", ArgType::Int, "-1");
    b.fn([](const OpCall& c) { return T{at::flatten(c.t(0), c.i("start_dim"), c.i("end_dim"))}; });
    add(b);
  }
  {
    auto b = shape("unsqueeze", "aten::unsqueeze");
    b.arg("dim", ArgType::Int, "0");
    b.fn([](const OpCall& c) { return T{at::unsqueeze(c.t(0), c.i("dim"))}; });
    add(b);
  }
  {
    auto b = shape("squeeze", "aten::squeeze.dim");
    b.arg("dim", ArgType::Int, "0");
    b.note("a dim of size 1 is removed; other sizes are kept");
    b.fn([](const OpCall& c) { return T{at::squeeze(c.t(0), c.i("dim"))}; });
    add(b);
  }
  {
    auto b = shape("narrow", "aten::narrow");
    b.rank(1);
    b.arg("dim", ArgType::Int, "0").arg("start", ArgType::Int, "1").arg("length", ArgType::Int, "2");
    b.fn([](const OpCall& c) { return T{at::narrow(c.t(0), c.i("dim"), c.i("start"), c.i("length"))}; });
    add(b);
  }
  {
    auto b = shape("unfold", "aten::unfold");
    b.arg("dim", ArgType::Int, "0").arg("size", ArgType::Int, "2").arg("step", ArgType::Int, "1");
    b.note("Tensor.unfold: overlapping windows (a view); bwd sums the overlaps");
    b.fn([](const OpCall& c) { return T{c.t(0).unfold(c.i("dim"), c.i("size"), c.i("step"))}; });
    add(b);
  }
  {
    auto b = shape("expand", "aten::expand");
    b.arg("size", ArgType::Ints, "3:-1");
    b.note("size: -1 keeps a dim; the 0-stride result is made contiguous before comparison");
    b.fn([](const OpCall& c) { return T{c.t(0).expand(c.ints("size")).contiguous()}; });
    add(b);
  }
  {
    auto b = shape("repeat", "aten::repeat");
    b.arg("repeats", ArgType::Ints, "2:2").note("len(repeats) >= rank");
    b.fn([](const OpCall& c) { return T{c.t(0).repeat(c.ints("repeats"))}; });
    add(b);
  }
  {
    auto b = shape("repeat_interleave", "aten::repeat_interleave.self_int");
    b.arg("repeats", ArgType::Int, "2").arg("dim", ArgType::Int, "0");
    b.fn([](const OpCall& c) { return T{at::repeat_interleave(c.t(0), c.i("repeats"), c.i("dim"))}; });
    add(b);
  }
  {
    auto b = shape("flip", "aten::flip");
    b.arg("dims", ArgType::Ints, "0");
    b.fn([](const OpCall& c) { return T{at::flip(c.t(0), c.ints("dims"))}; });
    add(b);
  }
  {
    auto b = shape("roll", "aten::roll");
    b.arg("shifts", ArgType::Ints, "1").arg("dims", ArgType::Ints, "0");
    b.fn([](const OpCall& c) { return T{at::roll(c.t(0), c.ints("shifts"), c.ints("dims"))}; });
    add(b);
  }
  {
    auto b = shape("diag", "aten::diag");
    b.rank(1);
    b.dtypes(kAllTypes & ~dtype_bit(DType::F16));
    b.arg("diagonal", ArgType::Int, "0").note("1-d: makes a matrix; 2-d: takes a diagonal");
    b.fn([](const OpCall& c) { return T{at::diag(c.t(0), c.i("diagonal"))}; });
    add(b);
  }
  {
    auto b = shape("diagonal", "aten::diagonal");
    b.arg("offset", ArgType::Int, "0").arg("dim1", ArgType::Int, "0").arg("dim2", ArgType::Int, "1").rank(2);
    b.fn([](const OpCall& c) { return T{at::diagonal(c.t(0), c.i("offset"), c.i("dim1"), c.i("dim2"))}; });
    add(b);
  }
  {
    auto b = shape("tril", "aten::tril");
    b.arg("diagonal", ArgType::Int, "0").rank(2);
    b.fn([](const OpCall& c) { return T{at::tril(c.t(0), c.i("diagonal"))}; });
    add(b);
  }
  {
    auto b = shape("triu", "aten::triu");
    b.arg("diagonal", ArgType::Int, "0").rank(2);
    b.fn([](const OpCall& c) { return T{at::triu(c.t(0), c.i("diagonal"))}; });
    add(b);
  }

  // ---- Padding (F.pad order: last dim first, each as (left, right)). ----
  {
    OpBuilder b("pad_constant", "aten::constant_pad_nd", "pad");
    b.x().dtypes(kAllTypes).grad();
    b.arg("pad", ArgType::Ints, "1:1").arg("value", ArgType::Float, "0").note("negative pads crop");
    b.fn([](const OpCall& c) { return T{at::constant_pad_nd(c.t(0), c.ints("pad"), fill_value(c, "value"))}; });
    add(b);
  }
  for (const char* mode : {"reflect", "replicate", "circular"}) {
    std::string m = mode;
    const char* aten = m == "reflect"     ? "aten::reflection_pad2d"
                       : m == "replicate" ? "aten::replication_pad2d"
                                          : "aten::_pad_circular";
    OpBuilder b("pad_" + m, aten, "pad");
    // CPU reflect/replicate pads are f32/f64 only in libtorch 1.13; circular is copies (any type).
    static const std::string kDefaultPad = "1:1";
    b.x()
        .dtypes(m == "circular" ? kAllTypes : dtype_bit(DType::F64) | dtype_bit(DType::F32))
        .grad()
        .arg("pad", ArgType::Ints, kDefaultPad);
    b.note("at::pad mode " + m +
           ": pads the last len(pad)/2 dims of a (N,) C, spatial input; aten op by that count (1d/2d/3d)");
    // libtorch 1.13 raises on any other pad length or input rank ("Only 2D, 3D, 4D, 5D padding with
    // non-constant padding are supported for now"), in the golden too: such keys are invalid.
    b.check_key([m](const CaseKey& k) -> std::optional<std::string> {
      const auto given = k.args.find("pad");
      const std::string pad = given == k.args.end() ? kDefaultPad : given->second;
      const std::size_t values = static_cast<std::size_t>(std::count(pad.begin(), pad.end(), ':')) + 1;
      const std::size_t rank = k.shapes.front().size(), dims = values / 2;
      const std::string arg =
          "argument pad=" + pad + (given == k.args.end() ? " (the default)" : "") + " of op pad_" + m;
      if (values % 2 != 0 || dims > 3) {
        return arg + " has " + std::to_string(values) + " values: it takes 2, 4 or 6 (1 to 3 padded dims)";
      }
      if (rank != dims + 1 && rank != dims + 2) {
        return arg + " pads the last " + std::to_string(dims) +
               " dim(s) of a (C, spatial) or (N, C, spatial) input, so the input needs rank " +
               std::to_string(dims + 1) + " or " + std::to_string(dims + 2) + ", not " + std::to_string(rank);
      }
      return std::nullopt;
    });
    b.fn([m](const OpCall& c) { return T{at::pad(c.t(0), c.ints("pad"), m)}; });
    add(b);
  }

  // ---- Sorting and selection: values plus the input gathered at the indices. ----
  {
    OpBuilder b("sort", "aten::sort.stable", "sort");
    b.x().dtypes(kAllTypes).grad().special();
    b.arg("dim", ArgType::Int, "-1").arg("descending", ArgType::Bool, "0").arg("stable", ArgType::Bool, "0");
    b.note("out0 = values, out1 = input gathered at the indices (ties)");
    b.fn([](const OpCall& c) {
      const at::Tensor& x = c.t(0);
      auto [v, i] = at::sort(x, c.b("stable"), c.i("dim"), c.b("descending"));
      return T{v, x.dim() == 0 ? x.clone() : x.gather(c.i("dim"), i)};
    });
    add(b);
  }
  {
    OpBuilder b("argsort", "aten::argsort", "sort");
    b.x().dtypes(kAllTypes).grad();
    b.arg("dim", ArgType::Int, "-1").arg("descending", ArgType::Bool, "0");
    b.note("returns the input gathered at the indices (ties)");
    b.fn([](const OpCall& c) {
      const at::Tensor& x = c.t(0);
      at::Tensor i = at::argsort(x, c.i("dim"), c.b("descending"));
      return T{x.dim() == 0 ? x.clone() : x.gather(c.i("dim"), i)};
    });
    add(b);
  }
  {
    OpBuilder b("topk", "aten::topk", "sort");
    b.x().dtypes(kNumeric & ~dtype_bit(DType::F16)).grad();
    b.arg("k", ArgType::Int, "2").arg("dim", ArgType::Int, "-1").arg("largest", ArgType::Bool, "1");
    b.note("out0 = values, out1 = input gathered at the indices (ties)");
    b.fn([](const OpCall& c) {
      const at::Tensor& x = c.t(0);
      auto [v, i] = at::topk(x, c.i("k"), c.i("dim"), c.b("largest"), true);
      return T{v, x.dim() == 0 ? x.clone() : x.gather(c.i("dim"), i)};
    });
    add(b);
  }
  {
    OpBuilder b("kthvalue", "aten::kthvalue", "sort");
    b.x().dtypes(kNumeric & ~dtype_bit(DType::F16)).grad();
    b.arg("k", ArgType::Int, "1").arg("dim", ArgType::Int, "-1").arg("keepdim", ArgType::Bool, "0");
    b.note("out0 = values, out1 = input gathered at the indices (ties)");
    b.fn([](const OpCall& c) {
      const at::Tensor& x = c.t(0);
      std::int64_t d = c.i("dim");
      bool keep = c.b("keepdim");
      auto [v, i] = at::kthvalue(x, c.i("k"), d, keep);
      if (x.dim() == 0) return T{v, x.clone()};
      at::Tensor g = x.gather(d, keep ? i : i.unsqueeze(d));
      return T{v, keep ? g : g.squeeze(d)};
    });
    add(b);
  }
}

}  // namespace gauntlet
