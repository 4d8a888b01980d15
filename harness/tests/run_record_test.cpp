// The run layer's pure parts (gauntlet/run/): the run record (Note [Run record]), case selection,
// what a stored run gives back to repro (Note [Repro from the record]), and a run's summary (Note
// [Grouped failures], Note [Hollow runs]).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "gauntlet/base/error.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/run/restore.h"
#include "gauntlet/run/run_config.h"
#include "gauntlet/run/run_summary.h"
#include "gauntlet/run/selection.h"
#include "gauntlet/store/store.h"

namespace fs = std::filesystem;
using namespace gauntlet;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("gauntlet_run_record_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

// A new database `name` holding one run of backend sim with record `cfg`.
std::unique_ptr<Store> store_with_run(const std::string& name, const RunConfig& cfg, std::int64_t& run) {
  const std::string db = scratch(name).string();
  fs::remove(db);
  auto store = Store::open(db, Store::OpenMode::ReadWrite);
  RunInfo info;
  info.backend = "sim";
  info.backend_version = "sim-0.3.1";
  info.suite = "smoke";
  info.config_json = cfg.dump();
  run = store->begin_run(info);
  return store;
}

Suite suite_of(const std::vector<std::string>& keys) {
  Suite s;
  s.name = "s";
  for (const std::string& k : keys) {
    Case c;
    c.key = CaseKey::parse(k);
    c.text = c.key.str();
    s.cases.push_back(c);
  }
  return s;
}

}  // namespace

TEST(RunConfigTest, EveryFieldRoundTripsAndUnknownFieldsAreKept) {
  RunConfig c;
  c.suites_dir = "/s";
  c.suite_file = "smoke";
  c.cases = 42;
  c.plan = "p.json";
  c.shard_spec = "1/4";
  c.keys_file = "k.txt";
  c.keys = std::vector<std::string>{"op/exp/f32/4/contig/eager"};
  c.set_timing(TimingOptions{7, 1.5, 30, 2});
  c.golden_store = "/g";
  c.golden_release = "r1";
  c.backend_profile = "sim";
  c.set_backend_config(R"({"version": "sim-0.3.1"})");
  c.environment = {{"GAUNTLET_SIM_FAULTS", "op=x"}};
  c.environment_patterns = {"GAUNTLET_*"};
  c.merged_shards = std::vector<std::string>{"0/2", "1/2"};
  c.unfinished_shards = std::vector<std::string>{};
  c.other["bench"] = {{"repetitions", 10}};
  const RunConfig back = RunConfig::parse(c.dump());
  EXPECT_EQ(back.dump(), c.dump());
  EXPECT_EQ(back.suite_file, "smoke");
  EXPECT_EQ(back.cases, 42);
  EXPECT_EQ(back.keys, c.keys);
  EXPECT_EQ(back.backend_config.at("version"), "sim-0.3.1");
  EXPECT_EQ(back.other.at("bench").at("repetitions"), 10);
  TimingOptions t;
  back.apply_timing(t);
  EXPECT_EQ(t.reps, 7);
  EXPECT_EQ(t.min_time_ms, 1.5);
  EXPECT_EQ(t.max_time_ms, 30);
  EXPECT_EQ(t.warmup, 2);
}

TEST(RunConfigTest, AnOldOrDamagedRecordReadsAsNotRecorded) {
  for (const char* text : {"", "not json", "[1, 2]", R"({"reps": "five", "environment": [1], "cases": 1.5})"}) {
    SCOPED_TRACE(text);
    const RunConfig c = RunConfig::parse(text);
    EXPECT_FALSE(c.suite_file.has_value());
    EXPECT_FALSE(c.cases.has_value());
    EXPECT_TRUE(c.environment.empty());
    EXPECT_TRUE(c.environment_patterns.empty());
    TimingOptions t{3, 0, 20, 0};
    c.apply_timing(t);  // nothing recorded: the given options stay
    EXPECT_EQ(t.reps, 3);
  }
  RunConfig c;
  c.set_backend_config("{not json");
  EXPECT_TRUE(c.backend_config.is_null());
}

