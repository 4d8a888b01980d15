// Comparison with the golden: tolerance table, metrics, ULP distance and rounding.
#include "gauntlet/core/cases/compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace gauntlet {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// An output whose golden_cast is the golden itself (the common case in these tests).
struct Out {
  std::string name;
  std::vector<double> actual, golden, golden_cast;
  DType dtype = DType::F32;
  OutputView view() const {
    return {name, actual.data(), golden.data(), golden_cast.data(), static_cast<std::int64_t>(actual.size()), dtype};
  }
};
Out make(std::string name, std::vector<double> a, std::vector<double> g, DType d = DType::F32) {
  Out o{std::move(name), std::move(a), g, g, d};
  return o;
}

Metrics compare_one(const Out& o, Tolerance tol) {
  Comparison c;
  c.add(o.view(), tol);
  return c.metrics();
}

TEST(Tolerance, DefaultTable) {
  auto check = [](DType d, double rtol, double atol) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    Tolerance t = default_tolerance(d);
    EXPECT_EQ(t.rtol, rtol);
    EXPECT_EQ(t.atol, atol);
    EXPECT_EQ(t.source, "default");
  };
  check(DType::F64, 1e-7, 1e-7);
  check(DType::F32, 1.3e-6, 1e-5);
  check(DType::F16, 1e-3, 1e-5);
  check(DType::BF16, 1.6e-2, 1e-5);
  for (DType d : {DType::I64, DType::I32, DType::I16, DType::I8, DType::U8, DType::Bool}) check(d, 0, 0);
}

TEST(Comparison, ExactMatch) {
  Metrics m = compare_one(make("out0", {1, 2, 3}, {1, 2, 3}), default_tolerance(DType::F32));
  EXPECT_EQ(m.numel, 3);
  EXPECT_EQ(m.mismatches, 0);
  EXPECT_EQ(m.max_abs_err, 0);
  EXPECT_EQ(m.max_rel_err, 0);
  EXPECT_EQ(m.max_ulp, 0);
  EXPECT_TRUE(m.nan_inf_ok);
  EXPECT_EQ(m.mismatch_frac(), 0.0);
}

TEST(Comparison, AbsAndRelErrorExcludeZeroGolden) {
  // |err| = 1 at a zero golden (no relative error there), 0.5 relative at golden 2.
  Metrics m = compare_one(make("out0", {1, 3, 4}, {0, 2, 4}), {0, 0, "t"});
  EXPECT_DOUBLE_EQ(m.max_abs_err, 1.0);
  EXPECT_DOUBLE_EQ(m.max_rel_err, 0.5);
}

TEST(Comparison, ErrorMetricsUseFp64GoldenNotTheCast) {
  // The golden 1.0000001 rounds to 1.0f; the device's 1.0f matches the cast exactly but is 1e-7
  // away from the fp64 golden.
  Out o{"out0", {1.0}, {1.0000001}, {1.0}, DType::F32};
  Metrics m = compare_one(o, {0, 0, "exact"});
  EXPECT_EQ(m.mismatches, 0);
  EXPECT_NEAR(m.max_abs_err, 1e-7, 1e-15);
  EXPECT_EQ(m.max_ulp, 0);
}

TEST(Comparison, MismatchesAndFraction) {
  Metrics m = compare_one(make("out0", {1, 2.5, 3, 5}, {1, 2, 3, 4}), {0, 0.1, "t"});
  EXPECT_EQ(m.numel, 4);
  EXPECT_EQ(m.mismatches, 2);
  EXPECT_DOUBLE_EQ(m.mismatch_frac(), 0.5);
  EXPECT_DOUBLE_EQ(m.max_abs_err, 1.0);
  EXPECT_DOUBLE_EQ(m.max_rel_err, 0.25);
}

TEST(Comparison, WorstNamesOutputAndFlatIndex) {
  // Element 2 is furthest outside its tolerance (err 3 vs allowed 0.1).
  Metrics m = compare_one(make("out0", {1, 2.5, 6, 4}, {1, 2, 3, 4}), {0, 0.1, "t"});
  EXPECT_EQ(m.worst, "out0[2]");
  // Within tolerance everywhere: the worst is the one closest to its edge.
  Metrics ok = compare_one(make("out1", {1, 2.05, 3.09, 4}, {1, 2, 3, 4}), {0, 0.1, "t"});
  EXPECT_EQ(ok.mismatches, 0);
  EXPECT_EQ(ok.worst, "out1[2]");
}

