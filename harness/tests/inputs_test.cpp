// Deterministic inputs: same key, same values; domains respected; layouts keep values.
#include "gauntlet/golden/inputs.h"

#include <gtest/gtest.h>

#include <set>

#include "gauntlet/suites/op_impl.h"

namespace gauntlet {
namespace {

std::vector<at::Tensor> inputs_of(const std::string& key) {
  CaseKey k = CaseKey::parse(key);
  const OpSpec* spec = find_op(k.target);
  EXPECT_NE(spec, nullptr) << key;
  EXPECT_EQ(validate_key(k), std::nullopt) << key;
  return make_inputs(k, *spec);
}

TEST(Inputs, Deterministic) {
  for (const char* key : {"op/add/f32/8x8,8x8/contig/eager", "op/exp/bf16/17x31/contig/eager",
                          "op/scatter/f32/17x31,5x31,5x31/contig/eager", "op/where/i32/4x4,4x4,4x4/contig/eager"}) {
    SCOPED_TRACE(key);
    auto a = inputs_of(key), b = inputs_of(key);
    EXPECT_EQ(fingerprint(a), fingerprint(b));
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i]));
  }
}

// Note [Inputs drawn in their dtype]: a floating input is the cast of the doubles drawn for it, as
// inputs were made before they were written in their dtype (values are part of every stored
// case's identity: goldens, fingerprints, stored results). The doubles are drawn here as the
// contract says: SplitMix64 seeded with the key's id ^ (salt * (input index + 1)), lo + (hi - lo)
// * uniform() an element, then cast by torch. Every floating dtype, the domains that take this
// path (real, positive, probabilities), 0-d and large inputs.
TEST(Inputs, FloatingInputsAreTheCastOfTheirDrawnDoubles) {
  constexpr std::uint64_t kInputSalt = 0x5151'a1a1'0000'0001ULL;
  for (const char* key :
       {"op/add/f32/8x8,8x8/contig/eager", "op/exp/bf16/17x31/contig/eager", "op/exp/f16/300x301/contig/eager",
        "op/log/f64/1000/contig/eager", "op/add/bf16/_,4/contig/eager", "op/sigmoid/f32/1024x1024/contig/eager",
        "op/logit/f32/64x64/contig/eager", "op/sqrt/bf16/65537/contig/eager"}) {
    SCOPED_TRACE(key);
    const CaseKey k = CaseKey::parse(key);
    const OpSpec* spec = find_op(k.target);
    ASSERT_NE(spec, nullptr);
    const std::vector<at::Tensor> made = make_inputs(k, *spec);
    for (std::size_t i = 0; i < made.size(); ++i) {
      const InputSpec& in = spec->inputs[i];
      if (!at::isFloatingType(made[i].scalar_type())) continue;
      SplitMix64 rng(k.id() ^ (kInputSalt * (i + 1)));
      std::vector<double> values(static_cast<std::size_t>(made[i].numel()));
      for (double& v : values)
        v = in.domain == Domain::Prob ? 0.02 + 0.96 * rng.uniform() : in.lo + (in.hi - in.lo) * rng.uniform();
      const at::Tensor expected = at::from_blob(values.data(), {static_cast<std::int64_t>(values.size())}, at::kDouble)
                                      .to(made[i].scalar_type())
                                      .reshape(made[i].sizes());
      // Inputs moved off kinks differ there by design; these ops have none.
      EXPECT_TRUE(at::equal(made[i], expected)) << "input " << i;
    }
  }
}

TEST(Inputs, DifferBetweenKeys) {
  EXPECT_NE(fingerprint(inputs_of("op/add/f32/8x8,8x8/contig/eager")),
            fingerprint(inputs_of("op/sub/f32/8x8,8x8/contig/eager")));
  EXPECT_NE(fingerprint(inputs_of("op/exp/f32/64/contig/eager")), fingerprint(inputs_of("op/sin/f32/64/contig/eager")));
  // Inputs of one case differ from each other.
  auto two = inputs_of("op/add/f32/8x8,8x8/contig/eager");
  EXPECT_FALSE(at::equal(two[0], two[1]));
}

