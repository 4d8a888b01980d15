// The orchestrator against a scripted worker (a shell script speaking the worker protocol), so
// that crashes, hangs, retries, flaky cases and device binding are tested exactly and fast.
#include "gauntlet/core/session/orchestrator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace gauntlet {
namespace {

namespace fs = std::filesystem;

// Keys: "ok-N" pass; "slow-N" pass after 20 ms (so that every worker gets some); "nap-N" after 0.5 s; "segv-N" /
// "abort-N" kill the worker with that signal; "hang-N" never answers; "flaky-N" crashes the first time it runs and
// passes after; "exit" exits 3 between cases. Each result's error carries $SLOT (the device binding) and the worker's
// pid.
constexpr const char* kScript = R"sh(#!/bin/bash
echo '{"type":"hello","protocol":1}'
while IFS= read -r key; do
  echo "{\"type\":\"start\",\"key\":\"$key\"}"
  case "$key" in
    segv-*) kill -SEGV $$ ;;
    abort-*) echo "about to abort on $key" >&2; kill -ABRT $$ ;;
    hang-*) sleep 1000 ;;
    slow-*) sleep 0.02 ;;
    nap-*) sleep 0.5 ;;
    flaky-*) if [ ! -e "$MARKS/$key" ]; then touch "$MARKS/$key"; kill -SEGV $$; fi ;;
  esac
  echo "{\"type\":\"result\",\"key\":\"$key\",\"outcome\":{\"key\":\"$key\",\"status\":\"PASS\",\"rtol\":0,\"atol\":0,\"max_abs_err\":0,\"max_rel_err\":0,\"mismatches\":0,\"numel\":0,\"max_ulp\":0,\"nan_inf_ok\":true,\"first_us\":1,\"median_us\":1,\"p10_us\":1,\"p90_us\":1,\"error\":\"slot=$SLOT pid=$$\"}}"
done
)sh";

class OrchestratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gauntlet_orch_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "marks");
    script_ = dir_ / "worker.sh";
    std::ofstream(script_) << kScript;
    fs::permissions(script_, fs::perms::owner_all);
    setenv("MARKS", (dir_ / "marks").c_str(), 1);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::map<std::string, CaseDone> run(const std::vector<std::string>& keys, OrchestratorConfig cfg,
                                      std::string* stopped = nullptr) {
    cfg.exe = script_.string();
    cfg.log_dir = (dir_ / "logs").string();
    std::map<std::string, CaseDone> out;
    Orchestrator o(cfg);
    std::string why = o.run(
        keys,
        [&](CaseDone&& d) {
          EXPECT_EQ(out.count(d.key), 0u) << d.key << " reported twice";
          out[d.key] = std::move(d);
        },
        [] { return false; });
    if (stopped)
      *stopped = why;
    else
      EXPECT_EQ(why, "");
    return out;
  }

  fs::path dir_, script_;
};

TEST_F(OrchestratorTest, RunsEveryKeyOnceAcrossWorkers) {
  std::vector<std::string> keys;
  for (int i = 0; i < 200; ++i) keys.push_back((i % 4 ? "ok-" : "slow-") + std::to_string(i));
  OrchestratorConfig cfg;
  cfg.workers = 3;
  auto done = run(keys, cfg);
  ASSERT_EQ(done.size(), keys.size());
  std::map<std::string, int> pids;
  for (const auto& [k, d] : done) {
    EXPECT_EQ(d.outcome.status, Status::Pass);
    EXPECT_EQ(d.outcome.attempt, 1);
    ++pids[d.outcome.error.substr(d.outcome.error.find("pid="))];
  }
  EXPECT_EQ(pids.size(), 3u) << "every worker took cases";
}

TEST_F(OrchestratorTest, CrashAndHangCostOneCaseAfterARetryAlone) {
  OrchestratorConfig cfg;
  cfg.workers = 2;
  cfg.timeout_s = 0.5;
  cfg.retries = 1;
  std::vector<std::string> keys = {"ok-1", "segv-1", "ok-2", "abort-1", "ok-3", "hang-1", "ok-4", "ok-5"};
  auto done = run(keys, cfg);
  ASSERT_EQ(done.size(), keys.size());
  EXPECT_EQ(done["segv-1"].outcome.status, Status::Crash);
  EXPECT_NE(done["segv-1"].outcome.error.find("worker died with SIGSEGV"), std::string::npos)
      << done["segv-1"].outcome.error;
  EXPECT_EQ(done["segv-1"].outcome.attempt, 2);
  EXPECT_EQ(done["abort-1"].outcome.status, Status::Crash);
  EXPECT_NE(done["abort-1"].outcome.error.find("SIGABRT"), std::string::npos);
  EXPECT_NE(done["abort-1"].outcome.error.find("about to abort on abort-1"), std::string::npos)
      << "the last lines of the worker's stderr: " << done["abort-1"].outcome.error;
  EXPECT_EQ(done["hang-1"].outcome.status, Status::Timeout);
  EXPECT_EQ(done["hang-1"].outcome.attempt, 2);
  for (const char* k : {"ok-1", "ok-2", "ok-3", "ok-4", "ok-5"}) {
    EXPECT_EQ(done[k].outcome.status, Status::Pass) << k;
    EXPECT_EQ(done[k].outcome.attempt, 1) << k;
  }
}