TEST(Comparison, AtolRtolEdge) {
  // allowed = atol + rtol * |golden_cast| = 0.5 + 0.25 * 2 = 1 (all exact in binary).
  const Tolerance tol{0.25, 0.5, "t"};
  EXPECT_EQ(compare_one(make("out0", {3.0}, {2.0}, DType::F64), tol).mismatches, 0);
  EXPECT_EQ(compare_one(make("out0", {1.0}, {2.0}, DType::F64), tol).mismatches, 0);
  EXPECT_EQ(compare_one(make("out0", {std::nextafter(3.0, kInf)}, {2.0}, DType::F64), tol).mismatches, 1);
  EXPECT_EQ(compare_one(make("out0", {std::nextafter(3.0, kInf)}, {2.0}, DType::F32), tol).mismatches, 1);
  // rtol scales with |golden_cast|, including negative goldens.
  EXPECT_EQ(compare_one(make("out0", {-3.0}, {-2.0}, DType::F64), tol).mismatches, 0);
  EXPECT_EQ(compare_one(make("out0", {-3.5}, {-2.0}, DType::F64), tol).mismatches, 1);
  // The tolerance applies to the golden rounded to the dtype, not the fp64 golden.
  Out o{"out0", {2.0}, {1.75}, {1.0}, DType::F32};
  EXPECT_EQ(compare_one(o, {0, 1.0, "t"}).mismatches, 0);
  Out o2{"out0", {2.5}, {1.75}, {1.0}, DType::F32};
  EXPECT_EQ(compare_one(o2, {0, 1.0, "t"}).mismatches, 1);
}

TEST(Comparison, NanAndInfPatterns) {
  const Tolerance tol = default_tolerance(DType::F32);
  {
    Metrics m = compare_one(make("out0", {kNaN, 1}, {kNaN, 1}), tol);
    EXPECT_EQ(m.mismatches, 0);
    EXPECT_TRUE(m.nan_inf_ok);
    EXPECT_EQ(m.max_abs_err, 0);
  }
  {
    Metrics m = compare_one(make("out0", {kNaN, 1}, {1, 1}), tol);
    EXPECT_EQ(m.mismatches, 1);
    EXPECT_FALSE(m.nan_inf_ok);
    EXPECT_EQ(m.worst, "out0[0]");
  }
  {
    Metrics m = compare_one(make("out0", {1, 1}, {kNaN, 1}), tol);
    EXPECT_EQ(m.mismatches, 1);
    EXPECT_FALSE(m.nan_inf_ok);
  }
  {
    Metrics m = compare_one(make("out0", {kInf, -kInf}, {kInf, -kInf}), tol);
    EXPECT_EQ(m.mismatches, 0);
    EXPECT_TRUE(m.nan_inf_ok);
    EXPECT_EQ(m.max_abs_err, 0);  // over finite pairs only
  }
  {
    Metrics m = compare_one(make("out0", {1, kInf}, {1, -kInf}), tol);
    EXPECT_EQ(m.mismatches, 1);
    EXPECT_FALSE(m.nan_inf_ok);
    EXPECT_EQ(m.worst, "out0[1]");
  }
  {
    Metrics m = compare_one(make("out0", {3.4e38}, {kInf}), {1e30, 1e30, "huge"});
    EXPECT_EQ(m.mismatches, 1);
    EXPECT_FALSE(m.nan_inf_ok);
  }
  {
    // An infinite golden_cast (the fp64 golden overflows the dtype) matched by the device.
    Out o{"out0", {kInf}, {70000.0}, {kInf}, DType::F16};
    Metrics m = compare_one(o, default_tolerance(DType::F16));
    EXPECT_EQ(m.mismatches, 0);
    EXPECT_TRUE(m.nan_inf_ok);
  }
}

TEST(Comparison, IntegersAreExact) {
  const Tolerance tol = default_tolerance(DType::I32);
  EXPECT_EQ(compare_one(make("out0", {3, -7, 0}, {3, -7, 0}, DType::I32), tol).mismatches, 0);
  Metrics m = compare_one(make("out0", {3, -7, 1}, {3, -7, 0}, DType::I32), tol);
  EXPECT_EQ(m.mismatches, 1);
  EXPECT_EQ(m.worst, "out0[2]");
  EXPECT_EQ(m.max_ulp, 0);  // ULPs are for floating outputs only
  Metrics b = compare_one(make("out0", {1, 0}, {1, 1}, DType::Bool), default_tolerance(DType::Bool));
  EXPECT_EQ(b.mismatches, 1);
}

