// Statistics: order statistics, Mann-Whitney U, bootstrap, noise bands, E-Divisive.
#include "gauntlet/analysis/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gauntlet::stats {
namespace {

const double kNaN = std::nan("");

// ---- Rng ----

TEST(Rng, MatchesReferenceXoshiro256StarStar) {
  // Values from the reference C code (splitmix64 seeding, xoshiro256**).
  Rng zero(0);
  EXPECT_EQ(zero.next(), 0x99ec5f36cb75f2b4u);
  EXPECT_EQ(zero.next(), 0xbf6e1f784956452au);
  EXPECT_EQ(zero.next(), 0x1a5f849d4933e6e0u);
  Rng seeded(0x5eed);
  EXPECT_EQ(seeded.next(), 0xef33f17055244b74u);
}

TEST(Rng, BelowIsLemireAndUniform) {
  Rng rng(42);
  const std::vector<std::uint64_t> expected = {0, 3, 6, 9, 9, 7, 7, 8, 7, 5};
  for (std::uint64_t e : expected) EXPECT_EQ(rng.below(10), e);
  EXPECT_EQ(rng.below(1), 0u);
  EXPECT_THROW(rng.below(0), std::invalid_argument);
  std::vector<int> counts(3, 0);
  for (int i = 0; i < 30000; ++i) ++counts[rng.below(3)];
  for (int c : counts) EXPECT_NEAR(c, 10000, 400);  // > 4 standard deviations
  for (int i = 0; i < 1000; ++i) {
    const double u = rng.unit();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

// ---- Order statistics ----

TEST(Quantile, Type7LikeNumpy) {
  const std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile(v, 0.75), 3.25);
  EXPECT_DOUBLE_EQ(quantile(v, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(quantile({7, 1, 3}, 0.1), 1.4);
  EXPECT_DOUBLE_EQ(quantile({7, 1, 3}, 0.9), 6.2);
  EXPECT_DOUBLE_EQ(quantile({5}, 0.3), 5.0);
  EXPECT_DOUBLE_EQ(quantile({2, 2, 2}, 0.4), 2.0);
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({3, 1, 2, 10}), 2.5);
}

TEST(Quantile, EmptyNanAndBadQ) {
  EXPECT_TRUE(std::isnan(median({})));
  EXPECT_TRUE(std::isnan(quantile({}, 0.5)));
  EXPECT_TRUE(std::isnan(median({1, kNaN, 3})));
  EXPECT_THROW(quantile({1, 2}, 1.5), std::invalid_argument);
  EXPECT_THROW(quantile({1, 2}, -0.1), std::invalid_argument);
  EXPECT_THROW(quantile({1, 2}, kNaN), std::invalid_argument);
  EXPECT_EQ(quantile({1, INFINITY, INFINITY}, 0.75), INFINITY);
}

TEST(Geomean, LogMeanExp) {
  EXPECT_DOUBLE_EQ(geomean({2, 8}), 4.0);
  EXPECT_NEAR(geomean({1, 10, 100}), 10.0, 1e-12);
  EXPECT_DOUBLE_EQ(geomean({0.5}), 0.5);
  EXPECT_TRUE(std::isnan(geomean({})));
}

TEST(NormalQuantile, KnownValuesAndRoundTrip) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-13);
  EXPECT_NEAR(normal_quantile(0.995), 2.5758293035489004, 1e-13);
  EXPECT_NEAR(normal_quantile(0.025), -1.959963984540054, 1e-13);
  EXPECT_DOUBLE_EQ(normal_quantile(0.5), 0.0);
  for (double p : {1e-12, 1e-6, 0.01, 0.02425, 0.3, 0.7, 0.99, 1 - 1e-9}) {
    const double x = normal_quantile(p);
    EXPECT_NEAR(0.5 * std::erfc(-x / std::sqrt(2.0)) / p, 1.0, 1e-12) << p;
  }
  EXPECT_EQ(normal_quantile(0), -INFINITY);
  EXPECT_EQ(normal_quantile(1), INFINITY);
  EXPECT_TRUE(std::isnan(normal_quantile(1.5)));
}

// ---- Mann-Whitney U ----

// The exact two-sided p-value by enumerating every way to pick |a| of the n ranks.
double brute_force_p(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> pooled = a;
  pooled.insert(pooled.end(), b.begin(), b.end());
  std::sort(pooled.begin(), pooled.end());
  const int n = static_cast<int>(pooled.size()), k = static_cast<int>(a.size());
  const auto u_of = [&](unsigned mask) {
    double u = 0;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (((mask >> i) & 1u) && !((mask >> j) & 1u) && pooled[i] > pooled[j]) ++u;
      }
    }
    return u;
  };
  unsigned observed = 0;
  for (double x : a) {
    observed |= 1u << (std::find(pooled.begin(), pooled.end(), x) - pooled.begin());
  }
  const double pairs = static_cast<double>(k) * (n - k);
  const double u_obs = u_of(observed);
  const double far = std::max(u_obs, pairs - u_obs);
  int total = 0, extreme = 0;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) != k) continue;
    ++total;
    const double u = u_of(mask);
    if (std::max(u, pairs - u) >= far) ++extreme;
  }
  return std::min(1.0, static_cast<double>(extreme) / total);
}

