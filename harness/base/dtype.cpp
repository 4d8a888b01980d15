#include "gauntlet/base/dtype.h"

namespace gauntlet {

namespace {
constexpr std::string_view kNames[] = {"f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u8", "bool"};
}

std::string_view dtype_name(DType d) { return kNames[static_cast<unsigned>(d)]; }

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType d : kAllDTypes) {
    if (dtype_name(d) == s) return d;
  }
  return std::nullopt;
}

bool is_floating(DType d) { return contains(kFloatDTypes, d); }
bool is_integral(DType d) { return contains(kIntDTypes, d); }

std::vector<DType> dtypes_of(DTypeSet s) {
  std::vector<DType> out;
  for (DType d : kAllDTypes) {
    if (contains(s, d)) out.push_back(d);
  }
  return out;
}

std::string dtype_set_str(DTypeSet s) {
  std::string out;
  for (DType d : dtypes_of(s)) {
    if (!out.empty()) out += ',';
    out += dtype_name(d);
  }
  return out;
}

}  // namespace gauntlet