TEST(Comparison, AccumulatesOverOutputs) {
  Comparison c;
  Out a = make("out0", {1, 2, 3}, {1, 2, 3});
  Out g = make("grad.self", {0, 0, 0, 10.5}, {0, 0, 0, 10});
  c.add(a.view(), {0, 0.1, "t"});
  c.add(g.view(), {0, 0.1, "t"});
  const Metrics& m = c.metrics();
  EXPECT_EQ(m.numel, 7);
  EXPECT_EQ(m.mismatches, 1);
  EXPECT_EQ(m.worst, "grad.self[3]");
  EXPECT_DOUBLE_EQ(m.max_abs_err, 0.5);
  EXPECT_DOUBLE_EQ(m.max_rel_err, 0.05);
  EXPECT_NEAR(m.mismatch_frac(), 1.0 / 7, 1e-15);

  // A worse element in an earlier output stays the worst.
  Comparison d;
  Out bad = make("out0", {100}, {1});
  d.add(bad.view(), {0, 0.1, "t"});
  d.add(g.view(), {0, 0.1, "t"});
  EXPECT_EQ(d.metrics().worst, "out0[0]");
  EXPECT_EQ(d.metrics().mismatches, 2);
  EXPECT_DOUBLE_EQ(d.metrics().max_abs_err, 99);
}

TEST(Ulp, Float32) {
  EXPECT_EQ(ulp_distance(1.0, std::nextafter(1.0f, 2.0f), DType::F32), 1);
  EXPECT_EQ(ulp_distance(std::nextafter(1.0f, 2.0f), 1.0, DType::F32), 1);
  EXPECT_EQ(ulp_distance(1.0, 1.0, DType::F32), 0);
  EXPECT_EQ(ulp_distance(1.0, 1.0 + 0x1p-23 * 5, DType::F32), 5);
  // One ULP below 1 is half the size of one above.
  EXPECT_EQ(ulp_distance(1.0, std::nextafter(1.0f, 0.0f), DType::F32), 1);
  // Values are rounded to f32 first: a difference below half an f32 ULP is 0.
  EXPECT_EQ(ulp_distance(1.0, 1.0 + 1e-9, DType::F32), 0);
  // Across zero: the smallest positive and negative subnormals are 2 apart.
  const double tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(ulp_distance(tiny, -tiny, DType::F32), 2);
}

// Float64's gaps reach 2^64: computed exactly in integers, rounded once to double, as the long
// double arithmetic they replaced (issue 24) rounded them.
TEST(Ulp, Float64GapsAsLongDoubleGaveThem) {
  auto reference = [](double a, double b) {
    std::int64_t ba, bb;
    std::memcpy(&ba, &a, 8);
    std::memcpy(&bb, &b, 8);
    auto ordered = [](std::int64_t x) { return x < 0 ? std::numeric_limits<std::int64_t>::min() - x : x; };
    return static_cast<double>(
        std::fabs(static_cast<long double>(ordered(ba)) - static_cast<long double>(ordered(bb))));
  };
  const double max = std::numeric_limits<double>::max(), tiny = std::numeric_limits<double>::denorm_min();
  const std::vector<double> values = {0.0,
                                      -0.0,
                                      1.0,
                                      -1.0,
                                      max,
                                      -max,
                                      tiny,
                                      -tiny,
                                      1e-300,
                                      -1e300,
                                      3.5,
                                      -2.25,
                                      std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity()};
  for (double a : values) {
    for (double b : values) EXPECT_EQ(ulp_distance(a, b, DType::F64), reference(a, b)) << a << " " << b;
  }
  EXPECT_EQ(ulp_distance(0.0, -0.0, DType::F64), 0);
  EXPECT_EQ(ulp_distance(max, -max, DType::F64), 2 * 9218868437227405311.0);  // past 2^63: twice max's bits
}

