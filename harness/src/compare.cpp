#include "gauntlet/compare.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace gauntlet {

namespace {

// bf16 and f16 bit patterns, rounded to nearest even from float.
std::uint16_t to_bf16_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<std::uint16_t>(u >> 16);
}
float from_bf16_bits(std::uint16_t b) {
  std::uint32_t u = std::uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
std::uint16_t to_f16_bits(float f) {
  // IEEE binary16, round to nearest even (handles subnormals, overflow to inf, NaN).
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  std::uint32_t sign = (x >> 16) & 0x8000;
  std::uint32_t mant = x & 0x7fffff;
  std::int32_t exp = static_cast<std::int32_t>((x >> 23) & 0xff);
  if (exp == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  std::int32_t e = exp - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000;
    std::uint32_t shift = static_cast<std::uint32_t>(14 - e);
    std::uint32_t half = 1u << (shift - 1);
    std::uint32_t rounded = (mant + half - 1 + ((mant >> shift) & 1)) >> shift;
    return static_cast<std::uint16_t>(sign | rounded);
  }
  std::uint32_t h = sign | (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  std::uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // may carry into the exponent: fine
  return static_cast<std::uint16_t>(h);
}
float from_f16_bits(std::uint16_t h) {
  std::uint32_t sign = std::uint32_t(h & 0x8000) << 16;
  std::uint32_t exp = (h >> 10) & 0x1f;
  std::uint32_t mant = h & 0x3ff;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  std::uint32_t u = exp == 31 ? (sign | 0x7f800000 | (mant << 13))
                              : (sign | ((exp - 15 + 127) << 23) | (mant << 13));
  std::memcpy(&f, &u, 4);
  return f;
}

// Maps a sign-magnitude bit pattern onto a line where adjacent floats differ by one.
std::int64_t ordered(std::int64_t bits, int width) {
  const std::int64_t sign_bit = std::int64_t{1} << (width - 1);
  if (width == 64) {
    return bits < 0 ? std::numeric_limits<std::int64_t>::min() - bits : bits;
  }
  return (bits & sign_bit) ? -(bits & (sign_bit - 1)) : bits;
}

std::int64_t bits_of(double v, DType d, int& width) {
  switch (d) {
    case DType::F64: {
      width = 64;
      std::int64_t b;
      std::memcpy(&b, &v, 8);
      return b;
    }
    case DType::F32: {
      width = 32;
      float f = static_cast<float>(v);
      std::uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    case DType::BF16:
      width = 16;
      return to_bf16_bits(static_cast<float>(v));
    default:
      width = 16;
      return to_f16_bits(static_cast<float>(v));
  }
}

}  // namespace

Tolerance default_tolerance(DType d) {
  switch (d) {
    case DType::F64: return {1e-7, 1e-7, "default"};
    case DType::F32: return {1.3e-6, 1e-5, "default"};
    case DType::F16: return {1e-3, 1e-5, "default"};
    case DType::BF16: return {1.6e-2, 1e-5, "default"};
    default: return {0, 0, "default"};
  }
}

double round_to(double v, DType d) {
  switch (d) {
    case DType::F64: return v;
    case DType::F32: return static_cast<float>(v);
    case DType::BF16: return from_bf16_bits(to_bf16_bits(static_cast<float>(v)));
    case DType::F16: return from_f16_bits(to_f16_bits(static_cast<float>(v)));
    default: return v;
  }
}

double ulp_distance(double a, double b, DType d) {
  if (std::isnan(a) || std::isnan(b)) {
    return (std::isnan(a) && std::isnan(b)) ? 0.0 : std::numeric_limits<double>::infinity();
  }
  if (!is_floating(d)) return std::fabs(a - b);
  int width = 0;
  // bits_of sets width: call it before reading width (argument order is unspecified).
  const std::int64_t ba = bits_of(a, d, width);
  const std::int64_t bb = bits_of(b, d, width);
  const std::int64_t oa = ordered(ba, width);
  const std::int64_t ob = ordered(bb, width);
  // The gap of two int64s is below 2^64: exact in uint64 (the subtraction wraps to it), then
  // rounded to double as the long double it once went through was.
  const std::uint64_t gap = oa >= ob ? static_cast<std::uint64_t>(oa) - static_cast<std::uint64_t>(ob)
                                     : static_cast<std::uint64_t>(ob) - static_cast<std::uint64_t>(oa);
  return static_cast<double>(gap);
}

void Comparison::add(const OutputView& out, const Tolerance& tol) {
  const bool floating = is_floating(out.dtype);
  std::int64_t worst_at = -1;  // this output's element that became the worst, named once at the end
  for (std::int64_t i = 0; i < out.n; ++i) {
    const double a = out.actual[i], g = out.golden[i], gc = out.golden_cast[i];
    const bool a_nan = std::isnan(a), g_nan = std::isnan(gc);
    const bool a_inf = std::isinf(a), g_inf = std::isinf(gc);
    bool mismatch = false;
    double score = 0;  // error over allowed error: > 1 is a mismatch
    if (a_nan || g_nan || a_inf || g_inf) {
      const bool agree = (a_nan && g_nan) || (a_inf && g_inf && (a > 0) == (gc > 0));
      if (!agree) {
        mismatch = true;
        m_.nan_inf_ok = false;
        score = std::numeric_limits<double>::infinity();
      }
    } else {
      const double abs_err = std::fabs(a - g);
      m_.max_abs_err = std::max(m_.max_abs_err, abs_err);
      if (g != 0) m_.max_rel_err = std::max(m_.max_rel_err, abs_err / std::fabs(g));
      const double err_cast = std::fabs(a - gc);
      const double allowed = tol.atol + tol.rtol * std::fabs(gc);
      mismatch = err_cast > allowed;
      score = allowed > 0 ? err_cast / allowed
                          : (err_cast > 0 ? std::numeric_limits<double>::max() : 0.0);
    }
    if (floating) m_.max_ulp = std::max(m_.max_ulp, ulp_distance(a, gc, out.dtype));
    if (mismatch) ++m_.mismatches;
    if (score > 0 && score > worst_score_) {
      worst_score_ = score;
      worst_at = i;
    }
  }
  if (worst_at >= 0) m_.worst = out.name + "[" + std::to_string(worst_at) + "]";
  m_.numel += out.n;
}

}  // namespace gauntlet
