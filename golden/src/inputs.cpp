#include "gauntlet/golden/inputs.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "gauntlet/suites/op_impl.h"

namespace gauntlet {

namespace {

constexpr std::uint64_t kInputSalt = 0x5151'a1a1'0000'0001ULL;

std::int64_t normalize_dim(std::int64_t dim, std::size_t rank) {
  std::int64_t r = static_cast<std::int64_t>(std::max<std::size_t>(rank, 1));
  return dim < 0 ? dim + r : dim;
}

// The integer bound of an Index/Class input: the size of another input along a dim.
std::int64_t index_bound(const CaseKey& key, const OpSpec& spec, const InputSpec& in) {
  const Shape& of = key.shapes.at(static_cast<std::size_t>(in.index_of));
  if (of.empty()) return 1;
  std::int64_t dim = 0;
  if (in.domain == Domain::Class) {
    dim = of.size() >= 2 ? 1 : 0;
  } else {
    auto it = key.args.find("dim");
    if (it != key.args.end()) {
      dim = std::stoll(it->second);
    } else if (const ArgSpec* a = spec.arg("dim")) {
      dim = std::stoll(a->default_value);
    }
    dim = normalize_dim(dim, of.size());
  }
  if (dim < 0 || dim >= static_cast<std::int64_t>(of.size())) return 1;
  return std::max<std::int64_t>(of[static_cast<std::size_t>(dim)], 1);
}

// Values that must propagate: NaN, +-Inf, -0, a denormal and values near overflow.
double special_value(std::uint64_t r, DType d) {
  double max = d == DType::F16 ? 65504.0 : d == DType::BF16 ? 3.38e38 : d == DType::F32 ? 3.40e38 : 1.79e308;
  double denorm = d == DType::F16    ? 5.96e-8 * 3
                  : d == DType::BF16 ? 9.2e-41 * 3
                  : d == DType::F32  ? 1.4e-45 * 3
                                     : 4.9e-324 * 3;
  switch (r % 7) {
    case 0:
      return std::numeric_limits<double>::quiet_NaN();
    case 1:
      return std::numeric_limits<double>::infinity();
    case 2:
      return -std::numeric_limits<double>::infinity();
    case 3:
      return -0.0;
    case 4:
      return denorm;
    case 5:
      return 0.9 * max;
    default:
      return -0.9 * max;
  }
}

at::ScalarType input_type(const InputSpec& in, DType case_dtype) {
  switch (in.domain) {
    case Domain::Index:
    case Domain::UniqueIndex:
    case Domain::Class:
      return at::kLong;
    case Domain::Mask:
      return at::kBool;
    default:
      break;
  }
  switch (in.type) {
    case InputType::Int64:
      return at::kLong;
    case InputType::Bool:
      return at::kBool;
    case InputType::Float32IfInt:
      return is_floating(case_dtype) ? to_scalar_type(case_dtype) : at::kFloat;
    case InputType::CaseDType:
      break;
  }
  return to_scalar_type(case_dtype);
}

// Distinct indices along `dim`: each line along dim is a prefix of a permutation of [0, bound).
at::Tensor unique_index(const Shape& shape, std::int64_t dim, std::int64_t bound, SplitMix64& rng) {
  at::Tensor t = at::empty(shape, at::kLong);
  if (t.numel() == 0) return t;
  at::Tensor moved = t.movedim(dim, -1).contiguous();
  std::int64_t len = moved.size(-1);
  std::int64_t lines = moved.numel() / std::max<std::int64_t>(len, 1);
  auto* p = moved.data_ptr<std::int64_t>();
  std::vector<std::int64_t> perm(static_cast<std::size_t>(bound));
  for (std::int64_t l = 0; l < lines; ++l) {
    for (std::int64_t k = 0; k < bound; ++k) perm[static_cast<std::size_t>(k)] = k;
    for (std::int64_t k = bound - 1; k > 0; --k)
      std::swap(perm[static_cast<std::size_t>(k)], perm[static_cast<std::size_t>(rng.below(k + 1))]);
    for (std::int64_t k = 0; k < len; ++k) p[l * len + k] = perm[static_cast<std::size_t>(k % bound)];
  }
  return moved.movedim(-1, dim).contiguous();
}

// See InputSpec::kinks. The nudge (1/16) is larger than a bf16 ulp at the kinks we have.
void move_off_kinks(at::Tensor& t, const CaseKey& key, const OpSpec& spec, const InputSpec& in) {
  std::vector<double> kinks = in.kinks;
  for (const char* name : {"min", "max", "min_val", "max_val"}) {
    auto it = key.args.find(name);
    const ArgSpec* a = spec.arg(name);
    if (!a || (in.kinks.empty() && &in != &spec.inputs.front())) continue;
    kinks.push_back(std::stod(it != key.args.end() ? it->second : a->default_value));
  }
  for (double k : kinks) {
    // -0 is one of the special values, not a kink to move off: only +0 moves.
    at::Tensor hit = k == 0.0 ? (t == 0) & at::logical_not(at::signbit(t)) : t == k;
    if (hit.any().item<bool>()) t.masked_fill_(hit, k + 0.0625);
  }
}

}  // namespace

std::vector<at::Tensor> make_inputs(const CaseKey& key, const OpSpec& spec) {
  std::vector<at::Tensor> out;
  const bool special = key.args.count("values") && key.args.at("values") == "special";
  const std::uint64_t id = key.id();
  for (std::size_t i = 0; i < key.shapes.size(); ++i) {
    const InputSpec& in = spec.inputs.at(i);
    const Shape& shape = key.shapes[i];
    SplitMix64 rng(id ^ (kInputSalt * (i + 1)));
    at::ScalarType type = input_type(in, key.dtype);
    const std::int64_t n = numel(shape);

    if (in.domain == Domain::UniqueIndex) {
      std::int64_t bound = index_bound(key, spec, in);
      std::int64_t dim = 0;
      if (auto it = key.args.find("dim"); it != key.args.end())
        dim = std::stoll(it->second);
      else if (const ArgSpec* a = spec.arg("dim"))
        dim = std::stoll(a->default_value);
      // The dim names an axis of the indexed tensor; a 1-d index (index_add, index_put)
      // is the index along that axis itself.
      dim = shape.size() <= 1 ? 0 : normalize_dim(dim, shape.size());
      out.push_back(shape.empty() ? at::zeros({}, at::kLong) : unique_index(shape, dim, bound, rng));
      continue;
    }

    // Note [Inputs drawn in their dtype]: a floating input of uniform values (no special values
    // mixed in) is written straight into a tensor of its type, each value computed in double as
    // below and converted as torch's cast converts it (static_cast: to float, then to bf16 or f16
    // rounding to nearest even): the same values without an array of doubles and a cast kernel.
    if (!special && (type == at::kFloat || type == at::kDouble || type == at::kBFloat16 || type == at::kHalf) &&
        in.domain != Domain::Index && in.domain != Domain::Class && in.domain != Domain::Mask) {
      const double lo = in.domain == Domain::Prob ? 0.02 : in.lo,
                   span = in.domain == Domain::Prob ? 0.96 : in.hi - in.lo;
      // Never all zeros (below): the first element becomes hi (or lo) when every value drew 0.
      const double first_if_all_zero = in.hi != 0.0 ? in.hi : in.lo;
      const bool check_zeros = in.domain == Domain::Real || in.domain == Domain::Positive;
      at::Tensor t = at::empty({n}, type);
      AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, type, "make_inputs", [&] {
        scalar_t* const p = t.data_ptr<scalar_t>();
        bool any_nonzero = false;
        for (std::int64_t k = 0; k < n; ++k) {
          const double v = lo + span * rng.uniform();
          any_nonzero |= v != 0.0;
          p[k] = static_cast<scalar_t>(v);
        }
        if (check_zeros && n > 0 && !any_nonzero) p[0] = static_cast<scalar_t>(first_if_all_zero);
      });
      t = t.reshape(shape);
      move_off_kinks(t, key, spec, in);
      out.push_back(t.contiguous());
      continue;
    }
    // Drawn as doubles into the tensor that is cast to the input's type (one draw an element, in
    // element order: the values are part of every stored case's identity), one loop a domain.
    at::Tensor drawn = at::empty({n}, at::kDouble);
    double* const values = drawn.data_ptr<double>();
    double* const end = values + n;
    const std::int64_t bound =
        (in.domain == Domain::Index || in.domain == Domain::Class) ? index_bound(key, spec, in) : 1;
    const bool integral = !at::isFloatingType(type);
    switch (in.domain) {
      case Domain::Index:
      case Domain::Class:
        for (double* v = values; v != end; ++v) *v = double(rng.below(bound));
        break;
      case Domain::Mask:
        for (double* v = values; v != end; ++v) *v = double(rng.next() & 1);
        break;
      case Domain::Prob:
        for (double* v = values; v != end; ++v) *v = 0.02 + 0.96 * rng.uniform();
        break;
      default:
        if (type == at::kBool) {
          for (double* v = values; v != end; ++v) *v = double(rng.next() & 1);
        } else if (integral) {
          // Small integers keep integer ops (mul, sum, cumprod) clear of overflow.
          double lo = type == at::kByte ? 0 : std::max(in.lo, -8.0);
          const double hi = std::min(std::max(in.hi, lo + 4), 8.0);
          if (in.domain == Domain::Positive) lo = std::max(lo, 1.0);
          for (double* v = values; v != end; ++v) *v = std::floor(lo + (hi - lo + 1) * rng.uniform());
        } else {
          const double lo = in.lo, span = in.hi - in.lo;
          for (double* v = values; v != end; ++v) *v = lo + span * rng.uniform();
        }
    }
    // Never all zeros: a zero input hides most wrong kernels (small integer and bool tensors
    // can draw all zeros by chance).
    if ((in.domain == Domain::Real || in.domain == Domain::Positive) && n > 0 &&
        std::all_of(values, end, [](double v) { return v == 0.0; })) {
      values[0] = integral ? 1.0 : (in.hi != 0.0 ? in.hi : in.lo);
    }
    if (special && at::isFloatingType(type) && in.domain == Domain::Real) {
      // About one element in five, cycling through every kind so each case holds all of them.
      std::uint64_t kind = 0;
      for (double* v = values; v != end; ++v) {
        if (rng.next() % 5 == 0) *v = special_value(kind++, key.dtype);
      }
    }
    at::Tensor t = drawn.to(type).reshape(shape);
    if (at::isFloatingType(type)) move_off_kinks(t, key, spec, in);
    out.push_back(t.contiguous());
  }
  return out;
}

