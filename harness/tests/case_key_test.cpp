// The case key grammar: canonical printing, parsing, ids and error positions.
#include "gauntlet/base/case_key.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gauntlet {
namespace {

// print(parse(s)) == s for canonical keys.
TEST(CaseKey, RoundTripVarietyOfKeys) {
  const std::vector<std::string> keys = {
      "op/add/f32/8x8,8x8/contig/eager",
      "op/sum/f32/_/contig/eager",                  // 0-d
      "op/sum/f64/0x4/contig/eager",                // empty
      "op/sum/f32/0/contig/eager",                  // empty 1-d
      "op/where/bool/_,_,_/contig/eager",           // three 0-d inputs
      "op/addcmul/bf16/7x1x5,1x3x5,5/t/eager-bwd",  // broadcasting, transposed, backward
      "op/exp/f16/17x31/step2/eager",
      "op/conv2d/f32/2x4x9x9,6x4x3x3,6/cl/eager-bwd/dilation=2,padding=1:2,stride=2",
      "op/softmax/f32/17x31/contig/eager/dim=-1",              // negative value
      "op/clamp/f64/17x31/contig/eager/max=1.5e+3,min=-0.25",  // float values
      "op/sum/i64/2x3x5/contig/eager/dim=0:-1,keepdim=1",      // ':'-list with a negative
      "op/gelu/f32/8/contig/eager/approximate=tanh",
      "op/gelu/f32/8/contig/compile/approximate=tanh",  // a one-op graph through the compile path
      "model/mlp/f32/tiny/compile/infer/seq=4",         // a shape sequence
      "op/abs/i8/3/contig/eager",
      "op/abs/i16/3/contig/eager",
      "op/abs/i32/3/contig/eager",
      "op/bitwise_not/u8/3/contig/eager",
      "op/logical_not/bool/3/contig/eager",
      "op/log_softmax/f32/1x1x1x1/cl/eager",
      "op/exp/f32/123456789012/contig/eager",  // 12-digit size is accepted
      "op/exp/f32/17x31/contig/eager/values=special",
  };
  for (const auto& k : keys) {
    SCOPED_TRACE(k);
    CaseKey parsed = CaseKey::parse(k);
    EXPECT_EQ(parsed.str(), k);
    EXPECT_EQ(CaseKey::parse(parsed.str()), parsed);
    EXPECT_EQ(parsed.id(), key_id(k));
  }
}

TEST(CaseKey, ParsedFields) {
  CaseKey k = CaseKey::parse("op/conv2d/bf16/2x4x9x9,6x4x3x3,_/cl/eager-bwd/dilation=2,padding=1:2");
  EXPECT_EQ(k.kind, "op");
  EXPECT_EQ(k.target, "conv2d");
  EXPECT_EQ(k.dtype, DType::BF16);
  ASSERT_EQ(k.shapes.size(), 3u);
  EXPECT_EQ(k.shapes[0], (Shape{2, 4, 9, 9}));
  EXPECT_EQ(k.shapes[1], (Shape{6, 4, 3, 3}));
  EXPECT_TRUE(k.shapes[2].empty());
  EXPECT_EQ(k.layout, Layout::ChannelsLast);
  EXPECT_EQ(k.mode, Mode::EagerBwd);
  ASSERT_EQ(k.args.size(), 2u);
  EXPECT_EQ(k.args.at("dilation"), "2");
  EXPECT_EQ(k.args.at("padding"), "1:2");

  CaseKey e = CaseKey::parse("op/sum/f32/0x4/contig/eager");
  ASSERT_EQ(e.shapes.size(), 1u);
  EXPECT_EQ(e.shapes[0], (Shape{0, 4}));
  EXPECT_EQ(numel(e.shapes[0]), 0);
  EXPECT_TRUE(e.args.empty());
}

TEST(CaseKey, EveryLayoutAndModeRoundTrips) {
  for (Layout l : {Layout::Contig, Layout::Transposed, Layout::Strided, Layout::ChannelsLast}) {
    for (Mode m : {Mode::Eager, Mode::EagerBwd}) {
      for (DType d : kAllDTypes) {
        CaseKey k;
        k.target = "conv2d";
        k.dtype = d;
        k.shapes = {{2, 3, 4, 5}, {}};
        k.layout = l;
        k.mode = m;
        std::string text = k.str();
        SCOPED_TRACE(text);
        CaseKey p = CaseKey::parse(text);
        EXPECT_EQ(p.layout, l);
        EXPECT_EQ(p.mode, m);
        EXPECT_EQ(p.dtype, d);
        EXPECT_EQ(p.str(), text);
      }
    }
  }
  EXPECT_EQ(layout_name(Layout::Contig), "contig");
  EXPECT_EQ(layout_name(Layout::Transposed), "t");
  EXPECT_EQ(layout_name(Layout::Strided), "step2");
  EXPECT_EQ(layout_name(Layout::ChannelsLast), "cl");
  EXPECT_EQ(mode_name(Mode::Eager), "eager");
  EXPECT_EQ(mode_name(Mode::EagerBwd), "eager-bwd");
  EXPECT_EQ(mode_name(Mode::Compile), "compile");
}

TEST(CaseKey, ArgsPrintSortedByName) {
  CaseKey k;
  k.target = "sum";
  k.shapes = {{2, 3}};
  k.args["keepdim"] = "1";
  k.args["dim"] = "-1";
  k.args["a"] = "0:-1";
  EXPECT_EQ(k.str(), "op/sum/f32/2x3/contig/eager/a=0:-1,dim=-1,keepdim=1");
  EXPECT_EQ(CaseKey::parse(k.str()), k);
}

TEST(CaseKey, ShapeStrings) {
  EXPECT_EQ(shape_str({}), "_");
  EXPECT_EQ(shape_str({0, 4}), "0x4");
  EXPECT_EQ(shape_str({8}), "8");
  EXPECT_EQ(shape_str({7, 1, 5}), "7x1x5");
  EXPECT_EQ(numel({}), 1);
  EXPECT_EQ(numel({7, 1, 5}), 35);
}

// The id is XXH64(text, seed 0); hard-coded so that a change of hash (or of the canonical text)
// is caught: ids are stored in result databases and golden caches.
TEST(CaseKey, IdIsStableXxh64OfText) {
  EXPECT_EQ(key_id(""), 0xef46db3751d8e999ULL);  // XXH64 of the empty input, seed 0
  EXPECT_EQ(key_id("op/add/f32/8x8,8x8/contig/eager"), 0x7c4dd3f6006b91acULL);
  EXPECT_EQ(key_id("op/sum/bf16/17x31/contig/eager"), 0x54d956b21377449dULL);
  EXPECT_EQ(key_id("op/logsumexp/bf16/17x31/contig/eager"), 0x6879fd9a3f9b1e7fULL);
  CaseKey k = CaseKey::parse("op/sum/bf16/17x31/contig/eager");
  EXPECT_EQ(k.id(), 0x54d956b21377449dULL);
  EXPECT_EQ(k.id(), CaseKey::parse(k.str()).id());
  EXPECT_NE(key_id("op/sum/bf16/17x31/contig/eager"), key_id("op/sum/bf16/17x31/contig/eager-bwd"));
}

struct BadKey {
  const char* key;
  std::size_t pos;
  const char* what;  // a fragment of the message
};

class CaseKeyErrors : public ::testing::TestWithParam<BadKey> {};

TEST_P(CaseKeyErrors, RejectedWithPosition) {
  const BadKey& b = GetParam();
  try {
    CaseKey::parse(b.key);
    FAIL() << "accepted " << b.key;
  } catch (const KeyError& e) {
    EXPECT_EQ(e.pos(), b.pos) << e.what();
    EXPECT_NE(std::string(e.what()).find(b.what), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("at column " + std::to_string(b.pos + 1)), std::string::npos) << e.what();
  }
}

// Offsets: "op/add/f32/" is 11 characters, "op/add/f32/8,8/contig/eager/" is 28.
INSTANTIATE_TEST_SUITE_P(
    Grammar, CaseKeyErrors,
    ::testing::Values(BadKey{"colls/add/f32/8/contig/eager", 0, "unknown kind"},
                      BadKey{"op/add/f33/8/contig/eager", 7, "unknown dtype"},
                      BadKey{"op/add/F32/8/contig/eager", 7, "unknown dtype"},
                      BadKey{"op//f32/8/contig/eager", 3, "empty target"},
                      BadKey{"op/add/f32//contig/eager", 11, "empty shapes"},
                      BadKey{"op/add/f32/8/contig/", 20, "empty mode"},
                      BadKey{"/add/f32/8/contig/eager", 0, "empty kind"},
                      BadKey{"op/Add/f32/8/contig/eager", 3, "bad character in target"},
                      BadKey{"op/add/f32/a8/contig/eager", 11, "dimension size"},
                      BadKey{"op/add/f32/8x?/contig/eager", 13, "dimension size"},
                      BadKey{"op/add/f32/8x-1/contig/eager", 13, "dimension size"},
                      BadKey{"op/add/f32/8x/contig/eager", 13, "dimension size"},
                      BadKey{"op/add/f32/8,,8/contig/eager", 13, "empty shape"},
                      BadKey{"op/add/f32/8,/contig/eager", 13, "empty shape"},
                      BadKey{"op/add/f32/,8/contig/eager", 11, "empty shape"},
                      BadKey{"op/add/f32/8x08/contig/eager", 13, "leading zero"},
                      BadKey{"op/add/f32/00/contig/eager", 11, "leading zero"},
                      BadKey{"op/add/f32/1234567890123/contig/eager", 11, "too large"},
                      BadKey{"op/add/f32/8y8/contig/eager", 12, "expected 'x'"},
                      BadKey{"op/add/f32/8,8x4_/contig/eager", 16, "expected 'x'"},
                      BadKey{"op/add/f32/8,8/contiguous/eager", 15, "unknown layout"},
                      BadKey{"op/add/f32/8,8/contig/lazy", 22, "unknown mode"},
                      BadKey{"op/add/f32/8,8/contig/eager/b=1,a=2", 32, "sorted"},
                      BadKey{"op/add/f32/8,8/contig/eager/a=1,a=2", 32, "duplicate argument 'a'"},
                      BadKey{"op/add/f32/8,8/contig/eager/a1", 28, "expected name=value"},
                      BadKey{"op/add/f32/8,8/contig/eager/a=1,b", 32, "expected name=value"},
                      BadKey{"op/add/f32/8,8/contig/eager/=1", 28, "expected name=value"},
                      BadKey{"op/add/f32/8,8/contig/eager/a=", 30, "empty argument value"},
                      BadKey{"op/add/f32/8,8/contig/eager/a=1,b=", 34, "empty argument value"},
                      BadKey{"op/add/f32/8,8/contig/eager/a=1*2", 31, "bad character in argument value"},
                      BadKey{"op/add/f32/8,8/contig/eager/a=x y", 31, "bad character in argument value"},
                      BadKey{"op/add/f32/8,8/contig/eager/aB=1", 29, "bad character in argument name"},
                      BadKey{"op/add/f32/8,8/contig/eager/a.b=1", 29, "bad character in argument name"},
                      BadKey{"op/add/f32/8,8/contig/eager/a=1,", 32, "expected name=value"},
                      // A trailing '/' leaves an empty segment where the next one would start.
                      BadKey{"op/add/f32/8,8/contig/eager/", 28, "empty arguments"},
                      BadKey{"op/add/f32/8,8/contig/eager/a=1/", 31, "unexpected '/'"},
                      // Too few segments: the missing one is reported at the end of the text.
                      BadKey{"op/add/f32/8,8/contig", 21, "missing mode"}, BadKey{"op/add/f32", 10, "missing shapes"},
                      BadKey{"op", 2, "missing target"}, BadKey{"", 0, "empty kind"},
                      // Collectives: "coll/all_reduce/f32/" is 20 characters, "coll/all_reduce/f32/8/contig/" 29.
                      BadKey{"coll/all_reduce/f32/8,8/contig/w2", 20, "one 1-D shape"},
                      BadKey{"coll/all_reduce/f32/2x4/contig/w2", 20, "one 1-D shape"},
                      BadKey{"coll/all_reduce/f32/8/t/w2", 22, "contig or step2"},
                      BadKey{"coll/all_reduce/f32/8/contig/eager", 29, "w<ranks>"},
                      BadKey{"coll/all_reduce/f32/8/contig/w04", 29, "w<ranks>"},
                      BadKey{"coll/all_reduce/f32/8/contig/w4x", 31, "w<ranks>"},
                      BadKey{"coll/all_reduce/f32/8/contig/w1", 30, "2 .. 1024"},
                      BadKey{"coll/all_reduce/f32/8/contig/w2000", 30, "2 .. 1024"},
                      BadKey{"coll/all_reduce/f32/8/contig", 28, "missing world size"}));

TEST(CaseKey, ModelKeysNameConfigExecutionAndMode) {
  const CaseKey k = CaseKey::parse("model/llama_block/bf16/small/eager/train");
  EXPECT_EQ(k.kind, "model");
  EXPECT_EQ(k.target, "llama_block");
  EXPECT_EQ(k.config, "small");
  EXPECT_EQ(k.exec, "eager");
  EXPECT_EQ(k.mode, Mode::EagerBwd);
  EXPECT_EQ(k.mode_text(), "train");
  EXPECT_EQ(k.str(), "model/llama_block/bf16/small/eager/train");
  EXPECT_EQ(CaseKey::parse("model/mlp/f32/tiny/compile/infer/x=1").str(), "model/mlp/f32/tiny/compile/infer/x=1");
  for (const auto& [bad, what] : std::vector<std::pair<std::string, std::string>>{
           {"model/mlp/f32/tiny/jit/infer", "unknown execution 'jit'"},
           {"model/mlp/f32/tiny/eager/eager", "unknown mode 'eager' (expected infer or train)"},
           {"model/mlp/f32/Tiny/eager/infer", "bad character in config name"},
           {"model/mlp/f32/tiny/eager", "missing mode"}}) {
    try {
      CaseKey::parse(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const KeyError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
}

TEST(CaseKey, CollectiveKeysCarryTheWorldSizeInTheModeField) {
  const CaseKey k = CaseKey::parse("coll/all_reduce/bf16/1048576/step2/w4/op=sum");
  EXPECT_EQ(k.kind, "coll");
  EXPECT_EQ(k.target, "all_reduce");
  EXPECT_EQ(k.world, 4);
  EXPECT_EQ(k.layout, Layout::Strided);
  EXPECT_EQ(k.shapes, std::vector<Shape>{{1048576}});
  EXPECT_EQ(k.mode_text(), "w4");
  EXPECT_EQ(k.str(), "coll/all_reduce/bf16/1048576/step2/w4/op=sum");
  EXPECT_EQ(CaseKey::parse("op/add/f32/8/contig/eager-bwd").mode_text(), "eager-bwd");
}

// An extra segment after the arguments: the problem is the '/' that starts it, at offset 31.
TEST(CaseKey, ExtraSegmentAfterArgumentsPointsAtTheSlash) {
  const std::string key = "op/add/f32/8,8/contig/eager/a=1/b=2";
  try {
    CaseKey::parse(key);
    FAIL() << "accepted " << key;
  } catch (const KeyError& e) {
    EXPECT_NE(std::string(e.what()).find("unexpected '/'"), std::string::npos) << e.what();
    EXPECT_EQ(e.pos(), key.find("/b=2")) << e.what();
  }
}

TEST(CaseKey, KeyErrorIsAnErrorOfBadInputInOneLine) {
  EXPECT_THROW(CaseKey::parse("op/add/f32/8/contig/eager/"), KeyError);
  try {
    CaseKey::parse("op/add/f32/8\nx/contig/eager");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {  // Note [Error family]
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("8\\x0ax"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gauntlet
