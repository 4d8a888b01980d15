#include "gauntlet/analysis/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>
#include <vector>

namespace gauntlet::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool any_nan(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); });
}

double normal_sf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

}  // namespace

// Note [Deterministic randomness]
// std::*_distribution are implementation-defined (libstdc++ and libc++ draw differently), so a
// verdict could change with the toolchain. We use xoshiro256** (Blackman & Vigna) seeded by
// four splitmix64 outputs, as its authors recommend, and draw bounded integers with Lemire's
// multiply-and-reject ("Fast random integer generation in an interval", 2019): the high word of
// x·bound is uniform once the few low words below 2^64 mod bound are rejected.

namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

__extension__ using U128 = unsigned __int128;

}  // namespace

Rng::Rng(std::uint64_t seed) {
  for (auto& word : s_) word = splitmix64(seed);
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t Rng::below(std::uint64_t bound) {
  if (bound == 0) throw std::invalid_argument("Rng::below: bound must be positive");
  U128 m = static_cast<U128>(next()) * bound;
  auto low = static_cast<std::uint64_t>(m);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
    while (low < threshold) {
      m = static_cast<U128>(next()) * bound;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double Rng::unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

// ---- Order statistics ----

double quantile(std::vector<double> v, double q) {
  if (!(q >= 0 && q <= 1)) {
    throw std::invalid_argument(fmt::format("quantile: q must be in [0, 1], got {}", q));
  }
  if (v.empty() || any_nan(v)) return kNaN;
  const double h = static_cast<double>(v.size() - 1) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const auto it = v.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(v.begin(), it, v.end());
  const double x0 = *it;
  if (lo + 1 >= v.size()) return x0;
  const double x1 = *std::min_element(it + 1, v.end());
  if (x0 == x1) return x0;  // no interpolation (and no inf - inf between equal infinities)
  // numpy's lerp: measured from the nearer end, so q = 1 lands exactly on the maximum.
  const double t = h - static_cast<double>(lo);
  const double d = x1 - x0;
  return t < 0.5 ? x0 + d * t : x1 - d * (1 - t);
}

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

double geomean(const std::vector<double>& positive) {
  if (positive.empty()) return kNaN;
  double sum = 0;
  for (double x : positive) sum += std::log(x);
  return std::exp(sum / static_cast<double>(positive.size()));
}

double normal_quantile(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  // Acklam's rational approximation (relative error 1.2e-9), then one Halley step on erfc
  // brings it to full double precision.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  constexpr double p_low = 0.02425;
  double x;
  if (p < p_low || p > 1 - p_low) {
    const double q = std::sqrt(-2 * std::log(p < p_low ? p : 1 - p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    if (p > 1 - p_low) x = -x;
  } else {
    const double q = p - 0.5;
    const double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  constexpr double kSqrt2Pi = 2.50662827463100050242;
  const double u = e * kSqrt2Pi * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

// ---- Mann-Whitney U ----

// Note [Mann-Whitney p-values]
// U counts the pairs with a_i > b_j, ties counting one half (from midranks). The two-sided
// p-value follows scipy.stats.mannwhitneyu:
//   * exact: 2·P(U >= max(U, n_a·n_b - U)) under the null, clipped to 1, from the exact
//     distribution of U. We take it whenever there are no ties and n_a·n_b <= 2500, a wider
//     region than scipy's method="auto" (exact only when a sample has <= 8 values): where the
//     exact distribution is affordable it is never worse than an approximation. The
//     distribution comes from the recurrence on the largest pooled value, which belongs to a
//     with probability n_a/(n_a+n_b) and then beats all n_b values of b:
//       P[n_a, n_b](u) = n_a/(n_a+n_b)·P[n_a-1, n_b](u - n_b) + n_b/(n_a+n_b)·P[n_a, n_b-1](u),
//     kept as probabilities (only additions of positive terms, no C(100, 50) overflow);
//     O(n_a²·n_b²/4) additions, about 1.6M at the 2500 cap.
//   * otherwise the normal approximation: z = (max(U, n_a·n_b - U) - n_a·n_b/2 - 0.5) / σ with
//     σ² = n_a·n_b/12 · ((n+1) - Σ(t³-t)/(n(n-1))) over tie groups of size t; p = 2·sf(z),
//     clipped to 1.
// Two special cases:
//   * every pooled value equal: σ = 0 and U = n_a·n_b/2 exactly; nothing separates the
//     samples, p = 1 (scipy gets the same from -0.5/0 = -inf).
//   * perfect separation (every a above every b, or below), ties or not: p = 2/C(n_a+n_b, n_a),
//     the exact p-value the untied test gives to any perfectly separated sample. This is what
//     timer-quantized samples such as a = {2,2,2,2,2}, b = {1,1,1,1,1} need: their tie groups
//     leave σ > 0 (σ² = (n_a·n_b)²/(4(n-1))) but the normal tail (p = 0.0040 here) claims more
//     than a permutation test can (0.0079 = 2/252). Under the permutation null given the ties,
//     the observed split is the only one as extreme on its side (probability 1/C(n, n_a)); the
//     mirrored extreme may be less extreme when a tie group straddles it, so 2/C(n, n_a) is
//     exact or conservative.

namespace {

constexpr double kExactMaxPairs = 2500;

// P(U >= u) for untied samples of sizes m and n (the distribution is symmetric in m, n).
double mann_whitney_exact_sf(double u, std::size_t m, std::size_t n) {
  if (n > m) std::swap(m, n);  // the inner dimension is the smaller sample: less memory
  // prev[j] = distribution for (i-1, j); cur[j] for (i, j); U in 0..i·j.
  std::vector<std::vector<double>> prev(n + 1, std::vector<double>{1.0}), cur(n + 1);
  for (std::size_t i = 1; i <= m; ++i) {
    cur[0].assign(1, 1.0);
    for (std::size_t j = 1; j <= n; ++j) {
      auto& f = cur[j];
      f.assign(i * j + 1, 0.0);
      const double pa = static_cast<double>(i) / static_cast<double>(i + j);
      const double pb = 1 - pa;
      const auto& from_a = prev[j];     // sizes (i-1, j): the largest value is an a, U += j
      const auto& from_b = cur[j - 1];  // sizes (i, j-1): the largest value is a b
      for (std::size_t k = 0; k < from_a.size(); ++k) f[k + j] += pa * from_a[k];
      for (std::size_t k = 0; k < from_b.size(); ++k) f[k] += pb * from_b[k];
    }
    std::swap(prev, cur);
  }
  const auto& f = prev[n];
  const auto first = static_cast<std::size_t>(std::max(0.0, std::ceil(u)));
  double tail = 0;
  for (std::size_t k = f.size(); k-- > first;) tail += f[k];  // smallest terms first
  return tail;
}

double binomial(std::size_t n, std::size_t k) {
  k = std::min(k, n - k);
  double c = 1;
  for (std::size_t i = 1; i <= k; ++i) {
    c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
  }
  return c;
}

}  // namespace

MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  if (any_nan(a) || any_nan(b)) {
    throw std::invalid_argument("mann_whitney_u: samples must not contain NaN");
  }
  MannWhitney r;
  if (a.empty() || b.empty()) return r;
  const std::size_t na = a.size(), nb = b.size(), n = na + nb;

  std::vector<std::pair<double, bool>> pooled;  // (value, from a)
  pooled.reserve(n);
  for (double x : a) pooled.emplace_back(x, true);
  for (double x : b) pooled.emplace_back(x, false);
  std::sort(pooled.begin(), pooled.end());
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double midrank = static_cast<double>(i + 1 + j) / 2;  // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].second) rank_sum_a += midrank;
    }
    const auto t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  const auto dna = static_cast<double>(na), dnb = static_cast<double>(nb);
  const auto dn = static_cast<double>(n);
  r.u = rank_sum_a - dna * (dna + 1) / 2;
  const double pairs = dna * dnb;
  const double u_far = std::max(r.u, pairs - r.u);

  if (tie_term == 0 && pairs <= kExactMaxPairs) {
    r.exact = true;
    r.p_value = std::min(1.0, 2 * mann_whitney_exact_sf(u_far, na, nb));
    return r;
  }
  const auto [a_min, a_max] = std::minmax_element(a.begin(), a.end());
  const auto [b_min, b_max] = std::minmax_element(b.begin(), b.end());
  if (*a_max < *b_min || *b_max < *a_min) {
    r.exact = true;
    r.p_value = std::min(1.0, 2 / binomial(n, na));
    return r;
  }
  const double variance = pairs / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (!(variance > 0)) return r;  // every value equal: p = 1
  const double z = (u_far - pairs / 2 - 0.5) / std::sqrt(variance);
  r.p_value = std::min(1.0, 2 * normal_sf(z));
  return r;
}

double hodges_lehmann_shift(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> diffs;
  diffs.reserve(a.size() * b.size());
  for (double x : a) {
    for (double y : b) diffs.push_back(x - y);
  }
  return median(std::move(diffs));
}

// ---- Bootstrap ----

// Note [Bootstrap of large samples]
// The percentile bootstrap draws `resamples` samples of n indices with replacement and takes
// quantiles of their mean logs: resamples·n draws, about 2.5 ns each. A suite of 1e6 cases
// would need 2e9 draws (seconds); but at that size the bootstrap distribution of the mean of
// logs is normal to far better precision than the bootstrap's own Monte Carlo noise (its
// skewness shrinks as 1/√n), so above kBootstrapMaxResampled = 20,000 ratios the interval is
// mean ± z·sd/√n with sd the plug-in (divide-by-n) standard deviation of the logs: the
// standard deviation of the bootstrap distribution the resampling would have estimated.
// `resamples` and `seed` do not matter there. At 20,000 ratios and 2000 resamples resampling
// costs about 0.1 s.

namespace {
constexpr std::size_t kBootstrapMaxResampled = 20000;
}  // namespace

Interval bootstrap_geomean(const std::vector<double>& ratios, int resamples, double confidence, std::uint64_t seed) {
  if (resamples < 1) {
    throw std::invalid_argument(fmt::format("bootstrap_geomean: resamples must be >= 1, got {}", resamples));
  }
  if (!(confidence > 0 && confidence < 1)) {
    throw std::invalid_argument(fmt::format("bootstrap_geomean: confidence must be in (0, 1), got {}", confidence));
  }
  Interval r;
  if (ratios.empty()) return r;
  const std::size_t n = ratios.size();
  std::vector<double> logs(n);
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!(ratios[i] > 0) || !std::isfinite(ratios[i])) {
      throw std::invalid_argument(
          fmt::format("bootstrap_geomean: ratio {} is {}; ratios must be positive and finite", i, ratios[i]));
    }
    logs[i] = std::log(ratios[i]);
    sum += logs[i];
  }
  const auto dn = static_cast<double>(n);
  const double mean = sum / dn;
  r.estimate = std::exp(mean);
  if (n == 1) {
    r.lo = r.hi = r.estimate;
    return r;
  }
  const double tail = (1 - confidence) / 2;
  if (n > kBootstrapMaxResampled) {
    double ss = 0;
    for (double l : logs) ss += (l - mean) * (l - mean);
    const double se = std::sqrt(ss / dn) / std::sqrt(dn);
    const double z = normal_quantile(1 - tail);
    r.lo = std::exp(mean - z * se);
    r.hi = std::exp(mean + z * se);
    return r;
  }
  Rng rng(seed);
  std::vector<double> means(static_cast<std::size_t>(resamples));
  for (double& m : means) {
    double s = 0;
    for (std::size_t k = 0; k < n; ++k) s += logs[rng.below(n)];
    m = s / dn;
  }
  r.lo = std::exp(quantile(means, tail));
  r.hi = std::exp(quantile(std::move(means), 1 - tail));
  return r;
}

// ---- Noise band ----

NoiseBand noise_band(const std::vector<double>& log_ratios, double k) {
  if (!(k >= 0)) throw std::invalid_argument(fmt::format("noise_band: k must be >= 0, got {}", k));
  for (double x : log_ratios) {
    if (!std::isfinite(x)) {
      throw std::invalid_argument(fmt::format("noise_band: log ratio {} is not finite", x));
    }
  }
  NoiseBand band;
  band.n = static_cast<int>(log_ratios.size());
  if (log_ratios.empty()) return band;
  band.center = median(log_ratios);
  if (log_ratios.size() < 3) return band;
  std::vector<double> deviations;
  deviations.reserve(log_ratios.size());
  for (double x : log_ratios) deviations.push_back(std::abs(x - band.center));
  // 1.4826 = 1/Φ⁻¹(3/4): the MAD of a normal sample estimates 0.6745 σ.
  band.half_width = k * 1.4826 * median(std::move(deviations));
  return band;
}

bool outside(const NoiseBand& band, double log_ratio) { return std::abs(log_ratio - band.center) > band.half_width; }

// ---- E-Divisive ----

// Note [E-Divisive]
// Matteson & James, "A Nonparametric Approach for Multiple Change Point Analysis of
// Multivariate Data" (JASA 2014); MongoDB's signal-processing-algorithms runs it on perf CI
// history. Within a segment [s, e), a candidate change at τ compares X = [s, τ) (m values)
// with Y = [τ, κ) (n values), for some right end κ <= e:
//   Ê = 2/(mn)·Σ|x-y|^α - C(m,2)⁻¹·Σ_{i<k}|x_i-x_k|^α - C(n,2)⁻¹·Σ_{j<k}|y_j-y_k|^α,
//   Q̂ = mn/(m+n)·Ê,
// the energy distance between the two sides, scaled so that lengths compare; τ̂ maximizes Q̂
// over τ and κ (both sides at least min_size long) and over all current segments.
// Why search κ: MongoDB fixes κ = e. Then a regression fixed a few releases later (a pulse)
// is diluted: the right side is a mixture holding a share w of the pulse, which shrinks the
// energy distance by w². On 15 + 10 + 15 values with a 5σ pulse, κ = e gives the best split
// p = 0.09 and finds nothing; searching κ finds both ends at p = 0.005 (test
// FindsARegressionThatWasLaterFixed).
// Significance: shuffle within every current segment, recompute the largest Q̂ over all
// segments; p = (#{Q̂_perm >= Q̂} + 1)/(R + 1). Accept when p <= significance, split the
// segment at τ̂ (κ̂ only localizes), repeat. Stop at the first rejection, at
// max_change_points, or when no split has Q̂ > 0 (a constant segment has Q̂ = 0 exactly).
// Cost: for a segment of length L, let W(i, j) be the sum of distances within [i, j). Growing
// the right end κ by one adds the new value's distances to every W(t, κ) (a running sum from
// κ down), and W(s, κ) recorded along the way gives the left sides. With m + n = κ - s and
// cross = W(s, κ) - W(s, τ) - W(τ, κ),
//   Q̂ = 2/(m+n)·[W(s, κ) - (m+n-1)·(W(s, τ)/(m-1) + W(τ, κ)/(n-1))],
// so each (τ, κ) costs one multiply-add and a scan is O(L²) time, O(L) memory; a permutation
// costs O(Σ L²) <= O(N²). The test stops once its p-value can no longer reach `significance`:
// that skips work and changes no result. Distances are computed from the (shuffled) values
// when alpha = 1 (|x - y| is as cheap as a lookup and needs no N² memory), looked up in a
// table built once for other alphas up to N = 2048 (32 MiB), and computed with pow beyond.

namespace {

struct Split {
  double q = -kInf;
  std::size_t tau = 0;
};

struct Scan {
  std::vector<double> inv;         // inv[k] = 1/k
  std::vector<double> left_term;   // left_term[m] = W(s, s+m)/(m-1)
  std::vector<double> right_sums;  // right_sums[t] = W(s+t, κ) for the current κ
};

// The best change point in [s, e) with dist(p, q) between positions p and q.
template <class Dist>
Split best_split(const Dist& dist, std::size_t s, std::size_t e, std::size_t min_size, Scan& scan) {
  Split best;
  const std::size_t len = e - s;
  if (len < 2 * min_size) return best;
  const double* inv = scan.inv.data();
  scan.left_term.assign(len + 1, 0.0);
  scan.right_sums.assign(len + 1, 0.0);
  double* left_term = scan.left_term.data();
  double* right = scan.right_sums.data();
  // k = κ - s: the right side ends before position s + k.
  for (std::size_t k = 2; k <= len; ++k) {
    const std::size_t newest = s + k - 1;
    double acc = 0;  // W(t, k) = W(t, k-1) + Σ_{t<=p<k-1} d(p, newest)
    for (std::size_t t = k - 1; t-- > 0;) {
      acc += dist(s + t, newest);
      right[t] += acc;
    }
    left_term[k] = right[0] * inv[k - 1];
    if (k < 2 * min_size) continue;
    // Q̂ = 2/k·[W(s, κ) - (k-1)·g(τ)] with g(τ) = W(s, τ)/(m-1) + W(τ, κ)/(n-1).
    double g_min = kInf;
    std::size_t arg = 0;
    for (std::size_t m = min_size; m + min_size <= k; ++m) {
      const double g = left_term[m] + right[m] * inv[k - m - 1];
      if (g < g_min) {
        g_min = g;
        arg = m;
      }
    }
    const double q = 2 * inv[k] * (right[0] - static_cast<double>(k - 1) * g_min);
    if (q > best.q) best = {q, s + arg};
  }
  return best;
}

template <class Dist>
Split best_over_segments(const Dist& dist, const std::vector<std::size_t>& bounds, std::size_t min_size, Scan& scan) {
  Split best;
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    const Split split = best_split(dist, bounds[i], bounds[i + 1], min_size, scan);
    if (split.q > best.q) best = split;
  }
  return best;
}

// `order[p]` is the series index at position p; `values[p]` its value. The permutation test
// shuffles both; `dist` reads one of them.
template <class Dist>
std::vector<ChangePoint> run_e_divisive(const std::vector<double>& series, const EDivisiveOptions& opt,
                                        const Dist& dist, std::vector<std::size_t>& order,
                                        std::vector<double>& values) {
  const std::size_t n = series.size();
  std::vector<ChangePoint> found;
  std::vector<std::size_t> bounds = {0, n};
  Scan scan;
  scan.inv.assign(n + 1, 0.0);
  for (std::size_t k = 1; k <= n; ++k) scan.inv[k] = 1 / static_cast<double>(k);
  Rng rng(opt.seed);
  const auto identity = [&] {
    std::iota(order.begin(), order.end(), std::size_t{0});
    values = series;
  };
  while (found.size() < opt.max_change_points) {
    identity();
    const Split best = best_over_segments(dist, bounds, opt.min_size, scan);
    if (!(best.q > 0)) break;
    // A permutation that reproduces the observed statistic may compute it in another order:
    // allow for rounding.
    const double threshold = best.q * (1 - 1e-12);
    int reached = 0;
    double p_value = 1;
    for (int r = 0; r < opt.permutations; ++r) {
      identity();
      for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
        const std::size_t s = bounds[i], len = bounds[i + 1] - s;
        if (len < 2 * opt.min_size) continue;        // no split: its order does not matter
        for (std::size_t k = len - 1; k > 0; --k) {  // Fisher-Yates
          const auto j = static_cast<std::size_t>(rng.below(k + 1));
          std::swap(order[s + k], order[s + j]);
          std::swap(values[s + k], values[s + j]);
        }
      }
      if (best_over_segments(dist, bounds, opt.min_size, scan).q >= threshold) {
        ++reached;
      }
      p_value = (reached + 1) / (opt.permutations + 1.0);
      if (p_value > opt.significance) break;  // can only grow: rejected
    }
    if (p_value > opt.significance) break;
    found.push_back({best.tau, best.q, p_value});
    bounds.insert(std::upper_bound(bounds.begin(), bounds.end(), best.tau), best.tau);
  }
  std::sort(found.begin(), found.end(), [](const ChangePoint& x, const ChangePoint& y) { return x.index < y.index; });
  return found;
}

}  // namespace

std::vector<ChangePoint> e_divisive(const std::vector<double>& series, const EDivisiveOptions& options) {
  if (!(options.alpha > 0 && options.alpha <= 2)) {
    throw std::invalid_argument(fmt::format("e_divisive: alpha must be in (0, 2], got {}", options.alpha));
  }
  if (options.min_size < 2) {
    throw std::invalid_argument(fmt::format("e_divisive: min_size must be >= 2, got {}", options.min_size));
  }
  if (!(options.significance > 0 && options.significance <= 1)) {
    throw std::invalid_argument(
        fmt::format("e_divisive: significance must be in (0, 1], got {}", options.significance));
  }
  if (options.permutations < 1) {
    throw std::invalid_argument(fmt::format("e_divisive: permutations must be >= 1, got {}", options.permutations));
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (!std::isfinite(series[i])) {
      throw std::invalid_argument(fmt::format(
          "e_divisive: series[{}] is {}; the series must be finite (drop missing values first)", i, series[i]));
    }
  }
  const std::size_t n = series.size();
  if (n < 2 * options.min_size || options.max_change_points == 0) return {};
  std::vector<std::size_t> order(n);
  std::vector<double> values(series);
  const double alpha = options.alpha;
  if (alpha == 1) {
    const auto dist = [&](std::size_t p, std::size_t q) { return std::abs(values[p] - values[q]); };
    return run_e_divisive(series, options, dist, order, values);
  }
  constexpr std::size_t kMaxTable = 2048;
  if (n > kMaxTable) {
    const auto dist = [&](std::size_t p, std::size_t q) { return std::pow(std::abs(values[p] - values[q]), alpha); };
    return run_e_divisive(series, options, dist, order, values);
  }
  std::vector<double> table(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      table[i * n + j] = table[j * n + i] = std::pow(std::abs(series[i] - series[j]), alpha);
    }
  }
  const auto dist = [&](std::size_t p, std::size_t q) { return table[order[p] * n + order[q]]; };
  return run_e_divisive(series, options, dist, order, values);
}

}  // namespace gauntlet::stats