// The first argument negative (f32, f16, bf16): see the report, ulp_distance reads `width`
// before bits_of() sets it (unspecified argument evaluation order; a shift by -1).
TEST(Ulp, NegativeValues) {
  // Symmetric in its arguments, and correct for negative values of every floating dtype.
  const double tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(ulp_distance(-tiny, tiny, DType::F32), 2);
  for (DType d : {DType::F64, DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    EXPECT_EQ(ulp_distance(-0.0, 0.0, d), 0);
  }
  EXPECT_EQ(ulp_distance(-1.0, std::nextafter(-1.0f, -2.0f), DType::F32), 1);
  EXPECT_EQ(ulp_distance(std::nextafter(-1.0f, -2.0f), -1.0, DType::F32), 1);
  EXPECT_EQ(ulp_distance(-1.0, -1.0, DType::BF16), 0);
  EXPECT_EQ(ulp_distance(-1.0, -1.0078125, DType::BF16), 1);
  EXPECT_EQ(ulp_distance(-1.0078125, -1.0, DType::BF16), 1);
  EXPECT_EQ(ulp_distance(-1.0, -(1.0 + 0x1p-10), DType::F16), 1);
  EXPECT_EQ(ulp_distance(-2.0, -2.0, DType::F32), 0);
  // -1 and +1 in bf16: 0x3f80 steps on either side of zero.
  EXPECT_EQ(ulp_distance(-1.0, 1.0, DType::BF16), 2.0 * 0x3f80);
  EXPECT_EQ(ulp_distance(1.0, -1.0, DType::BF16), 2.0 * 0x3f80);
  EXPECT_EQ(ulp_distance(-1.0, std::nextafter(-1.0, -2.0), DType::F64), 1);
}

TEST(Ulp, Float64) {
  EXPECT_EQ(ulp_distance(1.0, std::nextafter(1.0, 2.0), DType::F64), 1);
  EXPECT_EQ(ulp_distance(1.0, 1.0 + 3 * 0x1p-52, DType::F64), 3);
  const double tiny = std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(ulp_distance(tiny, -tiny, DType::F64), 2);
  EXPECT_EQ(ulp_distance(std::numeric_limits<double>::max(), kInf, DType::F64), 1);
}

TEST(Ulp, HalfTypes) {
  EXPECT_EQ(ulp_distance(1.0, 1.0078125, DType::BF16), 1);      // bf16: 7 mantissa bits
  EXPECT_EQ(ulp_distance(1.0, 1.0 + 0x1p-10, DType::F16), 1);   // f16: 10 mantissa bits
  EXPECT_EQ(ulp_distance(1.0, 1.0 + 0x1p-10, DType::BF16), 0);  // same bf16 value
  EXPECT_EQ(ulp_distance(65504.0, kInf, DType::F16), 1);
  EXPECT_EQ(ulp_distance(0x1p-24, 0.0, DType::F16), 1);  // smallest f16 subnormal
}

TEST(Ulp, ZerosNanAndIntegers) {
  for (DType d : {DType::F64, DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    EXPECT_EQ(ulp_distance(0.0, -0.0, d), 0);
    EXPECT_EQ(ulp_distance(kNaN, kNaN, d), 0);
    EXPECT_EQ(ulp_distance(kNaN, 1.0, d), kInf);
    EXPECT_EQ(ulp_distance(1.0, kNaN, d), kInf);
  }
  EXPECT_EQ(ulp_distance(3, 7, DType::I32), 4);
}

TEST(RoundTo, Bf16TiesToEven) {
  // bf16 spacing at 1 is 2^-7.
  EXPECT_EQ(round_to(1.0 + 0x1p-8, DType::BF16), 1.0);                     // tie: even (1.0)
  EXPECT_EQ(round_to(1.0 + 3 * 0x1p-8, DType::BF16), 1.0 + 0x1p-6);        // tie: even (up)
  EXPECT_EQ(round_to(1.0 + 0x1p-8 + 0x1p-12, DType::BF16), 1.0 + 0x1p-7);  // above the tie
  EXPECT_EQ(round_to(-(1.0 + 0x1p-8), DType::BF16), -1.0);
  EXPECT_EQ(round_to(3.4e38, DType::BF16), kInf);  // above bf16's max (3.39e38) by more than half an ulp
  EXPECT_TRUE(std::isnan(round_to(kNaN, DType::BF16)));
  EXPECT_EQ(round_to(kInf, DType::BF16), kInf);
  EXPECT_EQ(round_to(-kInf, DType::BF16), -kInf);
  // bf16 keeps f32's exponent range: f32 subnormals stay (rounded to 8 bits).
  EXPECT_EQ(round_to(0x1p-130, DType::BF16), 0x1p-130);
}

TEST(RoundTo, F16TiesOverflowSubnormals) {
  // f16 spacing at 1 is 2^-10.
  EXPECT_EQ(round_to(1.0 + 0x1p-11, DType::F16), 1.0);
  EXPECT_EQ(round_to(1.0 + 3 * 0x1p-11, DType::F16), 1.0 + 0x1p-9);
  EXPECT_EQ(round_to(1.0 + 0x1p-11 + 0x1p-16, DType::F16), 1.0 + 0x1p-10);
  EXPECT_EQ(round_to(2049.0, DType::F16), 2048.0);  // tie at spacing 2: even
  EXPECT_EQ(round_to(2051.0, DType::F16), 2052.0);
  // Overflow: 65504 is the max; 65520 is the tie with 65536, which rounds (even) to inf.
  EXPECT_EQ(round_to(65504.0, DType::F16), 65504.0);
  EXPECT_EQ(round_to(65519.0, DType::F16), 65504.0);
  EXPECT_EQ(round_to(65520.0, DType::F16), kInf);
  EXPECT_EQ(round_to(1e6, DType::F16), kInf);
  EXPECT_EQ(round_to(-1e6, DType::F16), -kInf);
  // Subnormals: the smallest is 2^-24; half of it is a tie with 0 (even: 0).
  EXPECT_EQ(round_to(0x1p-24, DType::F16), 0x1p-24);
  EXPECT_EQ(round_to(0x1p-25, DType::F16), 0.0);
  EXPECT_EQ(round_to(1.5 * 0x1p-25, DType::F16), 0x1p-24);
  EXPECT_EQ(round_to(3 * 0x1p-25, DType::F16), 2 * 0x1p-24);              // tie between 1 and 2 ulps: even
  EXPECT_EQ(round_to(5 * 0x1p-25, DType::F16), 2 * 0x1p-24);              // tie between 2 and 3: even
  EXPECT_EQ(round_to(0x1p-14, DType::F16), 0x1p-14);                      // smallest normal
  EXPECT_EQ(round_to(0x1p-14 - 0x1p-24, DType::F16), 0x1p-14 - 0x1p-24);  // largest subnormal
  EXPECT_EQ(round_to(1e-9, DType::F16), 0.0);
  EXPECT_EQ(round_to(-1e-9, DType::F16), 0.0);
  EXPECT_TRUE(std::signbit(round_to(-1e-9, DType::F16)));
  EXPECT_TRUE(std::isnan(round_to(kNaN, DType::F16)));
  EXPECT_EQ(round_to(-kInf, DType::F16), -kInf);
}

TEST(RoundTo, OtherTypes) {
  EXPECT_EQ(round_to(1.0 + 0x1p-30, DType::F64), 1.0 + 0x1p-30);
  EXPECT_EQ(round_to(1.0 + 0x1p-30, DType::F32), 1.0);
  EXPECT_EQ(round_to(1.0 + 0x1p-24, DType::F32), 1.0);  // tie: even
  EXPECT_EQ(round_to(1.0 + 3 * 0x1p-24, DType::F32), 1.0 + 0x1p-22);
  EXPECT_EQ(round_to(5, DType::I32), 5);
}

}  // namespace
}  // namespace gauntlet

