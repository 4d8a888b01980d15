// Deterministic model arguments (Note [Model inputs]).
#include <fmt/format.h>

#include <algorithm>

#include "gauntlet/base/splitmix.h"
#include "gauntlet/models/models.h"

namespace gauntlet {

namespace {

// FNV-1a: an argument's stream depends on its name, not on its position in the list.
std::uint64_t name_hash(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

template <typename T>
void fill_uniform(T* p, std::int64_t n, SplitMix64& rng, double lo, double hi) {
  const double span = hi - lo;
  for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(lo + span * rng.uniform());
}

// Uniform values drawn in double, then rounded once to `dtype` (directly for f32, which rounds
// the same way as a double tensor's .to(kFloat); through a double tensor otherwise).
at::Tensor uniform_tensor(at::IntArrayRef shape, at::ScalarType dtype, SplitMix64& rng, double lo, double hi) {
  if (dtype == at::kFloat) {
    at::Tensor t = at::empty(shape, at::kFloat);
    fill_uniform(t.data_ptr<float>(), t.numel(), rng, lo, hi);
    return t;
  }
  at::Tensor t = at::empty(shape, at::kDouble);
  fill_uniform(t.data_ptr<double>(), t.numel(), rng, lo, hi);
  return dtype == at::kDouble ? t : t.to(dtype);
}

at::Tensor int_tensor(const ModelArg& arg, const ConfigArg& ca, SplitMix64& rng) {
  at::Tensor t = at::empty(ca.shape, at::kLong);
  std::int64_t* p = t.data_ptr<std::int64_t>();
  const std::int64_t n = t.numel();
  switch (arg.kind) {
    case ArgKind::Index:
      for (std::int64_t i = 0; i < n; ++i) p[i] = rng.below(ca.bound);
      break;
    case ArgKind::Offsets:
      // Bag starts: the first bag starts at 0; the others at sorted points in [0, bound], so
      // bags may be empty (their sum is zero) and the last one runs to the end of the indices.
      for (std::int64_t i = 0; i < n; ++i) p[i] = i == 0 ? 0 : rng.below(ca.bound + 1);
      std::sort(p, p + n);
      break;
    case ArgKind::Positions: {
      const std::int64_t len = ca.shape.empty() ? 1 : ca.shape.back();
      for (std::int64_t i = 0; i < n; ++i) p[i] = i % len;
      break;
    }
    default:
      throw ModelError(fmt::format("{}: argument '{}' is not an integer argument", arg.where, arg.name));
  }
  return t;
}

}  // namespace

std::vector<at::Tensor> make_model_inputs(const ModelSpec& spec, const std::string& config, at::ScalarType dtype,
                                          std::uint64_t seed, std::int64_t batch_scale) {
  if (!at::isFloatingType(dtype)) {
    throw ModelError(fmt::format("model {}: inputs need a floating dtype, not {}", spec.name, c10::toString(dtype)));
  }
  const ModelConfig& c = spec.config(config);
  std::vector<at::Tensor> out;
  out.reserve(spec.args.size());
  for (std::size_t i = 0; i < spec.args.size(); ++i) {
    const ModelArg& a = spec.args[i];
    ConfigArg ca = c.args[i];
    if (batch_scale != 1) {
      // The batch size b scaled; every other size, fan-in and bound as in the config.
      std::map<std::string, std::int64_t> sizes = c.sizes;
      auto b = sizes.find("b");
      if (b == sizes.end()) throw ModelError(fmt::format("model {}: no batch size 'b' to scale", spec.name));
      b->second *= batch_scale;
      ca.shape.clear();
      for (const std::string& e : a.shape) ca.shape.push_back(eval_size_expr(e, sizes));
    }
    SplitMix64 rng(seed ^ name_hash(a.name));
    if (a.floating()) {
      out.push_back(uniform_tensor(ca.shape, dtype, rng, ca.lo, ca.hi));
    } else {
      out.push_back(int_tensor(a, ca, rng));
    }
  }
  return out;
}

at::Tensor splitmix_uniform(at::IntArrayRef shape, at::ScalarType dtype, std::uint64_t seed, double lo, double hi) {
  SplitMix64 rng(seed);
  return uniform_tensor(shape, dtype, rng, lo, hi);
}

}  // namespace gauntlet