TEST(Inputs, DtypesAndShapes) {
  auto t = inputs_of("op/add/bf16/3x4,4/contig/eager");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].scalar_type(), at::kBFloat16);
  EXPECT_EQ(t[0].sizes(), (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(t[1].sizes(), (std::vector<std::int64_t>{4}));
  EXPECT_TRUE(t[0].is_contiguous());
  auto z = inputs_of("op/exp/f32/_/contig/eager");
  EXPECT_EQ(z[0].dim(), 0);
  auto e = inputs_of("op/exp/f32/0x4/contig/eager");
  EXPECT_EQ(e[0].numel(), 0);
  EXPECT_EQ(e[0].sizes(), (std::vector<std::int64_t>{0, 4}));
}

TEST(Inputs, RespectDomains) {
  at::Tensor log_in = inputs_of("op/log/f32/64x64/contig/eager")[0];
  EXPECT_GT(log_in.min().item<double>(), 0.0);
  at::Tensor acos_in = inputs_of("op/acos/f32/64x64/contig/eager")[0];
  EXPECT_GE(acos_in.min().item<double>(), -1.0);
  EXPECT_LE(acos_in.max().item<double>(), 1.0);
  at::Tensor acos_bf16 = inputs_of("op/acos/bf16/64x64/contig/eager")[0];  // after rounding too
  EXPECT_GE(acos_bf16.min().item<double>(), -1.0);
  EXPECT_LE(acos_bf16.max().item<double>(), 1.0);

  // Index: integers in [0, size of self along dim).
  auto sel = inputs_of("op/index_select/f32/17x31,50/contig/eager/dim=1");
  EXPECT_EQ(sel[1].scalar_type(), at::kLong);
  EXPECT_GE(sel[1].min().item<std::int64_t>(), 0);
  EXPECT_LT(sel[1].max().item<std::int64_t>(), 31);
  auto sel0 = inputs_of("op/index_select/f32/17x31,50/contig/eager");
  EXPECT_LT(sel0[1].max().item<std::int64_t>(), 17);
  EXPECT_GT(sel0[1].max().item<std::int64_t>(), 0);

  // UniqueIndex: distinct along dim (0 by default).
  auto sc = inputs_of("op/scatter/f32/17x31,5x31,5x31/contig/eager");
  at::Tensor idx = sc[1];
  EXPECT_EQ(idx.scalar_type(), at::kLong);
  EXPECT_GE(idx.min().item<std::int64_t>(), 0);
  EXPECT_LT(idx.max().item<std::int64_t>(), 17);
  for (std::int64_t col = 0; col < idx.size(1); ++col) {
    at::Tensor line = idx.select(1, col);
    EXPECT_EQ(std::get<0>(at::_unique(line)).numel(), line.numel()) << "column " << col;
  }
  auto sc1 = inputs_of("op/scatter/f32/17x31,17x6,17x6/contig/eager/dim=1");
  for (std::int64_t row = 0; row < sc1[1].size(0); ++row) {
    at::Tensor line = sc1[1].select(0, row);
    EXPECT_EQ(std::get<0>(at::_unique(line)).numel(), line.numel()) << "row " << row;
    EXPECT_LT(line.max().item<std::int64_t>(), 31);
  }

  // Mask: bool, both values present.
  auto mf = inputs_of("op/masked_fill/f32/17x31,17x31/contig/eager");
  EXPECT_EQ(mf[1].scalar_type(), at::kBool);
  EXPECT_TRUE(mf[1].any().item<bool>());
  EXPECT_FALSE(mf[1].all().item<bool>());
}

TEST(Inputs, NeverAllZerosForFloats) {
  for (const char* key : {"op/exp/f32/16/contig/eager", "op/exp/bf16/4x4/contig/eager", "op/exp/f16/17x31/contig/eager",
                          "op/add/f64/16,16/contig/eager", "op/mm/f32/4x4,4x4/contig/eager"}) {
    SCOPED_TRACE(key);
    for (const auto& t : inputs_of(key)) {
      ASSERT_TRUE(at::isFloatingType(t.scalar_type()));
      EXPECT_GE(t.numel(), 16);
      EXPECT_GT(t.ne(0).sum().item<std::int64_t>(), t.numel() / 2);
    }
  }
}

TEST(Inputs, SpecialValues) {
  at::Tensor t = inputs_of("op/exp/f32/64/contig/eager/values=special")[0];
  EXPECT_TRUE(at::isnan(t).any().item<bool>());
  EXPECT_TRUE(at::isinf(t).any().item<bool>());
  at::Tensor normal = inputs_of("op/exp/f32/64/contig/eager")[0];
  EXPECT_TRUE(at::isfinite(normal).all().item<bool>());
  at::Tensor b = inputs_of("op/add/bf16/256,256/contig/eager/values=special")[0];
  EXPECT_TRUE(at::isnan(b).any().item<bool>());
  EXPECT_TRUE(at::isinf(b).any().item<bool>());
}

TEST(Inputs, ApplyLayoutKeepsValues) {
  at::Tensor t = inputs_of("op/exp/f32/2x3x4x5/contig/eager")[0];
  at::Tensor tr = apply_layout(t, Layout::Transposed);
  EXPECT_TRUE(at::equal(tr, t));
  EXPECT_EQ(tr.strides(), (std::vector<std::int64_t>{60, 20, 1, 4}));
  EXPECT_FALSE(tr.is_contiguous());

  at::Tensor st = apply_layout(t, Layout::Strided);
  EXPECT_TRUE(at::equal(st, t));
  EXPECT_EQ(st.stride(-1), 2);
  EXPECT_EQ(st.sizes(), t.sizes());

  at::Tensor cl = apply_layout(t, Layout::ChannelsLast);
  EXPECT_TRUE(at::equal(cl, t));
  EXPECT_TRUE(cl.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_EQ(cl.strides(), (std::vector<std::int64_t>{60, 1, 15, 3}));

  EXPECT_TRUE(apply_layout(t, Layout::Contig).is_same(t));
  at::Tensor m = inputs_of("op/exp/f32/3x4/contig/eager")[0];
  EXPECT_EQ(apply_layout(m, Layout::Transposed).strides(), (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(apply_layout(m, Layout::Strided).strides(), (std::vector<std::int64_t>{8, 2}));
  EXPECT_TRUE(at::equal(apply_layout(m, Layout::Strided), m));
}

TEST(Inputs, IndependentOfOrder) {
  const char* a = "op/add/f32/8x8,8x8/contig/eager";
  const char* b = "op/exp/f32/17x31/contig/eager";
  std::uint64_t a1 = fingerprint(inputs_of(a));
  std::uint64_t b1 = fingerprint(inputs_of(b));
  std::uint64_t b2 = fingerprint(inputs_of(b));
  std::uint64_t a2 = fingerprint(inputs_of(a));
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(b1, b2);
  // libtorch's global RNG does not matter.
  at::manual_seed(1234);
  (void)at::rand({100});
  EXPECT_EQ(fingerprint(inputs_of(a)), a1);
}

TEST(Inputs, GradOutputDeterministic) {
  CaseKey k = CaseKey::parse("op/exp/f32/8x8/contig/eager-bwd");
  at::Tensor like = at::zeros({8, 8}, at::kFloat);
  at::Tensor g1 = make_grad_output(k, 0, like), g2 = make_grad_output(k, 0, like);
  EXPECT_TRUE(at::equal(g1, g2));
  EXPECT_EQ(g1.scalar_type(), at::kFloat);
  EXPECT_FALSE(at::equal(g1, make_grad_output(k, 1, like)));
  EXPECT_LE(g1.abs().max().item<double>(), 1.0);
}

}  // namespace
}  // namespace gauntlet