TEST(MannWhitney, ScipyDocumentationExample) {
  // scipy.stats.mannwhitneyu(males, females) → statistic 17.0, pvalue 0.1111111111111111.
  const auto r = mann_whitney_u({19, 22, 16, 29, 24}, {20, 11, 17, 12});
  EXPECT_DOUBLE_EQ(r.u, 17.0);
  EXPECT_NEAR(r.p_value, 14.0 / 126, 1e-14);
  EXPECT_TRUE(r.exact);
}

TEST(MannWhitney, ExactMatchesEnumeration) {
  const std::vector<std::pair<std::vector<double>, std::vector<double>>> samples = {
      {{1.5, 3.25, 7.0}, {2.0, 4.5, 5.0, 6.0}},
      {{0.1, 0.2, 0.3, 0.4, 0.5}, {0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2}},  // separated
      {{10, 30, 50, 70, 90, 110}, {20, 40, 60, 80, 100, 120}},           // interleaved
      {{5, 1, 9, 12, 3}, {2, 4, 6, 7, 8, 10, 11}},
      {{-3}, {1, 2, 4, 5, 6}},
      {{8, 2, 11, 5}, {1, 3, 4, 6, 7, 9, 10, 12}},
  };
  for (const auto& [a, b] : samples) {
    const auto r = mann_whitney_u(a, b);
    EXPECT_TRUE(r.exact);
    EXPECT_NEAR(r.p_value, brute_force_p(a, b), 1e-12) << a.size() << "x" << b.size();
    const auto swapped = mann_whitney_u(b, a);
    EXPECT_DOUBLE_EQ(swapped.u, static_cast<double>(a.size() * b.size()) - r.u);
    EXPECT_NEAR(swapped.p_value, r.p_value, 1e-12);
  }
}

TEST(MannWhitney, ExactAtTheCapAgreesWithNormal) {
  // 50 × 50 untied: exact. A moderate p-value must be close to the normal approximation's.
  std::vector<double> a, b;
  for (int i = 0; i < 50; ++i) {
    a.push_back(i + 0.3 * (i % 7));
    b.push_back(i + 4.1 + 0.01 * i);
  }
  const auto r = mann_whitney_u(a, b);
  EXPECT_TRUE(r.exact);
  const double sigma = std::sqrt(2500.0 * 101 / 12);
  const double normal = std::erfc((std::max(r.u, 2500 - r.u) - 1250 - 0.5) / sigma / std::sqrt(2.0));
  EXPECT_GT(r.p_value, 0.01);
  EXPECT_NEAR(r.p_value / normal, 1.0, 0.02);
}

TEST(MannWhitney, NormalApproximationWithTies) {
  // Hand-computed with scipy's formula: U = 6, Σ(t³-t) = 54, z = (24 - 15 - 0.5)/σ.
  auto r = mann_whitney_u({1, 2, 2, 3, 4}, {2, 3, 3, 5, 6, 6});
  EXPECT_DOUBLE_EQ(r.u, 6.0);
  EXPECT_FALSE(r.exact);
  EXPECT_NEAR(r.p_value, 0.11304997885632297, 1e-12);
  r = mann_whitney_u({1.5, 2, 2, 3, 3, 4, 7, 7, 8, 9, 10, 12}, {3, 4, 4, 5, 6, 7, 8, 9, 9, 11, 13, 13, 14, 15});
  EXPECT_DOUBLE_EQ(r.u, 47.5);
  EXPECT_NEAR(r.p_value, 0.06321396850656212, 1e-12);
}

TEST(MannWhitney, LargeUntiedSamplesUseNormal) {
  std::vector<double> a, b;
  for (int i = 0; i < 60; ++i) {
    a.push_back(i);
    b.push_back(i + 10.5);
  }
  const auto r = mann_whitney_u(a, b);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 1225.0);  // a_i = i beats b_j = j + 10.5 for j <= i - 11
  EXPECT_LT(r.p_value, 0.05);
}

