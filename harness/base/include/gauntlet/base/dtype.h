// Note [DType names]: the dtypes a case can name, with the short spellings used in case keys
// and suite files. Kept free of torch headers; golden/ and the runner map them to at::ScalarType.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet {

enum class DType : std::uint8_t { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool };

inline constexpr DType kAllDTypes[] = {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64,
                                       DType::I32, DType::I16, DType::I8,  DType::U8,   DType::Bool};

std::string_view dtype_name(DType d);                  // "bf16"
std::optional<DType> parse_dtype(std::string_view s);  // "bf16" -> BF16, else nullopt
bool is_floating(DType d);
bool is_integral(DType d);  // integers, not bool
// The set of dtypes an op supports, as a bit mask.
using DTypeSet = std::uint32_t;
constexpr DTypeSet dtype_bit(DType d) { return DTypeSet{1} << static_cast<unsigned>(d); }
inline bool contains(DTypeSet s, DType d) { return (s & dtype_bit(d)) != 0; }
constexpr DTypeSet kFloatDTypes =
    dtype_bit(DType::F64) | dtype_bit(DType::F32) | dtype_bit(DType::F16) | dtype_bit(DType::BF16);
constexpr DTypeSet kIntDTypes =
    dtype_bit(DType::I64) | dtype_bit(DType::I32) | dtype_bit(DType::I16) | dtype_bit(DType::I8) | dtype_bit(DType::U8);
constexpr DTypeSet kBoolDType = dtype_bit(DType::Bool);
constexpr DTypeSet kAllTypes = kFloatDTypes | kIntDTypes | kBoolDType;
std::vector<DType> dtypes_of(DTypeSet s);
std::string dtype_set_str(DTypeSet s);  // "f64,f32,bf16"

}  // namespace gauntlet