namespace {

// The comparison loop as it was before issue 24 (the worst element's name built each time it
// changed), kept as the reference that any faster loop must agree with to the bit. (ulp_distance's
// own change is checked by Ulp.Float64GapsAsLongDoubleGaveThem.)
struct Reference {
  gauntlet::Metrics m;
  double worst_score = -1;
  void add(const gauntlet::OutputView& out, const gauntlet::Tolerance& tol) {
    const bool floating = gauntlet::is_floating(out.dtype);
    for (std::int64_t i = 0; i < out.n; ++i) {
      const double a = out.actual[i], g = out.golden[i], gc = out.golden_cast[i];
      const bool a_nan = std::isnan(a), g_nan = std::isnan(gc), a_inf = std::isinf(a), g_inf = std::isinf(gc);
      bool mismatch = false;
      double score = 0;
      if (a_nan || g_nan || a_inf || g_inf) {
        const bool agree = (a_nan && g_nan) || (a_inf && g_inf && (a > 0) == (gc > 0));
        if (!agree) {
          mismatch = true;
          m.nan_inf_ok = false;
          score = std::numeric_limits<double>::infinity();
        }
      } else {
        const double abs_err = std::fabs(a - g);
        m.max_abs_err = std::max(m.max_abs_err, abs_err);
        if (g != 0) m.max_rel_err = std::max(m.max_rel_err, abs_err / std::fabs(g));
        const double err_cast = std::fabs(a - gc);
        const double allowed = tol.atol + tol.rtol * std::fabs(gc);
        mismatch = err_cast > allowed;
        score = allowed > 0 ? err_cast / allowed : (err_cast > 0 ? std::numeric_limits<double>::max() : 0.0);
      }
      if (floating) m.max_ulp = std::max(m.max_ulp, gauntlet::ulp_distance(a, gc, out.dtype));
      if (mismatch) ++m.mismatches;
      if (score > 0 && score > worst_score) {
        worst_score = score;
        m.worst = out.name + "[" + std::to_string(i) + "]";
      }
    }
    m.numel += out.n;
  }
};

}  // namespace