TEST(MannWhitney, EdgeCases) {
  EXPECT_DOUBLE_EQ(mann_whitney_u({}, {1, 2}).p_value, 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_u({1, 2}, {}).p_value, 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_u({}, {}).u, 0.0);
  // Both constant and equal: nothing separates them.
  auto r = mann_whitney_u({3, 3, 3}, {3, 3, 3, 3});
  EXPECT_DOUBLE_EQ(r.u, 6.0);
  EXPECT_DOUBLE_EQ(r.p_value, 1.0);
  // Both constant and different: perfect separation, 2/C(10, 5).
  r = mann_whitney_u({2, 2, 2, 2, 2}, {1, 1, 1, 1, 1});
  EXPECT_DOUBLE_EQ(r.u, 25.0);
  EXPECT_TRUE(r.exact);
  EXPECT_NEAR(r.p_value, 2.0 / 252, 1e-15);
  // Separated with ties elsewhere gets the same p-value as the untied separated sample.
  EXPECT_NEAR(mann_whitney_u({1, 1, 2, 2, 2}, {5, 5, 6, 7, 7}).p_value,
              mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}).p_value, 1e-15);
  EXPECT_DOUBLE_EQ(mann_whitney_u({1}, {2}).p_value, 1.0);
  EXPECT_THROW(mann_whitney_u({1, kNaN}, {2}), std::invalid_argument);
}

TEST(HodgesLehmann, MedianOfPairwiseDifferences) {
  EXPECT_DOUBLE_EQ(hodges_lehmann_shift({1, 2, 3}, {0}), 2.0);
  EXPECT_DOUBLE_EQ(hodges_lehmann_shift({10, 11}, {1, 2}), 9.0);  // {9, 8, 10, 9}
  EXPECT_TRUE(std::isnan(hodges_lehmann_shift({}, {1})));
}

// ---- Bootstrap ----

std::vector<double> ratios(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> r(n);
  for (double& x : r) x = std::exp(0.1 * (rng.unit() - 0.5) + 0.05);
  return r;
}

TEST(Bootstrap, DeterministicAndContainsEstimate) {
  const auto data = ratios(200, 1);
  const Interval a = bootstrap_geomean(data), b = bootstrap_geomean(data);
  EXPECT_EQ(a.lo, b.lo);
  EXPECT_EQ(a.hi, b.hi);
  EXPECT_DOUBLE_EQ(a.estimate, geomean(data));
  EXPECT_LT(a.lo, a.estimate);
  EXPECT_GT(a.hi, a.estimate);
  const Interval other = bootstrap_geomean(data, 2000, 0.95, 7);
  EXPECT_NE(other.lo, a.lo);
  EXPECT_NEAR(other.lo, a.lo, 0.002);
  // A 99% interval is wider than a 95% one.
  const Interval wide = bootstrap_geomean(data, 2000, 0.99);
  EXPECT_LT(wide.lo, a.lo);
  EXPECT_GT(wide.hi, a.hi);
}

TEST(Bootstrap, NarrowsWithN) {
  const Interval small = bootstrap_geomean(ratios(50, 2));
  const Interval large = bootstrap_geomean(ratios(800, 2));
  const double w_small = std::log(small.hi / small.lo), w_large = std::log(large.hi / large.lo);
  EXPECT_NEAR(w_small / w_large, 4.0, 1.0);  // ∝ 1/√n
}

