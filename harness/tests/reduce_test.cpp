// Failing-shape reduction (reduce.h) against scripted runners: which candidates a case has, what
// "fails the same way" means, and where the greedy descent ends.
#include "gauntlet/core/reduce/reduce.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "gauntlet/suites/op_spec.h"

namespace gauntlet {
namespace {

std::vector<std::string> keys_of(const Candidates& c) {
  std::vector<std::string> out;
  for (const auto& x : c.valid) out.push_back(x.key.str());
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

Outcome outcome(Status s, const std::string& error = "", const std::string& worst = "", std::int64_t mismatches = 0) {
  Outcome o;
  o.status = s;
  o.error = error;
  o.metrics.worst = worst;
  o.metrics.mismatches = mismatches;
  return o;
}

// A runner from a rule on the key, counting what it was asked.
struct Scripted {
  std::function<Outcome(const CaseKey&)> rule;
  std::vector<std::vector<std::string>> batches;
  RunCases runner() {
    return [this](const std::vector<std::string>& keys) {
      batches.push_back(keys);
      std::vector<Outcome> out;
      for (const auto& k : keys) out.push_back(rule(CaseKey::parse(k)));
      return out;
    };
  }
};

Outcome bias_fault(const CaseKey& k) {  // sim's kind=bias,min_numel=64: the largest input counts
  if (largest_input_elements(k) >= 64)
    return outcome(Status::Fail, "out0: 64 of 64 elements outside tolerance", "out0[3]", 64);
  return outcome(Status::Pass);
}

TEST(ReduceCandidates, SameShapedInputsShrinkTogetherAndEveryCandidateIsValid) {
  const CaseKey k = CaseKey::parse("op/add/f32/16x16,16x16/contig/eager");
  const Candidates c = shrink_candidates(k);
  const auto keys = keys_of(c);
  EXPECT_TRUE(has(keys, "op/add/f32/8x16,8x16/contig/eager"));
  EXPECT_TRUE(has(keys, "op/add/f32/8x8,8x8/contig/eager"));     // the shared size 16, everywhere
  EXPECT_TRUE(has(keys, "op/add/f32/1x16,16x16/contig/eager"));  // one input's dim: broadcasts
  EXPECT_TRUE(has(keys, "op/add/f32/16,16/contig/eager"));       // leading dims dropped
  EXPECT_FALSE(has(keys, k.str()));
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), keys.size());
  for (const auto& cand : c.valid) {
    EXPECT_FALSE(validate_key(cand.key).has_value()) << cand.key.str();
    EXPECT_FALSE(cand.move.empty());
  }
  // Smallest first.
  for (std::size_t i = 1; i < c.valid.size(); ++i) {
    EXPECT_LE(total_elements(c.valid[i - 1].key), total_elements(c.valid[i].key));
  }
  EXPECT_EQ(keys.front(), "op/add/f32/1x1,1x1/contig/eager");
}

TEST(ReduceCandidates, MatmulKeepsItsSharedDimAndRejectsWhatValidateKeyRejects) {
  const CaseKey k = CaseKey::parse("op/mm/f32/8x16,16x4/contig/eager");
  const Candidates c = shrink_candidates(k);
  const auto keys = keys_of(c);
  EXPECT_TRUE(has(keys, "op/mm/f32/8x8,8x4/contig/eager"));  // K = 16 -> 8 in both inputs
  EXPECT_TRUE(has(keys, "op/mm/f32/4x16,16x4/contig/eager"));
  // mm takes 2-d inputs only: dropping a dim is invalid, counted and not offered.
  for (const auto& key : keys) EXPECT_EQ(CaseKey::parse(key).shapes[0].size(), 2u) << key;
  EXPECT_GT(c.invalid, 0);
}

TEST(ReduceCandidates, NothingSmallerThanOnes) {
  const Candidates c = shrink_candidates(CaseKey::parse("op/exp/f32/_/contig/eager"));
  EXPECT_TRUE(c.valid.empty());
}

TEST(ReduceSignature, FailNamesItsOutputsErrorBlanksNumbersCrashKeepsTheSignal) {
  const auto a =
      failure_signature(outcome(Status::Fail, "out0: 3 of 64 elements outside tolerance (rtol=1e-05)", "out0[7]", 3));
  const auto b =
      failure_signature(outcome(Status::Fail, "out0: 1 of 2 elements outside tolerance (rtol=1e-05)", "out0[0]", 1));
  const auto g = failure_signature(outcome(Status::Fail, "out0: 1 of 2 elements outside tolerance", "grad.self[0]", 2));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, g);
  EXPECT_EQ(a.str(), "FAIL (out0 out of tolerance)");
  EXPECT_EQ(g.outputs, (std::vector<std::string>{"grad.self", "out0"}));
  EXPECT_EQ(failure_signature(outcome(Status::Error, "shape [7, 1, 5] mismatch\ntrace")),
            failure_signature(outcome(Status::Error, "shape [3, 1, 2] mismatch")));
  EXPECT_NE(failure_signature(outcome(Status::Error, "shape [7] mismatch")),
            failure_signature(outcome(Status::Error, "golden raised")));
  const auto crash =
      failure_signature(outcome(Status::Crash, "worker died with SIGSEGV while running the case\nlast lines"));
  EXPECT_EQ(crash.detail, "SIGSEGV");
  EXPECT_EQ(crash.str(), "CRASH (SIGSEGV)");
  EXPECT_NE(crash, failure_signature(outcome(Status::Crash, "worker died with SIGABRT while running the case")));
  EXPECT_NE(crash, failure_signature(outcome(Status::Pass)));
  EXPECT_TRUE(reducible_status(Status::Timeout));
  EXPECT_FALSE(reducible_status(Status::XFail));
  EXPECT_FALSE(reducible_status(Status::Pass));
}

