// The op table: every op is callable, described, and has a valid smoke case.
#include <gtest/gtest.h>

#include <map>

#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/suites/op_impl.h"

namespace gauntlet {
namespace {

TEST(OpTable, EveryOpIsDescribedAndCallable) {
  auto ops = all_ops();
  EXPECT_GE(ops.size(), 120u);
  std::size_t with_bwd = 0;
  std::string prev;
  for (const OpSpec* op : ops) {
    SCOPED_TRACE(op->name);
    EXPECT_LT(prev, op->name);  // sorted by name, unique
    prev = op->name;
    EXPECT_FALSE(op->name.empty());
    EXPECT_FALSE(op->aten.empty());
    // aten ops, and torchvision's detection ops (nms, roi_align) from its op library
    EXPECT_TRUE(op->aten.rfind("aten::", 0) == 0u || op->aten.rfind("torchvision::", 0) == 0u) << op->aten;
    EXPECT_FALSE(op->family.empty());
    EXPECT_FALSE(op->inputs.empty());
    EXPECT_GE(op->min_inputs(), 1u);
    EXPECT_NE(op->dtypes, 0u);
    EXPECT_EQ(op->dtypes & ~kAllTypes, 0u);
    const OpDef* def = find_op_def(op->name);
    ASSERT_NE(def, nullptr);
    EXPECT_EQ(&def->spec, op);
    EXPECT_TRUE(static_cast<bool>(def->fn));
    EXPECT_EQ(find_op(op->name), op);
    for (const auto& a : op->args) EXPECT_FALSE(a.name.empty());
    with_bwd += op->has_backward;
  }
  EXPECT_GE(with_bwd, 25u);
  EXPECT_EQ(find_op("no_such_op"), nullptr);
  EXPECT_EQ(find_op_def("no_such_op"), nullptr);
}

// Every op's arg defaults are valid values: a key naming every arg at its default validates.
TEST(OpTable, ArgDefaultsValidate) {
  Suite smoke = load_suite("smoke", std::string(GAUNTLET_SOURCE_DIR) + "/suites/yaml");
  std::map<std::string, const Case*> first;
  for (const auto& c : smoke.cases) first.emplace(c.key.target, &c);
  for (const OpSpec* op : all_ops()) {
    SCOPED_TRACE(op->name);
    auto it = first.find(op->name);
    ASSERT_NE(it, first.end()) << "no smoke case";
    CaseKey k = it->second->key;
    EXPECT_EQ(validate_key(k), std::nullopt);
    k.args.clear();
    for (const auto& a : op->args) k.args[a.name] = a.default_value;
    EXPECT_EQ(validate_key(k), std::nullopt) << k.str();
    // And the text form of that key parses back.
    EXPECT_EQ(CaseKey::parse(k.str()).str(), k.str());
  }
}

TEST(OpTable, ValidateKeyRejects) {
  auto problem = [](const char* key) { return validate_key(CaseKey::parse(key)).value_or(""); };
  EXPECT_NE(problem("op/nope/f32/8/contig/eager").find("unknown op"), std::string::npos);
  EXPECT_NE(problem("op/mm/f16/4x4,4x4/contig/eager").find("does not support dtype f16"), std::string::npos);
  EXPECT_NE(problem("op/add/f32/8/contig/eager").find("tensor inputs"), std::string::npos);
  EXPECT_NE(problem("op/mm/f32/4,4/contig/eager").find("rank"), std::string::npos);
  EXPECT_NE(problem("op/add/f32/8,8/contig/eager/beta=1").find("no argument 'beta'"), std::string::npos);
  EXPECT_NE(problem("op/add/f32/8,8/contig/eager/alpha=x").find("expects a number"), std::string::npos);
  EXPECT_NE(problem("op/exp/f32/8/t/eager").find("layout t"), std::string::npos);
  EXPECT_NE(problem("op/exp/f32/_/step2/eager").find("layout step2"), std::string::npos);
  EXPECT_NE(problem("op/exp/f32/8x8/cl/eager").find("layout cl"), std::string::npos);
  EXPECT_NE(problem("op/copysign/f32/8,8/contig/eager-bwd").find("no backward"), std::string::npos);
  EXPECT_NE(problem("op/add/i32/8,8/contig/eager-bwd").find("no backward"), std::string::npos);
  EXPECT_NE(problem("op/logit/f32/8/contig/eager/values=special").find("values=special needs"), std::string::npos);
  EXPECT_EQ(problem("op/exp/f32/8/contig/eager/values=special"), "");
  EXPECT_NE(problem("op/abs/i32/8/contig/eager/values=special").find("values=special needs"), std::string::npos);
  // Keys whose golden the CPU cannot compute (libtorch 1.13 raises): clamp.Tensor's backward where
  // self broadcast with min or with max falls short of the output's shape; a non-constant pad of
  // a length the input's rank cannot take.
  EXPECT_NE(
      problem("op/clamp_tensor/f32/7x1x5,1x3x5,5/contig/eager-bwd").find("has no backward for inputs 7x1x5,1x3x5,5"),
      std::string::npos);
  EXPECT_NE(problem("op/clamp_tensor/f32/5,5,3x5/contig/eager-bwd").find("no backward"), std::string::npos);
  EXPECT_EQ(problem("op/clamp_tensor/f32/7x1x5,1x3x5,5/contig/eager"), "");
  EXPECT_EQ(problem("op/clamp_tensor/f32/17x31,31,17x1/contig/eager-bwd"), "");
  EXPECT_EQ(problem("op/clamp_tensor/f32/3x5,3x1,1x5/contig/eager-bwd"), "");
  EXPECT_NE(problem("op/pad_reflect/f32/2x3x8x8/contig/eager").find("pad=1:1 (the default) of op pad_reflect"),
            std::string::npos);
  EXPECT_NE(problem("op/pad_reflect/f32/2x3x8x8/contig/eager").find("needs rank 2 or 3, not 4"), std::string::npos);
  EXPECT_NE(problem("op/pad_circular/f32/8/contig/eager/pad=1:1").find("needs rank 2 or 3, not 1"), std::string::npos);
  EXPECT_NE(problem("op/pad_replicate/f32/2x3x8/contig/eager/pad=1:1:1").find("has 3 values: it takes 2, 4 or 6"),
            std::string::npos);
  EXPECT_EQ(problem("op/pad_reflect/f32/2x3x8x8/contig/eager/pad=1:1:1:1"), "");
  EXPECT_EQ(problem("op/pad_constant/f32/2x3x8x8/contig/eager/pad=2:1"), "");
}

// Note [Exempt ops]: views, copies and factories real models run are exempt, with a reason, in
// any overload and in-place form; ops of the table and other namespaces' ops never are.
TEST(OpTable, ExemptOps) {
  for (const char* op : {"aten::view", "aten::slice.Tensor", "aten::select.int", "aten::to.dtype", "aten::to.device",
                         "aten::copy_", "aten::fill_.Scalar", "aten::zero_", "aten::dropout", "aten::dropout_",
                         "aten::item", "aten::empty.memory_format", "aten::contiguous", "aten::t", "aten::detach"}) {
    const OpExemption* e = find_op_exemption(op);
    ASSERT_NE(e, nullptr) << op;
    EXPECT_NE(std::string(e->kind), "") << op;
    EXPECT_GT(std::string(e->reason).size(), 10u) << op;
  }
  for (const char* op : {"aten::add.Tensor", "aten::_convolution", "aten::index.Tensor", "torchvision::nms",
                         "aten::arange.start", "aten::lstm.input", "aten::__and__.Tensor"}) {
    EXPECT_EQ(find_op_exemption(op), nullptr) << op;
  }
  // An exempt op is not also a table op.
  for (const OpExemption& e : op_exemptions()) {
    EXPECT_EQ(find_op(e.name), nullptr) << e.name;
    for (const OpSpec* op : all_ops())
      EXPECT_NE(op->aten.substr(0, op->aten.find('.')), std::string("aten::") + e.name) << e.name;
  }
}

TEST(OpTable, ToScalarType) {
  EXPECT_EQ(to_scalar_type(DType::F64), at::kDouble);
  EXPECT_EQ(to_scalar_type(DType::F32), at::kFloat);
  EXPECT_EQ(to_scalar_type(DType::F16), at::kHalf);
  EXPECT_EQ(to_scalar_type(DType::BF16), at::kBFloat16);
  EXPECT_EQ(to_scalar_type(DType::I64), at::kLong);
  EXPECT_EQ(to_scalar_type(DType::I32), at::kInt);
  EXPECT_EQ(to_scalar_type(DType::I16), at::kShort);
  EXPECT_EQ(to_scalar_type(DType::I8), at::kChar);
  EXPECT_EQ(to_scalar_type(DType::U8), at::kByte);
  EXPECT_EQ(to_scalar_type(DType::Bool), at::kBool);
}

}  // namespace
}  // namespace gauntlet