TEST(Bootstrap, SmallAndDegenerateInputs) {
  const Interval none = bootstrap_geomean({});
  EXPECT_TRUE(std::isnan(none.estimate) && std::isnan(none.lo) && std::isnan(none.hi));
  const Interval one = bootstrap_geomean({1.25});
  EXPECT_DOUBLE_EQ(one.estimate, 1.25);
  EXPECT_DOUBLE_EQ(one.lo, 1.25);
  EXPECT_DOUBLE_EQ(one.hi, 1.25);
  const Interval constant = bootstrap_geomean({0.8, 0.8, 0.8, 0.8});
  EXPECT_DOUBLE_EQ(constant.lo, constant.estimate);
  EXPECT_DOUBLE_EQ(constant.hi, constant.estimate);
  EXPECT_THROW(bootstrap_geomean({1.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(bootstrap_geomean({1.0, -2.0}), std::invalid_argument);
  EXPECT_THROW(bootstrap_geomean({1.0, INFINITY}), std::invalid_argument);
  EXPECT_THROW(bootstrap_geomean({1.0, kNaN}), std::invalid_argument);
  EXPECT_THROW(bootstrap_geomean({1.0, 2.0}, 0), std::invalid_argument);
  EXPECT_THROW(bootstrap_geomean({1.0, 2.0}, 100, 1.0), std::invalid_argument);
}

TEST(Bootstrap, LargeSamplesUseTheNormalApproximation) {
  const auto data = ratios(30000, 3);
  double mean = 0;
  for (double x : data) mean += std::log(x);
  mean /= data.size();
  double ss = 0;
  for (double x : data) ss += (std::log(x) - mean) * (std::log(x) - mean);
  const double se = std::sqrt(ss / data.size() / data.size());
  const Interval r = bootstrap_geomean(data);
  EXPECT_NEAR(std::log(r.lo), mean - 1.959963984540054 * se, 1e-12);
  EXPECT_NEAR(std::log(r.hi), mean + 1.959963984540054 * se, 1e-12);
  // Seed-independent, and continuous with resampling across the 20,000 threshold.
  EXPECT_EQ(bootstrap_geomean(data, 10, 0.95, 99).lo, r.lo);
  const auto at = ratios(20000, 4), above = ratios(20001, 4);
  const Interval resampled = bootstrap_geomean(at, 400), normal = bootstrap_geomean(above);
  EXPECT_NEAR(std::log(resampled.hi / resampled.lo) / std::log(normal.hi / normal.lo), 1.0, 0.15);
}

// ---- Noise band ----

TEST(NoiseBand, MedianAndMad) {
  const NoiseBand band = noise_band({0.01, -0.02, 0.0, 0.03, -0.01});
  EXPECT_EQ(band.n, 5);
  EXPECT_DOUBLE_EQ(band.center, 0.0);
  EXPECT_NEAR(band.half_width, 3 * 1.4826 * 0.01, 1e-15);
  EXPECT_TRUE(outside(band, 0.05));
  EXPECT_TRUE(outside(band, -0.05));
  EXPECT_FALSE(outside(band, 0.04));
  EXPECT_FALSE(outside(band, kNaN));
  EXPECT_NEAR(noise_band({0.01, -0.02, 0.0, 0.03, -0.01}, 1.0).half_width, 1.4826 * 0.01, 1e-15);
}

TEST(NoiseBand, ShortHistoryIsUnknown) {
  NoiseBand band = noise_band({0.1, 0.3});
  EXPECT_EQ(band.n, 2);
  EXPECT_DOUBLE_EQ(band.center, 0.2);
  EXPECT_EQ(band.half_width, INFINITY);
  EXPECT_FALSE(outside(band, 5.0));
  band = noise_band({});
  EXPECT_EQ(band.n, 0);
  EXPECT_FALSE(outside(band, -5.0));
  // A perfectly steady history: zero width, any change is outside.
  band = noise_band({0.0, 0.0, 0.0});
  EXPECT_DOUBLE_EQ(band.half_width, 0.0);
  EXPECT_TRUE(outside(band, 1e-9));
  EXPECT_THROW(noise_band({0.0, kNaN, 0.0}), std::invalid_argument);
  EXPECT_THROW(noise_band({0.0, 0.1, 0.0}, -1), std::invalid_argument);
}

// ---- E-Divisive ----

// `levels[i]` repeated `lengths[i]` times, plus uniform noise in ±amplitude.
std::vector<double> steps(const std::vector<double>& levels, const std::vector<int>& lengths, double amplitude,
                          std::uint64_t seed = 11) {
  Rng rng(seed);
  std::vector<double> s;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    for (int k = 0; k < lengths[i]; ++k) s.push_back(levels[i] + amplitude * (2 * rng.unit() - 1));
  }
  return s;
}

TEST(EDivisive, FindsOneStep) {
  const auto series = steps({1.0, 1.5}, {20, 20}, 0.05);
  const auto cps = e_divisive(series);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 20u);
  EXPECT_LE(cps[0].p_value, 0.05);
  EXPECT_DOUBLE_EQ(cps[0].p_value, 1.0 / 200);
  EXPECT_GT(cps[0].statistic, 0);
}

TEST(EDivisive, FindsTwoStepsSortedByIndex) {
  const auto series = steps({1.0, 1.5, 0.8}, {20, 20, 20}, 0.05);
  const auto cps = e_divisive(series);
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].index, 20u);
  EXPECT_EQ(cps[1].index, 40u);
  for (const auto& cp : cps) EXPECT_LE(cp.p_value, 0.05);
  EDivisiveOptions one;
  one.max_change_points = 1;
  EXPECT_EQ(e_divisive(series, one).size(), 1u);
}

