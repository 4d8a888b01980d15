#include "gauntlet/core/cases/compare.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

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
  std::uint32_t u = exp == 31 ? (sign | 0x7f800000 | (mant << 13)) : (sign | ((exp - 15 + 127) << 23) | (mant << 13));
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

// Note [Typed comparison]: the runner hands the device's output over in its own dtype and the
// golden in fp64, rather than three arrays of doubles (the output widened, the golden, the golden
// rounded to the dtype) made by three casts and three allocations a case. Each element is widened
// here, the golden rounded here by the same functions round_to uses, and the arithmetic is the
// OutputView loop's, in the same order: the metrics are the same to the bit and the worst element
// the same (test: Comparison.TypedViewGivesTheDoubleViewsMetricsToTheBit). An output's elements are
// values of its dtype, so their bit patterns are their ULP line positions as they stand (bits_of
// of a representable value returns its own pattern); the golden's are taken once rounded. Non-finite
// pairs, rare, go through ulp_distance as before.
// ordered() for a 16- or 32-bit pattern without a branch on its sign (signs of outputs are random
// to the branch predictor): the magnitude, negated when the sign bit is set.
template <int Width>
std::int64_t ordered_small(std::uint32_t bits) {
  const std::int64_t magnitude = bits & ((std::uint32_t{1} << (Width - 1)) - 1);
  const std::int64_t negate = -static_cast<std::int64_t>((bits >> (Width - 1)) & 1);  // 0 or -1
  return (magnitude ^ negate) - negate;
}
// |oa - ob| of two positions of a 16- or 32-bit line (no overflow), without a branch.
inline std::uint64_t small_gap(std::int64_t oa, std::int64_t ob) {
  const std::int64_t d = oa - ob, s = d >> 63;
  return static_cast<std::uint64_t>((d ^ s) - s);
}

struct F32Elem {
  using Stored = float;
  static double value(float x) { return x; }
  static double cast(double g) { return static_cast<float>(g); }
  // Position on the ULP line of a finite value already in the dtype / of the golden rounded to it.
  static std::int64_t line(float x) {
    std::uint32_t b;
    std::memcpy(&b, &x, 4);
    return ordered_small<32>(b);
  }
  static std::int64_t golden_line(double g) { return line(static_cast<float>(g)); }
  static std::uint64_t gap(std::int64_t oa, std::int64_t ob) { return small_gap(oa, ob); }
};
struct F64Elem {
  using Stored = double;
  static double value(double x) { return x; }
  static double cast(double g) { return g; }
  static std::int64_t line(double x) {
    std::int64_t b;
    std::memcpy(&b, &x, 8);
    return ordered(b, 64);
  }
  static std::int64_t golden_line(double g) { return line(g); }
  // Two positions of the 64-bit line may be 2^64 - 1 apart: the gap in uint64.
  static std::uint64_t gap(std::int64_t oa, std::int64_t ob) {
    return oa >= ob ? static_cast<std::uint64_t>(oa) - static_cast<std::uint64_t>(ob)
                    : static_cast<std::uint64_t>(ob) - static_cast<std::uint64_t>(oa);
  }
};
struct BF16Elem {
  using Stored = std::uint16_t;
  static double value(std::uint16_t b) { return from_bf16_bits(b); }
  static double cast(double g) { return from_bf16_bits(to_bf16_bits(static_cast<float>(g))); }
  static std::int64_t line(std::uint16_t b) { return ordered_small<16>(b); }
  static std::int64_t golden_line(double g) { return ordered_small<16>(to_bf16_bits(static_cast<float>(g))); }
  static std::uint64_t gap(std::int64_t oa, std::int64_t ob) { return small_gap(oa, ob); }
};
struct F16Elem {
  using Stored = std::uint16_t;
  static double value(std::uint16_t b) { return from_f16_bits(b); }
  static double cast(double g) { return from_f16_bits(to_f16_bits(static_cast<float>(g))); }
  static std::int64_t line(std::uint16_t b) { return ordered_small<16>(b); }
  static std::int64_t golden_line(double g) { return ordered_small<16>(to_f16_bits(static_cast<float>(g))); }
  static std::uint64_t gap(std::int64_t oa, std::int64_t ob) { return small_gap(oa, ob); }
};

}  // namespace

