// Statistics for judging a candidate release against a baseline (no torch): robust summaries,
// the Mann-Whitney U test, bootstrap intervals of geometric means, noise bands from a case's
// history, and E-Divisive change points on history series. Every result is deterministic:
// randomness comes from Rng with a seed the caller passes (Note [Deterministic randomness]).
// Notes referred to here are in harness/analysis/stats.cpp.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gauntlet::stats {

// xoshiro256** seeded through splitmix64: the same stream on every platform and compiler.
class Rng final {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next();
  // Uniform in [0, bound), unbiased (Lemire's multiply-and-reject). Throws if bound is 0.
  std::uint64_t below(std::uint64_t bound);
  double unit();  // uniform in [0, 1), 53 random bits

 private:
  std::array<std::uint64_t, 4> s_;
};

// Order statistics. Empty input or any NaN → NaN. quantile interpolates linearly between order
// statistics (type 7, numpy's default); q outside [0, 1] throws std::invalid_argument.
double median(std::vector<double> v);
double quantile(std::vector<double> v, double q);

// exp(mean(log x)). The caller passes positive finite values (a 0 gives 0, a negative NaN);
// empty → NaN.
double geomean(const std::vector<double>& positive);

// The standard normal's inverse CDF; ±inf at 0 and 1, NaN outside [0, 1].
double normal_quantile(double p);

struct MannWhitney {
  double u = 0;        // pairs (a_i > b_j) plus half the ties: the statistic of `a`
  double p_value = 1;  // two-sided, "a and b come from the same distribution"
  bool exact = false;  // from the exact null distribution rather than the normal approximation
};
// Two-sided Mann-Whitney U test with scipy.stats.mannwhitneyu's formulas; exact for small
// untied samples and for perfectly separated ones, normal approximation (tie and continuity
// corrections) otherwise. Either sample empty → p = 1. Throws std::invalid_argument on NaN. See
// Note [Mann-Whitney p-values].
MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

// Hodges-Lehmann estimate of the shift a - b: the median of all pairwise differences
// (O(|a|·|b|) memory). Empty → NaN.
double hodges_lehmann_shift(const std::vector<double>& a, const std::vector<double>& b);

struct Interval {
  double estimate = NAN, lo = NAN, hi = NAN;
};
// Percentile-bootstrap interval of the geometric mean of positive finite ratios; estimate is the
// data's geomean. One ratio → lo = hi = estimate; none → all NaN. Above 20,000 ratios the
// interval comes from the normal approximation of the mean of logs instead of resampling
// (Note [Bootstrap of large samples]). Throws std::invalid_argument on a ratio that is not
// positive and finite, on resamples < 1, or on confidence outside (0, 1).
Interval bootstrap_geomean(const std::vector<double>& ratios, int resamples = 2000, double confidence = 0.95,
                           std::uint64_t seed = 0x5eed);

// A case's noise from its history of log ratios between consecutive releases: center = median,
// half_width = k · 1.4826 · MAD (k robust standard deviations). Fewer than 3 values →
// half_width = +inf (noise unknown: nothing is outside). A history with MAD 0 gives width 0;
// callers pair the band with a minimum effect size. Throws std::invalid_argument on a
// non-finite value or on k < 0.
struct NoiseBand {
  double center = 0;
  double half_width = INFINITY;
  int n = 0;  // history values the band is built from
};
NoiseBand noise_band(const std::vector<double>& log_ratios, double k = 3.0);
// |log_ratio - center| > half_width. False for NaN.
bool outside(const NoiseBand& band, double log_ratio);

// E-Divisive (Matteson & James 2014), see Note [E-Divisive].
struct EDivisiveOptions {
  double alpha = 1.0;          // distances |x - y|^alpha, alpha in (0, 2]
  std::size_t min_size = 2;    // shortest segment, >= 2
  double significance = 0.05;  // accept a change point when its p-value is <= this
  int permutations = 199;      // permutation-test resamples, >= 1
  std::uint64_t seed = 0xed1u;
  std::size_t max_change_points = 16;
};
struct ChangePoint {
  std::size_t index;  // first element of the new segment
  double statistic;   // the scaled energy statistic Q̂ of the split
  double p_value;     // (1 + #permutations whose statistic reaches Q̂) / (1 + permutations)
};
// Change points of `series`, sorted by index. Constant series → none. O(N²) per permutation,
// O(N) memory for alpha = 1. Throws std::invalid_argument on a non-finite value or invalid
// options.
std::vector<ChangePoint> e_divisive(const std::vector<double>& series, const EDivisiveOptions& options = {});

}  // namespace gauntlet::stats