at::Tensor apply_layout(const at::Tensor& t, Layout layout) {
  switch (layout) {
    case Layout::Contig:
      return t;
    case Layout::Transposed:
      if (t.dim() < 2) return t;
      return t.transpose(-1, -2).contiguous().transpose(-1, -2);
    case Layout::Strided: {
      if (t.dim() < 1) return t;
      auto sizes = t.sizes().vec();
      sizes.back() *= 2;
      at::Tensor wide = at::zeros(sizes, t.options());
      at::Tensor view = wide.slice(-1, 0, sizes.back(), 2);
      view.copy_(t);
      return view;
    }
    case Layout::ChannelsLast:
      if (t.dim() != 4) return t;
      return t.contiguous(at::MemoryFormat::ChannelsLast);
  }
  return t;
}

at::Tensor make_grad_output(const CaseKey& key, std::size_t output_index, const at::Tensor& like) {
  SplitMix64 rng(key.id() ^ (0x9a9a'0000'0000'0001ULL * (output_index + 101)));
  std::vector<double> values(static_cast<std::size_t>(like.numel()));
  for (auto& v : values) v = -1.0 + 2.0 * rng.uniform();
  return at::from_blob(values.data(), {like.numel()}, at::kDouble).clone().to(like.scalar_type()).reshape(like.sizes());
}

std::uint64_t fingerprint(const std::vector<at::Tensor>& tensors) {
  XXH64_state_t* st = XXH64_createState();
  XXH64_reset(st, 0);
  for (const auto& t : tensors) {
    at::Tensor c = t.contiguous().cpu();
    XXH64_update(st, c.data_ptr(), c.numel() * c.element_size());
    auto sizes = c.sizes();
    XXH64_update(st, sizes.data(), sizes.size() * sizeof(std::int64_t));
  }
  std::uint64_t h = XXH64_digest(st);
  XXH64_freeState(st);
  return h;
}

}  // namespace gauntlet