// Issue 24: the comparison loop gives every metric of the reference loop, on random outputs
// mixing ordinary values, errors a hair apart (the worst element and the largest ratio decided by
// 0.001%), exact matches, zeros, subnormals, huge values, NaN and +-Inf, several outputs a case,
// under tolerances with and without an absolute part. A loop that skips work (a division only
// when it may raise a maximum, say) is caught when it skips one too many (checked by mutation).
TEST(Comparison, FasterLoopGivesTheReferencesMetricsToTheBit) {
  std::mt19937_64 rng(20261203);
  std::uniform_real_distribution<double> unit(-1, 1);
  // Half the trials without NaN, Inf and huge values, which would otherwise be the worst element
  // of nearly every output and leave the ordinary ones untested.
  bool specials = false;
  auto draw = [&](double base) {
    switch (specials ? rng() % 14 : 5 + rng() % 9) {
      case 0:
        return 0.0;
      case 1:
        return std::numeric_limits<double>::quiet_NaN();
      case 2:
        return (rng() % 2 ? 1 : -1) * std::numeric_limits<double>::infinity();
      case 3:
        return std::numeric_limits<double>::denorm_min() * static_cast<double>(rng() % 1000);
      case 4:
        return unit(rng) * 1e300;
      case 5:
        return base;  // exact
      case 6:
      case 7:  // errors a hair apart: the worst element and the largest ratio change by 0.001% steps
        return base * (1 + 1e-4 * (1 + static_cast<double>(rng() % 1000) * 1e-5));
      default:
        return base * (1 + unit(rng) * std::pow(10.0, -static_cast<double>(rng() % 9)));
    }
  };
  const gauntlet::DType dtypes[] = {gauntlet::DType::F32, gauntlet::DType::F64, gauntlet::DType::BF16,
                                    gauntlet::DType::F16, gauntlet::DType::I32};
  for (int trial = 0; trial < 2000; ++trial) {
    specials = trial % 2 == 1;
    gauntlet::Comparison fast;
    Reference ref;
    const int outputs = 1 + static_cast<int>(rng() % 3);
    std::vector<std::vector<double>> keep;
    for (int o = 0; o < outputs; ++o) {
      const gauntlet::DType d = dtypes[rng() % 5];
      const std::size_t n = rng() % 200;
      std::vector<double> golden(n), cast(n), actual(n);
      for (std::size_t i = 0; i < n; ++i) {
        golden[i] = rng() % 10 == 0 ? 0.0 : unit(rng) * std::pow(10.0, static_cast<double>(rng() % 13) - 6);
        cast[i] = gauntlet::round_to(golden[i], d);
        actual[i] = draw(cast[i]);
      }
      const gauntlet::Tolerance tol = rng() % 3 == 0 ? gauntlet::Tolerance{0, 0, "exact"}
                                      : rng() % 2    ? gauntlet::default_tolerance(d)
                                                     : gauntlet::Tolerance{1e-3, 0, "relative"};
      keep.push_back(std::move(golden));
      keep.push_back(std::move(cast));
      keep.push_back(std::move(actual));
      const gauntlet::OutputView view{"out" + std::to_string(o),    keep[keep.size() - 1].data(),
                                      keep[keep.size() - 3].data(), keep[keep.size() - 2].data(),
                                      static_cast<std::int64_t>(n), d};
      fast.add(view, tol);
      ref.add(view, tol);
    }
    const gauntlet::Metrics& a = fast.metrics();
    const gauntlet::Metrics& b = ref.m;
    ASSERT_EQ(a.max_abs_err, b.max_abs_err) << trial;
    ASSERT_EQ(a.max_rel_err, b.max_rel_err) << trial;
    ASSERT_EQ(a.mismatches, b.mismatches) << trial;
    ASSERT_EQ(a.numel, b.numel) << trial;
    ASSERT_EQ(a.max_ulp, b.max_ulp) << trial;
    ASSERT_EQ(a.nan_inf_ok, b.nan_inf_ok) << trial;
    ASSERT_EQ(a.worst, b.worst) << trial;
  }
}

namespace {

// The value of a 16-bit pattern of `d` (BF16 or F16), decoded here independently of compare.cpp.
double value_of_bits(std::uint16_t b, gauntlet::DType d) {
  if (d == gauntlet::DType::BF16) {
    const std::uint32_t u = std::uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  const double sign = (b & 0x8000) ? -1.0 : 1.0;
  const int exp = (b >> 10) & 0x1f, mant = b & 0x3ff;
  if (exp == 31)
    return mant ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  return sign * (exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25));
}

}  // namespace