TEST(ReduceSearch, BiasAboveSixtyFourElementsEndsAtExactlySixtyFour) {
  Scripted s{bias_fault, {}};
  const CaseKey start = CaseKey::parse("op/add/f32/16x16,16x16/contig/eager");
  const ReduceResult r = reduce_case(start, bias_fault(start), s.runner());
  EXPECT_EQ(largest_input_elements(r.smallest), 64) << r.smallest.str();
  EXPECT_EQ(r.outcome.status, Status::Fail);
  EXPECT_FALSE(r.budget_spent);
  EXPECT_FALSE(r.steps.empty());
  EXPECT_EQ(r.steps.front().from, start.str());
  EXPECT_EQ(r.steps.back().to, r.smallest.str());
  EXPECT_EQ(r.stats.rounds, static_cast<int>(r.steps.size()) + 1);
  EXPECT_EQ(r.stats.tried, r.stats.reproduced + r.stats.passed + r.stats.other);
  int run = 0;
  std::set<std::string> distinct;
  for (const auto& b : s.batches) {
    run += static_cast<int>(b.size());
    distinct.insert(b.begin(), b.end());
  }
  EXPECT_EQ(run, r.stats.tried);
  EXPECT_EQ(static_cast<int>(distinct.size()), run);  // nothing runs twice
  EXPECT_EQ(static_cast<int>(s.batches.size()), r.stats.batches);
  EXPECT_EQ(s.batches.front().size(), 1u);  // batches of 1, 2, 4, ...
}

TEST(ReduceSearch, ACrashAnywhereShrinksToOnesInOneCandidatePerRound) {
  // As on a worker: the golden comes first, and the CPU's mm takes two matrices with one K.
  auto crash = [](const CaseKey& k) {
    const auto& s = k.shapes;
    if (s.size() != 2 || s[0].size() != 2 || s[1].size() != 2 || s[0][1] != s[1][0]) {
      return outcome(Status::Error, "mat1 and mat2 shapes cannot be multiplied (8x16 and 1x4)");
    }
    return outcome(Status::Crash, "worker died with SIGSEGV while running the case");
  };
  Scripted s{crash, {}};
  const CaseKey start = CaseKey::parse("op/mm/f32/8x16,16x4/contig/eager");
  const ReduceResult r = reduce_case(start, crash(start), s.runner());
  EXPECT_EQ(r.smallest.str(), "op/mm/f32/1x1,1x1/contig/eager");
  EXPECT_EQ(r.stats.passed, 0);
  EXPECT_GT(r.stats.other, 0);  // candidates whose golden raises are not crashes
  for (const auto& st : r.steps) {
    const CaseKey to = CaseKey::parse(st.to);
    EXPECT_EQ(to.shapes[0][1], to.shapes[1][0]) << st.to;  // K shared all the way
  }
}

TEST(ReduceSearch, AnotherFailureIsNotTheSameWay) {
  // Small cases crash instead of failing: reduction keeps to FAIL.
  auto rule = [](const CaseKey& k) {
    if (largest_input_elements(k) < 16)
      return outcome(Status::Crash, "worker died with SIGSEGV while running the case");
    return outcome(Status::Fail, "out0: 1 of 16 elements outside tolerance", "out0[0]", 1);
  };
  Scripted s{rule, {}};
  const CaseKey start = CaseKey::parse("op/exp/f32/8x8/contig/eager");
  const ReduceResult r = reduce_case(start, rule(start), s.runner());
  EXPECT_EQ(largest_input_elements(r.smallest), 16) << r.smallest.str();
  EXPECT_GT(r.stats.other, 0);
  EXPECT_EQ(r.stats.passed, 0);
}

TEST(ReduceSearch, TheBudgetStopsTheSearch) {
  Scripted s{bias_fault, {}};
  const CaseKey start = CaseKey::parse("op/add/f32/16x16,16x16/contig/eager");
  ReduceConfig cfg;
  cfg.max_candidates = 3;
  const ReduceResult r = reduce_case(start, bias_fault(start), s.runner(), cfg);
  EXPECT_TRUE(r.budget_spent);
  EXPECT_EQ(r.stats.tried, 3);
}

}  // namespace
}  // namespace gauntlet