Tolerance default_tolerance(DType d) {
  switch (d) {
    case DType::F64:
      return {1e-7, 1e-7, "default"};
    case DType::F32:
      return {1.3e-6, 1e-5, "default"};
    case DType::F16:
      return {1e-3, 1e-5, "default"};
    case DType::BF16:
      return {1.6e-2, 1e-5, "default"};
    default:
      return {0, 0, "default"};
  }
}

double round_to(double v, DType d) {
  switch (d) {
    case DType::F64:
      return v;
    case DType::F32:
      return static_cast<float>(v);
    case DType::BF16:
      return from_bf16_bits(to_bf16_bits(static_cast<float>(v)));
    case DType::F16:
      return from_f16_bits(to_f16_bits(static_cast<float>(v)));
    default:
      return v;
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
      score = allowed > 0 ? err_cast / allowed : (err_cast > 0 ? std::numeric_limits<double>::max() : 0.0);
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

namespace {

// Whether fl(num / den) cannot exceed `bound` (num >= 0, den > 0, both finite), decided without
// the division: it cannot when num < bound * den exactly, and num < fl(fl(bound * den) * (1 -
// 2^-50)) implies that (two roundings gain at most (1 + 2^-53)^2, which the factor more than
// takes back) wherever the product is normal or overflows; a subnormal or non-positive product
// decides nothing. A maximum that a quotient at most equal to it leaves unchanged is then left
// as it is without dividing: the same maximum to the bit, as most elements of a run never raise it.
bool quotient_at_most(double num, double den, double bound) {
  const double p = bound * den;
  return p >= std::numeric_limits<double>::min() && num < p * (1 - 0x1p-50);
}

#if defined(__x86_64__) && defined(__GNUC__)
// Note [Vectorised comparison]: the elements of a floating output go in blocks of 64 through an
// AVX2 pass (four doubles a step) that computes what every element contributes the same way for
// all of them: the largest absolute error, the mismatch count and the largest ULP gap, all exact
// (maxima of non-negative finite values and integer counts do not depend on the order). What
// depends on order, the largest relative error and the worst element (first of the highest
// score), is left to the scalar statements, run only for the elements the pass could not rule
// out against the block's starting maxima (quotient_at_most; a zero error never raises either).
// A block with a NaN or an infinity anywhere (actual, golden or the golden rounded) is compared
// element by element instead, as is the tail past the last whole block and every block on a CPU
// without AVX2. Held to the scalar loop by Comparison.TypedViewGivesTheDoubleViewsMetricsToTheBit.
#define GAUNTLET_VECTOR_COMPARISON 1
#define GAUNTLET_AVX2 __attribute__((target("avx2"), always_inline)) inline

struct BlockSums {
  double max_abs = 0;
  std::uint64_t max_gap = 0;
  std::int64_t mismatches = 0;
  std::uint64_t candidates = 0;  // bit j: element j may raise the relative error or the worst score
};

constexpr int kBlock = 64;

GAUNTLET_AVX2 __m256d not_finite(__m256d v) {
  return _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), v), _mm256_set1_pd(std::numeric_limits<double>::max()),
                       _CMP_NLE_UQ);
}
// quotient_at_most(num, den, bound), four at a time.
GAUNTLET_AVX2 __m256d quotients_at_most(__m256d num, __m256d den, __m256d bound) {
  const __m256d p = _mm256_mul_pd(bound, den);
  return _mm256_and_pd(_mm256_cmp_pd(p, _mm256_set1_pd(std::numeric_limits<double>::min()), _CMP_GE_OQ),
                       _mm256_cmp_pd(num, _mm256_mul_pd(p, _mm256_set1_pd(1 - 0x1p-50)), _CMP_LT_OQ));
}
// ordered_small<32> and <16> of four patterns in int32 lanes.
GAUNTLET_AVX2 __m128i f32_lines(__m128i bits) {
  const __m128i magnitude = _mm_and_si128(bits, _mm_set1_epi32(0x7fffffff));
  const __m128i negate = _mm_srai_epi32(bits, 31);
  return _mm_sub_epi32(_mm_xor_si128(magnitude, negate), negate);
}
GAUNTLET_AVX2 __m128i bf16_lines(__m128i bits) {
  const __m128i magnitude = _mm_and_si128(bits, _mm_set1_epi32(0x7fff));
  const __m128i negate = _mm_srai_epi32(_mm_slli_epi32(bits, 16), 31);
  return _mm_sub_epi32(_mm_xor_si128(magnitude, negate), negate);
}