// Note [Typed comparison]: an output handed over in its own dtype (float, double, bf16 and f16
// bit patterns) gives every metric of the same values widened to fp64 beside the golden rounded
// with round_to, to the bit: random outputs of exact, nearby (a few ULPs) and arbitrary values
// (every bit pattern, NaN and Inf among them) against goldens of every magnitude, zeros, huge,
// NaN and Inf, several outputs a case, with and without an absolute tolerance. Outputs of up to
// 2,000 elements: blocks of 64 go through the AVX2 pass where the CPU has it.
TEST(Comparison, TypedViewGivesTheDoubleViewsMetricsToTheBit) {
  std::mt19937_64 rng(20261203);
  std::uniform_real_distribution<double> unit(-1, 1);
  const gauntlet::DType dtypes[] = {gauntlet::DType::F32, gauntlet::DType::F64, gauntlet::DType::BF16,
                                    gauntlet::DType::F16};
  for (int trial = 0; trial < 3000; ++trial) {
    // Specials nowhere, everywhere, or one element in 64 (most blocks of Note [Vectorised
    // comparison] then compare four at a time, some element by element).
    const int mode = trial % 3;
    gauntlet::Comparison typed, widened;
    Reference ref;
    const int outputs = 1 + static_cast<int>(rng() % 3);
    std::vector<std::vector<double>> keep;
    std::vector<std::vector<std::uint8_t>> stored;
    for (int o = 0; o < outputs; ++o) {
      const gauntlet::DType d = dtypes[rng() % 4];
      const std::size_t n = rng() % 2 ? rng() % 300 : rng() % 2000;
      const std::size_t width = d == gauntlet::DType::F64 ? 8 : d == gauntlet::DType::F32 ? 4 : 2;
      std::vector<double> golden(n), cast(n), actual(n);
      std::vector<std::uint8_t> bytes(n * width);
      for (std::size_t i = 0; i < n; ++i) {
        const bool specials = mode == 1 || (mode == 2 && rng() % 64 == 0);
        const auto pick = rng() % 20;
        golden[i] = pick == 0               ? 0.0
                    : specials && pick == 1 ? std::numeric_limits<double>::quiet_NaN()
                    : specials && pick == 2 ? (rng() % 2 ? 1 : -1) * std::numeric_limits<double>::infinity()
                    : specials && pick == 3 ? unit(rng) * 1e300
                                            : unit(rng) * std::pow(10.0, static_cast<double>(rng() % 13) - 6);
        cast[i] = gauntlet::round_to(golden[i], d);
        // The actual element as its dtype stores it: the cast golden moved a few ULPs, or (with
        // specials) any bit pattern at all.
        const auto how = rng() % 10;
        std::uint8_t* at = bytes.data() + i * width;
        if (d == gauntlet::DType::F64) {
          double v = cast[i];
          std::int64_t b;
          std::memcpy(&b, &v, 8);
          if (specials && how == 0)
            b = static_cast<std::int64_t>(rng());
          else if (how < 7)
            b += static_cast<std::int64_t>(rng() % 7) - 3;
          std::memcpy(at, &b, 8);
          std::memcpy(&v, &b, 8);
          actual[i] = v;
        } else if (d == gauntlet::DType::F32) {
          float v = static_cast<float>(cast[i]);
          std::uint32_t b;
          std::memcpy(&b, &v, 4);
          if (specials && how == 0)
            b = static_cast<std::uint32_t>(rng());
          else if (how < 7)
            b += static_cast<std::uint32_t>(rng() % 7) - 3u;
          std::memcpy(at, &b, 4);
          std::memcpy(&v, &b, 4);
          actual[i] = v;
        } else {
          // The pattern of the cast golden, found by its value (exact for every finite pattern).
          std::uint16_t b = 0;
          if (std::isnan(cast[i]))
            b = d == gauntlet::DType::BF16 ? 0x7fc0 : 0x7e00;
          else {
            float f = static_cast<float>(cast[i]);
            std::uint32_t u;
            std::memcpy(&u, &f, 4);
            if (d == gauntlet::DType::BF16) {
              b = static_cast<std::uint16_t>(u >> 16);
            } else {
              static const std::unordered_map<double, std::uint16_t> f16_bits = [] {
                std::unordered_map<double, std::uint16_t> m;
                for (std::uint32_t p = 0; p < 0x10000; ++p) {
                  const double v = value_of_bits(static_cast<std::uint16_t>(p), gauntlet::DType::F16);
                  if (!std::isnan(v)) m.emplace(v, static_cast<std::uint16_t>(p));
                }
                return m;
              }();
              b = f16_bits.at(cast[i]);
            }
          }
          if (specials && how == 0)
            b = static_cast<std::uint16_t>(rng());
          else if (how < 7)
            b = static_cast<std::uint16_t>(b + (rng() % 7) - 3);
          std::memcpy(at, &b, 2);
          actual[i] = value_of_bits(b, d);
        }
      }
      const gauntlet::Tolerance tol = rng() % 3 == 0 ? gauntlet::Tolerance{0, 0, "exact"}
                                      : rng() % 2    ? gauntlet::default_tolerance(d)
                                                     : gauntlet::Tolerance{1e-3, 0, "relative"};
      const std::string name = "out" + std::to_string(o);
      typed.add(gauntlet::TypedOutputView{name, bytes.data(), golden.data(), static_cast<std::int64_t>(n), d}, tol);
      const gauntlet::OutputView view{name, actual.data(), golden.data(), cast.data(), static_cast<std::int64_t>(n), d};
      widened.add(view, tol);
      ref.add(view, tol);
      keep.push_back(std::move(golden));
      keep.push_back(std::move(cast));
      keep.push_back(std::move(actual));
      stored.push_back(std::move(bytes));
    }
    for (const gauntlet::Metrics* b : std::vector<const gauntlet::Metrics*>{&widened.metrics(), &ref.m}) {
      const gauntlet::Metrics& a = typed.metrics();
      ASSERT_EQ(a.max_abs_err, b->max_abs_err) << trial;
      ASSERT_EQ(a.max_rel_err, b->max_rel_err) << trial;
      ASSERT_EQ(a.mismatches, b->mismatches) << trial;
      ASSERT_EQ(a.numel, b->numel) << trial;
      ASSERT_EQ(a.max_ulp, b->max_ulp) << trial;
      ASSERT_EQ(a.nan_inf_ok, b->nan_inf_ok) << trial;
      ASSERT_EQ(a.worst, b->worst) << trial;
    }
  }
}