TEST(SelectionTest, ShardsFiltersAndKeysSelectAndSayWhatIsWrong) {
  EXPECT_EQ(parse_shard("2/5"), std::make_pair(2, 5));
  EXPECT_EQ(parse_shard(""), std::make_pair(0, 1));
  EXPECT_THROW(parse_shard("5/5"), Error);
  EXPECT_THROW(parse_shard("1/2x"), Error);

  const Suite s = suite_of({"op/abs/f32/4/contig/eager", "op/exp/f32/4/contig/eager", "op/exp/f64/4/contig/eager"});
  EXPECT_EQ(select_cases(s, "", "").size(), 3u);
  EXPECT_EQ(select_cases(s, "op/exp/*", "").size(), 2u);
  EXPECT_EQ(select_cases(s, "", "1/3").size(), 1u);
  EXPECT_THROW(select_cases(s, "op/nothing*", ""), Error);

  const fs::path file = scratch("keys.txt");
  std::ofstream(file) << "# the failing ones\n\n  op/exp/f64/4/contig/eager  \n";
  const KeyList keys = read_keys_file(file.string());
  ASSERT_EQ(keys.keys, std::vector<std::string>{"op/exp/f64/4/contig/eager"});
  EXPECT_EQ(keys.lines, std::vector<int>{3});
  const auto selected = select_cases(s, "", "", &keys);
  ASSERT_EQ(selected.size(), 1u);
  EXPECT_EQ(selected[0]->text, "op/exp/f64/4/contig/eager");

  std::ofstream(file) << "op/exp/f64/4/contig/eager\nop/tan/f32/4/contig/eager\n";
  try {
    select_cases(s, "", "", &keys);
    const KeyList other = read_keys_file(file.string());
    select_cases(s, "", "", &other);
    FAIL() << "a key that is not a case of the suite was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("keys.txt:2: op/tan/f32/4/contig/eager is not a case of suite s"),
              std::string::npos)
        << e.what();
  }
  std::ofstream(file) << "two keys on one line\n";
  EXPECT_THROW(read_keys_file(file.string()), Error);
}

TEST(RestoreTest, TheStandaloneCommandPutsTheEnvironmentInFrontAndOnlyWhatDiffers) {
  ReproSetup s;
  s.backend = "sim";
  s.profile = "sim";  // the backend's own: not repeated
  EXPECT_EQ(standalone_repro_command("op/exp/f32/4/contig/eager", s, {}),
            "gauntlet repro op/exp/f32/4/contig/eager --backend sim");
  s.profile = "vendor";
  s.golden_store = "/goldens here";
  s.golden_release = "r1";
  EXPECT_EQ(standalone_repro_command("op/exp/f32/4/contig/eager", s, {{"GAUNTLET_SIM_FAULTS", "op=a; kind=nan"}}),
            "GAUNTLET_SIM_FAULTS='op=a; kind=nan' gauntlet repro op/exp/f32/4/contig/eager --backend sim --profile "
            "vendor --golden-store '/goldens here' --golden-release r1");
}

TEST(RestoreTest, BackendDifferencesNameTheVersionAndEachFieldOfTheConfiguration) {
  Restored r;
  r.info.id = 3;
  r.info.backend = "sim";
  r.info.backend_version = "sim-0.3.1";
  r.backend_config = {{"numerics", "tree"}, {"memory", 100}};
  EXPECT_TRUE(backend_differences(r, "sim", "sim-0.3.1", R"({"numerics": "tree", "memory": 100})").empty());
  EXPECT_TRUE(backend_differences(r, "cpu", "libtorch", "{}").empty()) << "another backend: said elsewhere";
  const auto lines = backend_differences(r, "sim", "sim-0.4.0", R"({"numerics": "none", "faults": ""})");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "backend sim is sim-0.4.0 here; run 3 had sim-0.3.1");
  EXPECT_EQ(lines[1],
            "backend sim's configuration differs from run 3's: faults \"\" here, absent in the run; numerics \"none\" "
            "here, \"tree\" in the run; memory absent here, 100 in the run");
  Outcome stored;
  stored.status = Status::Fail;
  r.stored = stored;
  EXPECT_EQ(reproduced_line(r, Status::Fail), "reproduced: FAIL as stored in run 3\n");
  EXPECT_EQ(reproduced_line(r, Status::Pass), "NOT reproduced: PASS here, FAIL in run 3\n");
  // Note [Failing stage]: the same status from another cause says so.
  stored.status = Status::Crash;
  stored.error = "worker died with SIGABRT while running the case\nlast lines of its stderr:\nfree(): invalid pointer";
  stored.stage = "outputs";
  r.stored = stored;
  EXPECT_EQ(stored_signal(stored.error), "SIGABRT");
  EXPECT_EQ(reproduced_line(r, Status::Crash, "outputs", "SIGABRT"), "reproduced: CRASH as stored in run 3\n");
  EXPECT_EQ(reproduced_line(r, Status::Crash, "outputs", "SIGSEGV"),
            "reproduced: CRASH as stored in run 3, but SIGSEGV where the run saw SIGABRT\n");
  EXPECT_EQ(reproduced_line(r, Status::Crash, "op", "SIGSEGV"),
            "reproduced: CRASH as stored in run 3, but SIGSEGV where the run saw SIGABRT, and while running on the "
            "device where the run failed while copying outputs to the host\n");
}