// One block of 64 F32 (Bf16 = false) or BF16 elements; false when one of them is not finite.
template <bool Bf16>
__attribute__((target("avx2"))) bool finite_block(const void* actual, const double* golden, double atol, double rtol,
                                                  double max_rel, double worst, BlockSums& out) {
  const __m256d sign = _mm256_set1_pd(-0.0), zero = _mm256_setzero_pd();
  const __m256d vatol = _mm256_set1_pd(atol), vrtol = _mm256_set1_pd(rtol);
  const __m256d vrel = _mm256_set1_pd(max_rel), vworst = _mm256_set1_pd(worst);
  // A zero allowance scores DBL_MAX: it may move the worst only while the worst is below that.
  const __m256d zero_allowance_counts =
      worst < std::numeric_limits<double>::max() ? _mm256_castsi256_pd(_mm256_set1_epi64x(-1)) : zero;
  __m256d max_abs = zero, bad = zero;
  __m256i max_gap = _mm256_setzero_si256();
  std::int64_t mismatches = 0;
  std::uint64_t candidates = 0;
  for (int k = 0; k < kBlock; k += 4) {
    const __m256d g = _mm256_loadu_pd(golden + k);
    const __m128 gf = _mm256_cvtpd_ps(g);  // static_cast<float>(g): round to nearest even
    __m256d a, gc;
    __m128i a_line, g_line;  // positions on the dtype's ULP line (ordered_small), as int32
    if constexpr (!Bf16) {
      const __m128 af = _mm_loadu_ps(static_cast<const float*>(actual) + k);
      a = _mm256_cvtps_pd(af);
      gc = _mm256_cvtps_pd(gf);
      a_line = f32_lines(_mm_castps_si128(af));
      g_line = f32_lines(_mm_castps_si128(gf));
    } else {
      const __m128i ab = _mm_cvtepu16_epi32(
          _mm_loadl_epi64(reinterpret_cast<const __m128i*>(static_cast<const std::uint16_t*>(actual) + k)));
      a = _mm256_cvtps_pd(_mm_castsi128_ps(_mm_slli_epi32(ab, 16)));
      // to_bf16_bits of a float that is not NaN (a NaN makes the block scalar below).
      const __m128i u = _mm_castps_si128(gf);
      const __m128i rounded = _mm_add_epi32(
          u, _mm_add_epi32(_mm_set1_epi32(0x7fff), _mm_and_si128(_mm_srli_epi32(u, 16), _mm_set1_epi32(1))));
      const __m128i gb = _mm_srli_epi32(rounded, 16);
      gc = _mm256_cvtps_pd(_mm_castsi128_ps(_mm_slli_epi32(gb, 16)));
      a_line = bf16_lines(ab);
      g_line = bf16_lines(gb);
    }
    bad = _mm256_or_pd(bad, _mm256_or_pd(not_finite(a), _mm256_or_pd(not_finite(_mm256_cvtps_pd(gf)), not_finite(gc))));
    const __m256d abs_err = _mm256_andnot_pd(sign, _mm256_sub_pd(a, g));
    max_abs = _mm256_max_pd(max_abs, abs_err);
    const __m256d err = _mm256_andnot_pd(sign, _mm256_sub_pd(a, gc));
    const __m256d allowed = _mm256_add_pd(vatol, _mm256_mul_pd(vrtol, _mm256_andnot_pd(sign, gc)));
    mismatches +=
        __builtin_popcount(static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(err, allowed, _CMP_GT_OQ))));
    const __m256d rel_may =
        _mm256_andnot_pd(quotients_at_most(abs_err, _mm256_andnot_pd(sign, g), vrel),
                         _mm256_and_pd(_mm256_cmp_pd(g, zero, _CMP_NEQ_OQ), _mm256_cmp_pd(abs_err, zero, _CMP_GT_OQ)));
    const __m256d positive = _mm256_cmp_pd(allowed, zero, _CMP_GT_OQ), erred = _mm256_cmp_pd(err, zero, _CMP_GT_OQ);
    const __m256d score_may =
        _mm256_and_pd(erred, _mm256_or_pd(_mm256_andnot_pd(quotients_at_most(err, allowed, vworst), positive),
                                          _mm256_andnot_pd(positive, zero_allowance_counts)));
    candidates |= static_cast<std::uint64_t>(_mm256_movemask_pd(_mm256_or_pd(rel_may, score_may))) << k;
    const __m256i d = _mm256_sub_epi64(_mm256_cvtepi32_epi64(a_line), _mm256_cvtepi32_epi64(g_line));
    const __m256i negative = _mm256_cmpgt_epi64(_mm256_setzero_si256(), d);
    const __m256i gap = _mm256_sub_epi64(_mm256_xor_si256(d, negative), negative);
    max_gap = _mm256_blendv_epi8(max_gap, gap, _mm256_cmpgt_epi64(gap, max_gap));
  }
  if (_mm256_movemask_pd(bad) != 0) return false;
  alignas(32) double abs4[4];
  alignas(32) std::int64_t gap4[4];
  _mm256_store_pd(abs4, max_abs);
  _mm256_store_si256(reinterpret_cast<__m256i*>(gap4), max_gap);
  out.max_abs = std::max(std::max(abs4[0], abs4[1]), std::max(abs4[2], abs4[3]));
  out.max_gap = static_cast<std::uint64_t>(std::max(std::max(gap4[0], gap4[1]), std::max(gap4[2], gap4[3])));
  out.mismatches = mismatches;
  out.candidates = candidates;
  return true;
}

