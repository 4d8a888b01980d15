// Globs and gtest-style filters on case keys.
#include "gauntlet/base/glob.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gauntlet/base/strings.h"

namespace gauntlet {
namespace {

TEST(Glob, LiteralAndEmpty) {
  EXPECT_TRUE(glob_match("", ""));
  EXPECT_FALSE(glob_match("", "a"));
  EXPECT_FALSE(glob_match("a", ""));
  EXPECT_TRUE(glob_match("op/add/f32/8/contig/eager", "op/add/f32/8/contig/eager"));
  EXPECT_FALSE(glob_match("op/add/f32/8/contig/eager", "op/add/f32/8/contig/eager-bwd"));
  EXPECT_FALSE(glob_match("op/add/f32/8/contig/eager-bwd", "op/add/f32/8/contig/eager"));
}

TEST(Glob, StarCrossesSlashes) {
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*", "op/add/f32/8/contig/eager"));
  EXPECT_TRUE(glob_match("op/*", "op/add/f32/8/contig/eager"));
  EXPECT_TRUE(glob_match("op/add/*", "op/add/f32/8x8,8x8/contig/eager"));
  EXPECT_TRUE(glob_match("*/bf16/*", "op/add/bf16/8/contig/eager"));
  EXPECT_TRUE(glob_match("*eager-bwd*", "op/exp/f32/8/contig/eager-bwd"));
  EXPECT_TRUE(glob_match("op/*/eager", "op/add/f32/8/t/eager"));
  EXPECT_FALSE(glob_match("op/*/eager", "op/add/f32/8/t/eager-bwd"));
  EXPECT_TRUE(glob_match("**", "abc"));
  EXPECT_TRUE(glob_match("a*b*c", "a__b__b__c"));
  EXPECT_FALSE(glob_match("a*b*c", "a__b__b__"));
  EXPECT_FALSE(glob_match("op/add/*", "op/addcmul/f32/8/contig/eager"));
  EXPECT_TRUE(glob_match("op/add*", "op/addcmul/f32/8/contig/eager"));
}

TEST(Glob, QuestionMarkIsOneCharacter) {
  EXPECT_TRUE(glob_match("op/add/f?2/*", "op/add/f32/8/contig/eager"));
  EXPECT_FALSE(glob_match("op/add/f?2/*", "op/add/bf32/8/contig/eager"));
  EXPECT_TRUE(glob_match("???", "abc"));
  EXPECT_FALSE(glob_match("???", "ab"));
  EXPECT_FALSE(glob_match("???", "abcd"));
  EXPECT_TRUE(glob_match("a?c", "a/c"));  // '?' matches '/' too
  EXPECT_FALSE(glob_match("?", ""));
}

TEST(Glob, NoMatch) {
  EXPECT_FALSE(glob_match("op/mul/*", "op/add/f32/8/contig/eager"));
  EXPECT_FALSE(glob_match("*/f16/*", "op/add/bf16/8/contig/eager"));
  EXPECT_FALSE(glob_match("*x", "abc"));
}

TEST(Filter, EmptyFilterMatchesAll) {
  Filter f;
  EXPECT_TRUE(f.empty());
  EXPECT_TRUE(f.matches("op/add/f32/8/contig/eager"));
}

TEST(Filter, PositiveList) {
  Filter f("op/add/*:op/mul/*");
  EXPECT_FALSE(f.empty());
  EXPECT_TRUE(f.matches("op/add/f32/8/contig/eager"));
  EXPECT_TRUE(f.matches("op/mul/bf16/8/contig/eager-bwd"));
  EXPECT_FALSE(f.matches("op/sub/f32/8/contig/eager"));
}

TEST(Filter, NegativePart) {
  Filter f("op/add/*:op/mul/*:-*/bf16/*:*/f16/*");
  EXPECT_TRUE(f.matches("op/add/f32/8/contig/eager"));
  EXPECT_FALSE(f.matches("op/add/bf16/8/contig/eager"));
  EXPECT_FALSE(f.matches("op/mul/f16/8/contig/eager"));
  EXPECT_TRUE(f.matches("op/mul/f64/8/contig/eager"));
  EXPECT_FALSE(f.matches("op/sub/f32/8/contig/eager"));
}

TEST(Filter, LeadingDashIsOnlyNegatives) {
  Filter f("-*/bf16/*:*eager-bwd*");
  EXPECT_TRUE(f.matches("op/add/f32/8/contig/eager"));
  EXPECT_TRUE(f.matches("op/sum/i32/_/contig/eager"));
  EXPECT_FALSE(f.matches("op/add/bf16/8/contig/eager"));
  EXPECT_FALSE(f.matches("op/add/f32/8/contig/eager-bwd"));
}

TEST(Filter, DashesInsideKeysDoNotSplit) {
  // "eager-bwd" and "dim=-1" contain '-': only a '-' at the start or after ':' starts negatives.
  Filter bwd("*eager-bwd*");
  EXPECT_TRUE(bwd.matches("op/exp/f32/8/contig/eager-bwd"));
  EXPECT_FALSE(bwd.matches("op/exp/f32/8/contig/eager"));

  Filter dim("op/sum/*/dim=-1*");
  EXPECT_TRUE(dim.matches("op/sum/f32/2x3/contig/eager/dim=-1,keepdim=1"));
  EXPECT_FALSE(dim.matches("op/sum/f32/2x3/contig/eager/dim=0"));

  Filter full("op/sum/f32/2x3/contig/eager-bwd/dim=-1");
  EXPECT_TRUE(full.matches("op/sum/f32/2x3/contig/eager-bwd/dim=-1"));
  EXPECT_FALSE(full.matches("op/sum/f32/2x3/contig/eager/dim=-1"));

  Filter mixed("op/sum/*:-*eager-bwd*:*dim=-1*");
  EXPECT_TRUE(mixed.matches("op/sum/f32/2x3/contig/eager/dim=0"));
  EXPECT_FALSE(mixed.matches("op/sum/f32/2x3/contig/eager-bwd"));
  EXPECT_FALSE(mixed.matches("op/sum/f32/2x3/contig/eager/dim=-1"));
  EXPECT_FALSE(mixed.matches("op/mean/f32/2x3/contig/eager"));
}

TEST(Filter, EmptyPatternsRejected) {
  for (const char* bad : {"", "-", "a::b", ":a", "a:-", "-:a", "a:-b::c", "-a::b"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(Filter{bad}, std::invalid_argument);
  }
  try {
    Filter f("a::b");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("empty pattern"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a::b"), std::string::npos) << e.what();
  }
}

// Shell classes and alternatives would silently select nothing (no key has these characters).
TEST(Filter, ShellGlobSyntaxIsRefusedNamingTheCharacter) {
  for (const char* bad : {"op/ad[a-d]/*", "op/{add,mul}/*", "op/a]", "-op/x\\y", "op/*:op/[ab]"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(Filter{bad}, std::invalid_argument);
  }
  try {
    Filter f("op/ad[a-d]/*");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'[' is not filter syntax"), std::string::npos) << e.what();
  }
}

// Note [Filters at scale]: literal keys and globs bucketed by their prefix decide exactly as trying
// every pattern in turn does, on thousands of patterns of every shape.
TEST(Filter, ManyPatternsDecideAsTryingEachInTurn) {
  std::mt19937 rng(7);
  const std::vector<std::string> ops = {"add", "addcmul", "mm", "sum", "softmax", "exp", "_convolution"};
  const std::vector<std::string> dtypes = {"f32", "bf16", "f16"};
  const std::vector<std::string> shapes = {"8", "4,4", "2x3", "1x3x224x224,64x3x7x7", "_,_"};
  const std::vector<std::string> tails = {"contig/eager", "t/eager", "contig/eager-bwd", "contig/eager/padding=1:1"};
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i)
    keys.push_back("op/" + pick(ops) + "/" + pick(dtypes) + "/" + pick(shapes) + "/" + pick(tails));
  std::vector<std::string> patterns;
  for (int i = 0; i < 400; ++i) {
    std::string p = keys[rng() % keys.size()];
    switch (rng() % 5) {
      case 0:
        break;  // a literal key
      case 1:
        p = p.substr(0, 12 + rng() % (p.size() - 12)) + "*";
        break;  // a prefix glob
      case 2:
        p = "*" + p.substr(rng() % p.size());
        break;  // a suffix glob
      case 3:
        p[rng() % p.size()] = '?';
        break;  // one character free
      default:
        p = p.substr(0, 12 + rng() % (p.size() - 12)) + "*" + p.substr(p.size() - 1 - rng() % 6);
        break;
    }
    patterns.push_back(p);
  }
  PatternSet set;
  for (const auto& p : patterns) set.add(p);
  EXPECT_EQ(set.size(), patterns.size());
  std::size_t matched = 0;
  for (int i = 0; i < 3000; ++i) {
    // Keys of the list and keys near them (one character changed).
    std::string key = keys[static_cast<std::size_t>(i)];
    if (i % 3 == 0) key[rng() % key.size()] = 'z';
    bool naive = false;
    for (const auto& p : patterns) naive = naive || glob_match(p, key);
    ASSERT_EQ(set.matches(key), naive) << key;
    matched += naive;
  }
  EXPECT_GT(matched, 300u);
  EXPECT_LT(matched, 3000u);
}

TEST(Filter, ExactKeysNarrowAFilterAndKeepItsNegativePart) {
  Filter f("-*/bf16/*");
  f.add_keys(
      {"op/add/f32/8/contig/eager", "op/add/bf16/8/contig/eager", "op/_convolution/f32/1x1/contig/eager/padding=1:1"});
  EXPECT_TRUE(f.matches("op/add/f32/8/contig/eager"));
  EXPECT_FALSE(f.matches("op/add/bf16/8/contig/eager"));                       // the negative part still applies
  EXPECT_TRUE(f.matches("op/_convolution/f32/1x1/contig/eager/padding=1:1"));  // ':' in a key is no separator here
  EXPECT_FALSE(f.matches("op/add/f32/8/contig/eager-bwd"));
  EXPECT_FALSE(f.matches("op/add/f32/8/contig/eage"));
}

TEST(Strings, SplitKeepsEmptyPartsAndTakesAnyOfTheSeparators) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split("a,,b", ","), (V{"a", "", "b"}));
  EXPECT_EQ(split("", ","), (V{""}));
  EXPECT_EQ(split("NEURON_*,XLA_FLAGS:CUDA_*", ",:"), (V{"NEURON_*", "XLA_FLAGS", "CUDA_*"}));
  EXPECT_EQ(split("a:", ":"), (V{"a", ""}));
}

TEST(Strings, NearestHintNamesOnlyACloseCandidate) {
  EXPECT_EQ(nearest_hint("--sute", {"--suite", "--shard"}), " (did you mean --suite?)");
  EXPECT_EQ(nearest_hint("abcdefgh", {"zzzzzzzz"}), "");
  EXPECT_EQ(nearest_hint("x", {}), "");
}

}  // namespace
}  // namespace gauntlet