TEST(RestoreTest, ARunIsRestoredFromItsRecordAndAMissingOneIsAnError) {
  const std::string db = scratch("restore.db").string();
  {
    RunConfig cfg;
    cfg.suites_dir = default_suites_dir();
    cfg.backend_profile = "vendor";
    cfg.set_timing(TimingOptions{9, 0, 20, 1});
    cfg.environment = {{"GAUNTLET_RUN_RECORD_TEST_X", "1"}};
    cfg.environment_patterns = {"GAUNTLET_*"};
    std::int64_t id = 0;
    auto store = store_with_run("restore.db", cfg, id);
    Outcome o;
    o.key = "op/exp/f32/4/contig/eager";
    o.status = Status::Fail;
    o.error = "3 of 4 elements out of tolerance\nmore";
    store->add_result(id, CaseKey::parse(o.key), o);
    store->flush();
  }
  ReproSetup s;
  const auto r = restore_run(s, db, 0, "op/exp/f32/4/contig/eager");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(s.backend, "sim");
  EXPECT_EQ(s.profile, "vendor");
  EXPECT_EQ(s.timing.reps, 9);
  EXPECT_STREQ(std::getenv("GAUNTLET_RUN_RECORD_TEST_X"), "1");
  ASSERT_TRUE(r->stored.has_value());
  EXPECT_NE(restored_text(*r, db).find("stored   FAIL: 3 of 4 elements out of tolerance\n"), std::string::npos);
  ::unsetenv("GAUNTLET_RUN_RECORD_TEST_X");
  ::unsetenv("GAUNTLET_PROFILE");

  ReproSetup none;
  EXPECT_FALSE(restore_run(none, "", 0, "op/exp/f32/4/contig/eager").has_value());
  EXPECT_THROW(restore_run(none, "", 2, "op/exp/f32/4/contig/eager"), Error) << "--run needs --db";
  EXPECT_THROW(restore_run(none, db, 0, "op/abs/f32/4/contig/eager"), Error) << "no run has a result for it";
  EXPECT_THROW(restore_run(none, db, 7, "op/exp/f32/4/contig/eager"), Error) << "no run 7";
}

TEST(RunSummaryTest, StatusListsHollowRunsAndGroupedFailures) {
  EXPECT_EQ(parse_status_list("FAIL,crash"), (std::vector<std::string>{"FAIL", "CRASH"}));
  EXPECT_EQ(parse_status_list("").size(), 5u) << "the failing statuses";
  EXPECT_EQ(parse_status_list("all").size(), std::size(kAllStatuses));
  EXPECT_THROW(parse_status_list("FAIL,BROKEN"), Error);

  EXPECT_EQ(hollow_reason(RanSummary{0, 0, 0}, 0.5), "it has no cases");
  EXPECT_EQ(hollow_reason(RanSummary{10, 4, 0}, 0.5), "no case passed (4 of 10 ran)");
  EXPECT_NE(hollow_reason(RanSummary{10, 4, 4}, 0.5).find("only 4 of 10 cases ran"), std::string::npos);
  EXPECT_EQ(hollow_reason(RanSummary{10, 6, 6}, 0.5), "");

  const std::string db = scratch("summary.db").string();
  RunConfig cfg;
  cfg.cases = 8;
  std::int64_t id = 0;
  auto store = store_with_run("summary.db", cfg, id);
  for (int i = 0; i < 4; ++i) {
    Outcome o;
    o.key = "op/exp/f32/" + std::to_string(i + 1) + "/contig/eager";
    o.status = i < 3 ? Status::Crash : Status::Pass;
    o.error = i < 3 ? "SIGSEGV in the kernel\nbacktrace" : "";
    store->add_result(id, CaseKey::parse(o.key), o);
  }
  store->flush();
  const RunSummary s = summarize_run(*store, id, parse_status_list(""));
  EXPECT_EQ(s.total, 4);
  EXPECT_EQ(s.planned, 8);
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].members.size(), 3u);
  const std::string text = run_summary_text(s, db);
  EXPECT_NE(text.find("4 of 8 cases"), std::string::npos) << text;
  EXPECT_NE(text.find("CRASH       op/exp/f32/1/contig/eager and 2 more with the same error\n"), std::string::npos)
      << text;
  EXPECT_NE(hollow_against(*store, id, id, 0.5, 0.05).find("only 1 of 8 cases ran"), std::string::npos);
  EXPECT_THROW(hollow_against(*store, id, id, 2, 0.05), Error);
  EXPECT_THROW(summarize_run(*store, 99, {}), Error);
}