template <class Elem>
constexpr bool kVectorised = false;
template <>
constexpr bool kVectorised<F32Elem> = true;
template <>
constexpr bool kVectorised<BF16Elem> = true;

bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

}  // namespace

template <class Elem>
void Comparison::add_typed(const TypedOutputView& out, const Tolerance& tol) {
  const auto* actual = static_cast<const typename Elem::Stored*>(out.actual);
  const double* golden = out.golden;
  const double atol = tol.atol, rtol = tol.rtol;
  double max_abs = m_.max_abs_err, max_rel = m_.max_rel_err, max_ulp = m_.max_ulp, worst = worst_score_;
  std::uint64_t max_gap = 0;  // of finite pairs: double(max gap) is the max of double(gap), a monotone map
  std::int64_t mismatches = 0, worst_at = -1;
  // What a finite element does to the largest relative error and the worst element: the parts
  // that depend on the elements before it.
  const auto rel_and_score = [&](std::int64_t i, double g, double gc, double abs_err, double err_cast, double allowed) {
    if (g != 0 && !quotient_at_most(abs_err, std::fabs(g), max_rel))
      max_rel = std::max(max_rel, abs_err / std::fabs(g));
    // score: error over allowed error (> 1 is a mismatch); only a positive score above the worst
    // so far moves the worst element.
    if (allowed > 0) {
      if (!quotient_at_most(err_cast, allowed, worst)) {
        const double score = err_cast / allowed;
        if (score > 0 && score > worst) {
          worst = score;
          worst_at = i;
        }
      }
    } else if (err_cast > 0 && std::numeric_limits<double>::max() > worst) {
      worst = std::numeric_limits<double>::max();
      worst_at = i;
    }
    (void)gc;
  };
  const auto element = [&](std::int64_t i) {
    const double a = Elem::value(actual[i]), g = golden[i], gc = Elem::cast(g);
    if (!std::isfinite(a) || !std::isfinite(gc)) {
      const bool a_nan = std::isnan(a), g_nan = std::isnan(gc);
      const bool agree = (a_nan && g_nan) || (std::isinf(a) && std::isinf(gc) && (a > 0) == (gc > 0));
      if (!agree) {
        ++mismatches;
        m_.nan_inf_ok = false;
        if (std::numeric_limits<double>::infinity() > worst) {
          worst = std::numeric_limits<double>::infinity();
          worst_at = i;
        }
      }
      max_ulp = std::max(max_ulp, ulp_distance(a, gc, out.dtype));
      return;
    }
    const double abs_err = std::fabs(a - g);
    max_abs = std::max(max_abs, abs_err);
    const double err_cast = std::fabs(a - gc);
    const double allowed = atol + rtol * std::fabs(gc);
    mismatches += err_cast > allowed ? 1 : 0;
    rel_and_score(i, g, gc, abs_err, err_cast, allowed);
    max_gap = std::max(max_gap, Elem::gap(Elem::line(actual[i]), Elem::golden_line(g)));
  };
  std::int64_t i = 0;
#ifdef GAUNTLET_VECTOR_COMPARISON
  if constexpr (kVectorised<Elem>) {
    if (cpu_has_avx2()) {
      for (; i + kBlock <= out.n; i += kBlock) {
        BlockSums b;
        if (!finite_block<std::is_same_v<Elem, BF16Elem>>(actual + i, golden + i, atol, rtol, max_rel, worst, b)) {
          for (std::int64_t j = i; j < i + kBlock; ++j) element(j);
          continue;
        }
        max_abs = std::max(max_abs, b.max_abs);
        max_gap = std::max(max_gap, b.max_gap);
        mismatches += b.mismatches;
        for (std::uint64_t left = b.candidates; left != 0; left &= left - 1) {
          const std::int64_t j = i + __builtin_ctzll(left);
          const double a = Elem::value(actual[j]), g = golden[j], gc = Elem::cast(g);
          const double err_cast = std::fabs(a - gc);
          rel_and_score(j, g, gc, std::fabs(a - g), err_cast, atol + rtol * std::fabs(gc));
        }
      }
    }
  }
#endif
  for (; i < out.n; ++i) element(i);
  m_.max_abs_err = max_abs;
  m_.max_rel_err = max_rel;
  m_.max_ulp = std::max(max_ulp, static_cast<double>(max_gap));
  m_.mismatches += mismatches;
  worst_score_ = worst;
  if (worst_at >= 0) m_.worst = out.name + "[" + std::to_string(worst_at) + "]";
  m_.numel += out.n;
}

void Comparison::add(const TypedOutputView& out, const Tolerance& tol) {
  switch (out.dtype) {
    case DType::F32:
      return add_typed<F32Elem>(out, tol);
    case DType::F64:
      return add_typed<F64Elem>(out, tol);
    case DType::BF16:
      return add_typed<BF16Elem>(out, tol);
    case DType::F16:
      return add_typed<F16Elem>(out, tol);
    default:
      throw std::invalid_argument("a typed comparison is of a floating output, not " +
                                  std::string(dtype_name(out.dtype)));
  }
}

}  // namespace gauntlet
