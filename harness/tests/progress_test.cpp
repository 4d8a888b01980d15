// Note [Progress model]: the ETA against synthetic clocks.
#include "gauntlet/run/progress.h"

#include <gtest/gtest.h>

namespace gauntlet {
namespace {

// 300 cases of equal expected cost: the first 200 take 10 ms each, the last third crash and cost
// a second each (a worker restart). At two thirds of the run's wall time the ETA is within 2x of
// the true remaining time; the mean rate since the start would say a quarter of it.
TEST(ProgressModel, ALastThirdOfCrashingCasesGrowsTheEtaWithinTheWindow) {
  ProgressModel m(300, 300);
  double t = 0;
  for (int i = 0; i < 200; ++i) m.done(t += 0.01, 1);
  const double total = 2 + 100;
  while (t + 1 <= total * 2 / 3) m.done(t += 1, 1);
  const double now = total * 2 / 3, truth = total - now;
  const auto eta = m.eta(now);
  ASSERT_TRUE(eta);
  EXPECT_GE(*eta, truth / 2);
  EXPECT_LE(*eta, truth * 2);
  const double mean_rate_eta = double(300 - m.done_cases()) / (double(m.done_cases()) / now);
  EXPECT_LT(mean_rate_eta, truth / 2) << "the mean rate since the start misses it";
  EXPECT_NEAR(m.rate(now), 1.0, 0.05);
}

// Cases of very different cost: after the ten large ones, a thousand tiny ones are left. Counting
// cases would predict 1,000 s; their expected cost says 1 s.
TEST(ProgressModel, TheEtaWeighsTheRemainingCasesByTheirExpectedCost) {
  ProgressModel m(1010, 10 * 100 + 1000 * 0.1);
  double t = 0;
  for (int i = 0; i < 10; ++i) m.done(t += 1, 100);
  const auto eta = m.eta(t);
  ASSERT_TRUE(eta);
  EXPECT_NEAR(*eta, 1.0, 0.01);
}

TEST(ProgressModel, NothingDoneHasNoEtaAndAFinishedRunHasNone) {
  ProgressModel m(2, 2);
  EXPECT_FALSE(m.eta(1));
  EXPECT_EQ(m.rate(1), 0);
  m.done(1, 1);
  m.done(2, 1);
  EXPECT_EQ(*m.eta(2), 0);
  // Every estimate 0: the count of cases stands in.
  ProgressModel z(4, 0);
  z.done(1, 0);
  z.done(2, 0);
  ASSERT_TRUE(z.eta(2));
  EXPECT_NEAR(*z.eta(2), 2.0, 1e-9);
}

// A real run's shape (nightly on sim: 250 abs/exp cases passing in 30 ms each on 2 workers, then
// 123 tanh cases that all crash, ~1.15 s apart): at the cases' two-thirds mark, seven crashes in,
// the window alone says a few seconds; the tanh group, priced by its own completions, says what
// is left (116 x 1.15 s), within 2x.
TEST(ProgressModel, AGroupThatTurnsSlowPricesItsRemainingCasesAtItsOwnCost) {
  ProgressModel m(373, 373);
  for (int i = 0; i < 250; ++i) m.expect(i < 125 ? "op/abs/f32" : "op/exp/f32", 1);
  for (int i = 0; i < 123; ++i) m.expect("op/tanh/f32", 1);
  double t = 0.5;  // start-up
  for (int i = 0; i < 250; ++i) m.done(t += 0.03, 1, i < 125 ? "op/abs/f32" : "op/exp/f32");
  for (int i = 0; i < 7; ++i) m.done(t += 1.15, 1, "op/tanh/f32", true);
  const double truth = 116 * 1.15;
  const auto eta = m.eta(t);
  ASSERT_TRUE(eta);
  EXPECT_GE(*eta, truth / 2);
  EXPECT_LE(*eta, truth * 2);
  // Without groups the same completions give the window's view only: far too low.
  ProgressModel plain(373, 373);
  double u = 0.5;
  for (int i = 0; i < 250; ++i) plain.done(u += 0.03, 1);
  for (int i = 0; i < 7; ++i) plain.done(u += 1.15, 1);
  EXPECT_LT(*plain.eta(u), truth / 2);
  // Crashes cost a restart whatever their size: the crashed cases were the group's largest, its
  // remaining ones tiny; priced per case, not per expected cost.
  ProgressModel sized(30, 10 * 100 + 20 * 1);
  for (int i = 0; i < 10; ++i) sized.expect("op/tanh/f32", 100);
  for (int i = 0; i < 20; ++i) sized.expect("op/tanh/f32", 1);
  double w = 0.5;
  for (int i = 0; i < 10; ++i) sized.done(w += 1, 100, "op/tanh/f32", true);
  EXPECT_NEAR(*sized.eta(w), 20 * 1.0, 1.0);
  // A group never lowers the window's ETA: fast groups priced at their gaps leave it as it is.
  ProgressModel fast(20, 20);
  for (int i = 0; i < 20; ++i) fast.expect("op/add/f32", 1);
  double v = 0;
  for (int i = 0; i < 10; ++i) fast.done(v += 1, 1, "op/add/f32");
  EXPECT_NEAR(*fast.eta(v), 10.0, 1e-9);
}

}  // namespace
}  // namespace gauntlet