// A case's own timeout (an included suite's, Note [Included suites]) replaces the run's for it.
TEST_F(OrchestratorTest, ACaseTimeoutOfItsOwnReplacesTheRunsForThatCase) {
  OrchestratorConfig cfg;
  cfg.workers = 1;
  cfg.retries = 0;
  cfg.timeout_s = 1000;
  cfg.case_timeout_s["hang-1"] = 0.3;
  auto done = run({"nap-1", "hang-1", "ok-1"}, cfg);
  EXPECT_EQ(done["nap-1"].outcome.status, Status::Pass);
  EXPECT_EQ(done["hang-1"].outcome.status, Status::Timeout);
  EXPECT_NE(done["hang-1"].outcome.error.find("no result after 0.3 s"), std::string::npos)
      << done["hang-1"].outcome.error;
  EXPECT_EQ(done["ok-1"].outcome.status, Status::Pass);
}

TEST_F(OrchestratorTest, ACaseThatPassesOnItsRetryIsFlaky) {
  OrchestratorConfig cfg;
  cfg.workers = 1;
  auto done = run({"ok-1", "flaky-1", "ok-2"}, cfg);
  EXPECT_EQ(done["flaky-1"].outcome.status, Status::Pass);
  EXPECT_EQ(done["flaky-1"].outcome.attempt, 2);
  EXPECT_TRUE(done["flaky-1"].flaky);
  EXPECT_NE(done["flaky-1"].outcome.reason.find("flaky: attempt 1 was CRASH (SIGSEGV)"), std::string::npos)
      << done["flaky-1"].outcome.reason;
  EXPECT_FALSE(done["ok-2"].flaky);
}

TEST_F(OrchestratorTest, NoRetriesMeansTheFirstFailureIsFinal) {
  OrchestratorConfig cfg;
  cfg.retries = 0;
  auto done = run({"segv-1", "ok-1"}, cfg);
  EXPECT_EQ(done["segv-1"].outcome.status, Status::Crash);
  EXPECT_EQ(done["segv-1"].outcome.attempt, 1);
  EXPECT_EQ(done["ok-1"].outcome.status, Status::Pass);
}

TEST_F(OrchestratorTest, WorkersAreBoundToTheirDeviceSlots) {
  OrchestratorConfig cfg;
  cfg.workers = 2;
  cfg.slots = {"4", "7"};
  cfg.device_env = "SLOT";
  std::vector<std::string> keys;
  for (int i = 0; i < 50; ++i) keys.push_back("slow-" + std::to_string(i));
  auto done = run(keys, cfg);
  std::map<std::string, int> per_slot;
  for (const auto& [k, d] : done) {
    EXPECT_EQ(d.outcome.error.rfind("slot=" + d.slot + " ", 0), 0u)
        << "the worker saw its own slot: " << d.outcome.error;
    ++per_slot[d.slot];
  }
  EXPECT_EQ(per_slot.size(), 2u);
  EXPECT_GT(per_slot["4"], 0);
  EXPECT_GT(per_slot["7"], 0);
}

TEST_F(OrchestratorTest, AWorkerThatCannotStartStopsTheRunWithAReason) {
  std::ofstream(script_) << "#!/bin/bash\necho 'cannot open the device' >&2\nexit 7\n";
  OrchestratorConfig cfg;
  cfg.workers = 1;
  cfg.max_consecutive_deaths = 3;
  std::string why;
  auto done = run({"ok-1", "ok-2"}, cfg, &why);
  EXPECT_TRUE(done.empty());
  EXPECT_NE(why.find("died 3 times in a row without finishing a case (exit 7)"), std::string::npos) << why;
  EXPECT_NE(why.find("cannot open the device"), std::string::npos) << why;
}

TEST(Slots, RangesAndLists) {
  EXPECT_EQ(parse_slots("0-3,6"), (std::vector<std::string>{"0", "1", "2", "3", "6"}));
  EXPECT_EQ(parse_slots("5"), (std::vector<std::string>{"5"}));
  EXPECT_THROW(parse_slots("3-1"), std::invalid_argument);
  EXPECT_THROW(parse_slots("a"), std::invalid_argument);
  EXPECT_THROW(parse_slots("1,,2"), std::invalid_argument);
  EXPECT_EQ(signal_name(11), "SIGSEGV");
  EXPECT_EQ(signal_name(6), "SIGABRT");
}

}  // namespace
}  // namespace gauntlet