TEST(EDivisive, FlatAndConstantSeriesHaveNone) {
  // Any one flat series is flagged with probability `significance` (see FalsePositiveRate):
  // these are fixed series that are not.
  EXPECT_TRUE(e_divisive(steps({1.0}, {60}, 0.05)).empty());
  EXPECT_TRUE(e_divisive(steps({2.0}, {200}, 0.3, 6)).empty());
  EXPECT_TRUE(e_divisive(std::vector<double>(50, 3.0)).empty());
  EXPECT_TRUE(e_divisive({}).empty());
  EXPECT_TRUE(e_divisive({1.0, 5.0, 1.0}).empty());  // shorter than 2 · min_size
}

TEST(EDivisive, FindsARegressionThatWasLaterFixed) {
  // A pulse: fixing the right end at the segment's end (MongoDB) dilutes it below
  // significance; searching it (the paper) finds both ends. See Note [E-Divisive].
  const auto series = steps({1.0, 1.3, 1.0}, {15, 10, 15}, 0.1, 3);
  const auto cps = e_divisive(series);
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].index, 15u);
  EXPECT_EQ(cps[1].index, 25u);
}

TEST(EDivisive, FalsePositiveRateIsTheSignificance) {
  // 200 flat series of 30 values: about 10 should be flagged (binomial sd 3.1).
  int flagged = 0;
  for (std::uint64_t i = 0; i < 200; ++i) {
    EDivisiveOptions opt;
    opt.seed = 1000 + i;
    if (!e_divisive(steps({1.0}, {30}, 0.1, i), opt).empty()) ++flagged;
  }
  EXPECT_GE(flagged, 2);
  EXPECT_LE(flagged, 20);
}

TEST(EDivisive, DeterministicAndSeeded) {
  const auto series = steps({1.0, 1.3, 1.0, 1.1}, {15, 10, 15, 12}, 0.1, 3);
  const auto a = e_divisive(series), b = e_divisive(series);
  ASSERT_FALSE(a.empty());
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, b[i].index);
    EXPECT_EQ(a[i].statistic, b[i].statistic);
    EXPECT_EQ(a[i].p_value, b[i].p_value);
  }
  // The seed only drives the permutation test: clear change points do not depend on it.
  EDivisiveOptions other;
  other.seed = 12345;
  const auto c = e_divisive(series, other);
  ASSERT_EQ(c.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(c[i].index, a[i].index);
    EXPECT_EQ(c[i].statistic, a[i].statistic);
  }
}

TEST(EDivisive, RespectsMinSize) {
  auto series = steps({1.0}, {30}, 0.05);
  for (int i = 0; i < 3; ++i) series[i] = 5.0;
  auto cps = e_divisive(series);
  ASSERT_FALSE(cps.empty());
  EXPECT_EQ(cps[0].index, 3u);
  EDivisiveOptions opt;
  opt.min_size = 5;
  cps = e_divisive(series, opt);
  std::size_t previous = 0;
  for (const auto& cp : cps) {
    EXPECT_GE(cp.index - previous, 5u);
    previous = cp.index;
  }
  EXPECT_GE(series.size() - previous, 5u);
}

TEST(EDivisive, OtherAlphaFindsTheStep) {
  const auto series = steps({1.0, 1.5}, {20, 20}, 0.05);
  EDivisiveOptions opt;
  opt.alpha = 0.5;
  const auto cps = e_divisive(series, opt);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 20u);
}

TEST(EDivisive, DetectsAChangeInSpreadOnly) {
  // Same mean, different variance: the energy distance sees the distribution, not the mean.
  const auto series = steps({1.0, 1.0}, {40, 40}, 0.0);
  auto noisy = series;
  Rng rng(9);
  for (std::size_t i = 0; i < noisy.size(); ++i) {
    noisy[i] += (i < 40 ? 0.01 : 0.5) * (2 * rng.unit() - 1);
  }
  const auto cps = e_divisive(noisy);
  ASSERT_FALSE(cps.empty());
  EXPECT_NEAR(static_cast<double>(cps[0].index), 40, 3);
}

TEST(EDivisive, RejectsBadInput) {
  try {
    e_divisive({1.0, 2.0, kNaN, 3.0, 4.0});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("series[2]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(e_divisive({1.0, INFINITY, 2.0, 3.0}), std::invalid_argument);
  EDivisiveOptions opt;
  opt.min_size = 1;
  EXPECT_THROW(e_divisive({1.0, 2.0}, opt), std::invalid_argument);
  opt = {};
  opt.alpha = 2.5;
  EXPECT_THROW(e_divisive({1.0, 2.0}, opt), std::invalid_argument);
  opt = {};
  opt.permutations = 0;
  EXPECT_THROW(e_divisive({1.0, 2.0}, opt), std::invalid_argument);
}

}  // namespace
}  // namespace gauntlet::stats