// Every 16-bit pattern of bf16 and f16 as the actual element, against goldens just beside it: the
// typed comparison reads each as the widened one does (subnormals, -0, Inf and NaN included).
TEST(Comparison, TypedViewReadsEverySixteenBitPatternAsItsValue) {
  for (gauntlet::DType d : {gauntlet::DType::BF16, gauntlet::DType::F16}) {
    std::vector<std::uint16_t> bits(1 << 16);
    std::vector<double> actual(bits.size()), golden(bits.size()), cast(bits.size());
    for (std::size_t p = 0; p < bits.size(); ++p) {
      bits[p] = static_cast<std::uint16_t>(p);
      actual[p] = value_of_bits(bits[p], d);
      golden[p] = std::isfinite(actual[p]) ? actual[p] * (1 + 1e-3 * static_cast<double>(p % 7)) : actual[p];
      cast[p] = gauntlet::round_to(golden[p], d);
    }
    const gauntlet::Tolerance tol = gauntlet::default_tolerance(d);
    gauntlet::Comparison typed;
    Reference ref;
    for (std::size_t from = 0; from < bits.size(); from += 4096) {  // 16 outputs: each its own worst
      const std::string name = "out" + std::to_string(from / 4096);
      typed.add(gauntlet::TypedOutputView{name, bits.data() + from, golden.data() + from, 4096, d}, tol);
      ref.add({name, actual.data() + from, golden.data() + from, cast.data() + from, 4096, d}, tol);
      SCOPED_TRACE(name);
      EXPECT_EQ(typed.metrics().max_ulp, ref.m.max_ulp);
      EXPECT_EQ(typed.metrics().max_abs_err, ref.m.max_abs_err);
      EXPECT_EQ(typed.metrics().max_rel_err, ref.m.max_rel_err);
      EXPECT_EQ(typed.metrics().mismatches, ref.m.mismatches);
      EXPECT_EQ(typed.metrics().worst, ref.m.worst);
    }
    EXPECT_EQ(typed.metrics().numel, 1 << 16);
  }
}

TEST(Comparison, TypedViewOfANonFloatingDTypeIsRefused) {
  gauntlet::Comparison c;
  const std::int32_t v[1] = {1};
  const double g[1] = {1};
  EXPECT_THROW(c.add(gauntlet::TypedOutputView{"out0", v, g, 1, gauntlet::DType::I32}, gauntlet::Tolerance{}),
               std::invalid_argument);
}
