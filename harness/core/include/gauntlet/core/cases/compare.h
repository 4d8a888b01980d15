// Comparison of an output with its golden: tolerance checks and error metrics over plain arrays
// of doubles (no torch). See docs/tolerances.md.
#pragma once

#include <cstdint>
#include <string>

#include "gauntlet/base/dtype.h"
#include "gauntlet/base/outcome.h"

namespace gauntlet {

struct Tolerance {
  double rtol = 0, atol = 0;
  std::string source = "default";  // which rule chose it
};

// The default per-dtype tolerance table (torch.testing.assert_close's defaults); integers and
// bool are exact.
Tolerance default_tolerance(DType d);

// One output, flattened in row-major order. `golden_cast` is the fp64 golden rounded to `dtype`
// (what the op should have produced in that dtype); `golden` keeps the fp64 value.
struct OutputView {
  std::string name;  // "out0", "grad.self"
  const double* actual = nullptr;
  const double* golden = nullptr;
  const double* golden_cast = nullptr;
  std::int64_t n = 0;
  DType dtype = DType::F32;
};

// One floating output as the device produced it, its elements left in `dtype` (F32: float, F64:
// double, BF16 and F16: their 16-bit patterns), beside the fp64 golden. The golden rounded to
// `dtype` is derived element by element (round_to), as `golden.to(dtype)` rounds it. Compared
// exactly as the OutputView of the same values (same metrics to the bit, same worst element),
// without three arrays of doubles made first. Note [Typed comparison] in compare.cpp.
struct TypedOutputView {
  std::string name;
  const void* actual = nullptr;
  const double* golden = nullptr;
  std::int64_t n = 0;
  DType dtype = DType::F32;  // F32, F64, BF16 or F16
};

// Accumulates the comparison of every output of a case. Element i mismatches when
//   |actual - golden_cast| > atol + rtol * |golden_cast|,
// or when actual and golden disagree on NaN / +Inf / -Inf (a NaN in both places matches).
// Error metrics use the fp64 golden; the ULP distance is measured in `dtype`. The worst element
// is the one furthest outside (or closest to the edge of) its tolerance.
class Comparison {
 public:
  void add(const OutputView& out, const Tolerance& tol);
  void add(const TypedOutputView& out, const Tolerance& tol);
  const Metrics& metrics() const { return m_; }

 private:
  template <class Elem>
  void add_typed(const TypedOutputView& out, const Tolerance& tol);

  Metrics m_;
  double worst_score_ = -1;
};

// Distance in units in the last place between two values of `d` (both rounded to `d`);
// 0 for equal values (including +0/-0), +inf when exactly one is NaN.
double ulp_distance(double a, double b, DType d);
// `v` rounded to the nearest representable value of `d` (ties to even), as torch casts.
double round_to(double v, DType d);

}  // namespace gauntlet
