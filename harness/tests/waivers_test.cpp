// Waiver files: parsing, error messages with their file:line, matching, expiry, today's date.
#include "gauntlet/analysis/waivers.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace gauntlet {
namespace {

namespace fs = std::filesystem;

const std::string kValid = R"(# waivers.yaml
waivers:
  - case: "op/gelu/bf16/*"
    change: speed
    reason: "tanh approximation in 2.4; fixed in 2.5"
    owner: alice@example.com
    expires: 2027-01-31

  - case: op/softmax/*/eager-bwd
    change: error-growth
    reason: fused kernel
    owner: bob
    expires: "2026-12-01"
  - case: "op/*"
    reason: everything else
    owner: carol
    expires: 2028-02-29
)";

// The message of the WaiverError that parsing `text` throws ("" when it throws none).
std::string error_of(const std::string& text) {
  try {
    Waivers::parse(text, "waivers.yaml");
  } catch (const WaiverError& e) {
    return e.what();
  }
  return "";
}

// `text` fails with a message that starts with `prefix` and contains `part`.
void expect_error(const std::string& text, const std::string& prefix, const std::string& part) {
  const std::string msg = error_of(text);
  SCOPED_TRACE(msg);
  EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "expected prefix " << prefix;
  EXPECT_NE(msg.find(part), std::string::npos) << "expected " << part;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line";
}

// Sets or clears GAUNTLET_TODAY for one test and restores it afterwards.
class TodayEnv {
 public:
  TodayEnv() {
    if (const char* v = std::getenv("GAUNTLET_TODAY")) saved_ = v;
  }
  ~TodayEnv() {
    if (saved_) {
      ::setenv("GAUNTLET_TODAY", saved_->c_str(), 1);
    } else {
      ::unsetenv("GAUNTLET_TODAY");
    }
  }
  void set(const char* v) { ::setenv("GAUNTLET_TODAY", v, 1); }
  void clear() { ::unsetenv("GAUNTLET_TODAY"); }

 private:
  std::optional<std::string> saved_;
};

TEST(Waivers, ParsesValidFile) {
  Waivers w = Waivers::parse(kValid, "waivers.yaml");
  ASSERT_EQ(w.all().size(), 3u);
  const Waiver& a = w.all()[0];
  EXPECT_EQ(a.pattern, "op/gelu/bf16/*");
  EXPECT_EQ(a.gate, Gate::Speed);
  EXPECT_FALSE(a.change.has_value());
  EXPECT_EQ(a.reason, "tanh approximation in 2.4; fixed in 2.5");
  EXPECT_EQ(a.owner, "alice@example.com");
  EXPECT_EQ(a.expires, "2027-01-31");
  EXPECT_EQ(a.where, "waivers.yaml:3");
  EXPECT_EQ(a.change_str(), "speed");

  const Waiver& b = w.all()[1];
  EXPECT_FALSE(b.gate.has_value());
  EXPECT_EQ(b.change, Change::ErrorGrowth);
  EXPECT_EQ(b.expires, "2026-12-01");
  EXPECT_EQ(b.where, "waivers.yaml:9");
  EXPECT_EQ(b.change_str(), "error-growth");

  const Waiver& c = w.all()[2];
  EXPECT_FALSE(c.gate.has_value());
  EXPECT_FALSE(c.change.has_value());
  EXPECT_EQ(c.change_str(), "any");
  EXPECT_EQ(c.where, "waivers.yaml:14");
}

TEST(Waivers, EmptyFilesGiveNoWaivers) {
  for (const char* text : {"", "# only a comment\n", "waivers: []\n", "waivers:\n", "---\n"}) {
    SCOPED_TRACE(text);
    Waivers w = Waivers::parse(text, "waivers.yaml");
    EXPECT_TRUE(w.empty());
    EXPECT_FALSE(w.match("op/add/f32/8/contig/eager", Change::Slower, Gate::Speed, "2026-01-01"));
  }
  EXPECT_TRUE(Waivers().all().empty());
}

TEST(Waivers, AcceptsEveryGateAndRegressionName) {
  const char* names[] = {"accuracy",  "speed",        "coverage",     "status-change", "error-growth",
                         "xpass",     "new-fallback", "graph-breaks", "recompiles",    "compile-time",
                         "first-run", "peak-memory",  "missing",      "slower",        "SPEED"};
  for (const char* name : names) {
    SCOPED_TRACE(name);
    const std::string text = std::string("waivers:\n  - case: a\n    change: ") + name +
                             "\n    reason: r\n    owner: o\n    expires: 2027-01-01\n";
    Waivers w = Waivers::parse(text, "w.yaml");
    ASSERT_EQ(w.all().size(), 1u);
    EXPECT_TRUE(w.all()[0].gate.has_value() != w.all()[0].change.has_value());
  }
  Waivers w = Waivers::parse("waivers:\n  - {case: a, change: peak-memory, reason: r, owner: o, expires: 2027-01-01}\n",
                             "w.yaml");
  EXPECT_EQ(w.all()[0].change, Change::PeakMemory);
  EXPECT_EQ(w.all()[0].change_str(), "peak-memory");
}

TEST(Waivers, FlowStyleWaiversOnOneLineGetDistinctWhere) {
  Waivers w = Waivers::parse(
      "waivers: [{case: a, reason: r, owner: o, expires: 2027-01-01}, {case: b, reason: r, owner: "
      "o, "
      "expires: 2027-01-01}]\n",
      "w.yaml");
  ASSERT_EQ(w.all().size(), 2u);
  EXPECT_EQ(w.all()[0].where, "w.yaml:1");
  EXPECT_NE(w.all()[1].where, w.all()[0].where);
  EXPECT_EQ(w.all()[1].where.rfind("w.yaml:1:", 0), 0u);
}

// --- errors ------------------------------------------------------------------------------------

TEST(WaiverErrors, MissingField) {
  expect_error("waivers:\n  - case: a\n    reason: r\n    expires: 2027-01-01\n", "waivers.yaml:2: owner:", "missing");
  expect_error("waivers:\n  - reason: r\n    owner: o\n    expires: 2027-01-01\n", "waivers.yaml:2: case:", "missing");
  expect_error("waivers:\n  - case: a\n    reason: r\n    owner: o\n", "waivers.yaml:2: expires:", "missing");
}

TEST(WaiverErrors, EmptyField) {
  expect_error("waivers:\n  - case: a\n    reason:\n    owner: o\n    expires: 2027-01-01\n",
               "waivers.yaml:3: reason:", "must not be empty");
  expect_error("waivers:\n  - case: a\n    reason: r\n    owner: \"  \"\n    expires: 2027-01-01\n",
               "waivers.yaml:4: owner:", "must not be empty");
  expect_error("waivers:\n  - case: \"\"\n    reason: r\n    owner: o\n    expires: 2027-01-01\n",
               "waivers.yaml:2: case:", "must not be empty");
  expect_error("waivers:\n  - case: [a, b]\n    reason: r\n    owner: o\n    expires: 2027-01-01\n",
               "waivers.yaml:2: case:", "single value");
}

TEST(WaiverErrors, UnknownKey) {
  expect_error("waivers:\n  - case: a\n    reason: r\n    owner: o\n    expire: 2027-01-01\n",
               "waivers.yaml:5: expire:", "unknown key (allowed: case, change, reason, owner, expires)");
  expect_error("waiver:\n  - case: a\n", "waivers.yaml:1: waiver:", "unknown key");
  expect_error("waivers: []\nowner: me\n", "waivers.yaml:2: owner:", "unknown key");
}

TEST(WaiverErrors, KeyGivenTwice) {
  expect_error(
      "waivers:\n  - case: a\n    reason: r\n    owner: o\n    expires: 2027-01-01\n    reason: "
      "s\n",
      "waivers.yaml:6: reason:", "given twice");
}

TEST(WaiverErrors, BadDate) {
  const std::string head = "waivers:\n  - case: a\n    reason: r\n    owner: o\n    expires: ";
  expect_error(head + "tomorrow\n", "waivers.yaml:5: expires: 'tomorrow' is not a date (YYYY-MM-DD)", "");
  expect_error(head + "2027-02-30\n", "waivers.yaml:5: expires: '2027-02-30' is not a date", "");
  expect_error(head + "2027-02-29\n", "waivers.yaml:5: expires:", "not a date");  // not a leap year
  expect_error(head + "2100-02-29\n", "waivers.yaml:5: expires:", "not a date");  // century
  expect_error(head + "2027-13-01\n", "waivers.yaml:5: expires:", "not a date");
  expect_error(head + "2027-00-10\n", "waivers.yaml:5: expires:", "not a date");
  expect_error(head + "2027-04-31\n", "waivers.yaml:5: expires:", "not a date");
  expect_error(head + "2027-1-31\n", "waivers.yaml:5: expires:", "not a date");
  expect_error(head + "2027/01/31\n", "waivers.yaml:5: expires:", "not a date");
  expect_error(head + "2027-01-31T00:00:00Z\n", "waivers.yaml:5: expires:", "not a date");
  EXPECT_EQ(error_of(head + "2028-02-29\n"), "");  // leap year
  EXPECT_EQ(error_of(head + "2000-02-29\n"), "");  // divisible by 400
}

TEST(WaiverErrors, BadChange) {
  const std::string head = "waivers:\n  - case: a\n    reason: r\n    owner: o\n    expires: 2027-01-01\n    change: ";
  expect_error(head + "slow\n", "waivers.yaml:6: change: 'slow' is not a gate or a change",
               "accuracy, speed, coverage, status-change");
  expect_error(head + "faster\n", "waivers.yaml:6: change: 'faster'", "not a regression");
  expect_error(head + "new\n", "waivers.yaml:6: change:", "not a regression");
}

TEST(WaiverErrors, NotAList) {
  expect_error("waivers:\n  case: a\n", "waivers.yaml:1: waivers:", "must be a list");
  expect_error("waivers: nothing\n", "waivers.yaml:1: waivers:", "must be a list");
  expect_error("waivers:\n  - just a string\n", "waivers.yaml:2:", "must be a map");
  expect_error("- case: a\n", "waivers.yaml:1:", "top level");
  expect_error("just text\n", "waivers.yaml:1:", "top level");
  expect_error("{}\n", "waivers.yaml:1:", "top level");
}

TEST(WaiverErrors, Duplicate) {
  const std::string text = R"(waivers:
  - case: op/a/*
    change: speed
    reason: r
    owner: o
    expires: 2027-01-01
  - case: op/a/*
    change: slower
    reason: different change, fine
    owner: o
    expires: 2027-01-01
  - case: op/a/*
    change: Speed
    reason: same case and change
    owner: p
    expires: 2028-01-01
)";
  expect_error(text, "waivers.yaml:12: duplicate waiver for case 'op/a/*' and change 'speed'",
               "(first at waivers.yaml:2)");
  const std::string any =
      "waivers:\n  - {case: x, reason: r, owner: o, expires: 2027-01-01}\n"
      "  - {case: x, reason: s, owner: o, expires: 2027-01-01}\n";
  expect_error(any, "waivers.yaml:3: duplicate waiver for case 'x' and change 'any'", "waivers.yaml:2");
}

TEST(WaiverErrors, MalformedYaml) { expect_error("waivers:\n  - case: [a\n", "waivers.yaml:", "malformed YAML"); }

TEST(WaiverErrors, LoadNamesFileAndLine) {
  EXPECT_THROW(
      {
        try {
          Waivers::load("/nonexistent/dir/waivers.yaml");
        } catch (const WaiverError& e) {
          EXPECT_STREQ(e.what(), "/nonexistent/dir/waivers.yaml: no such file");
          throw;
        }
      },
      WaiverError);

  const fs::path dir = fs::temp_directory_path() / ("gauntlet_waivers_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "waivers.yaml").string();
  {
    std::ofstream out(path);
    out << "waivers:\n  - case: a\n    reason: r\n    owner: o\n    expires: tomorrow\n";
  }
  try {
    Waivers::load(path);
    ADD_FAILURE() << "no error";
  } catch (const WaiverError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":5: expires: 'tomorrow' is not a date (YYYY-MM-DD)");
  }
  try {
    Waivers::load(dir.string());  // a directory
    ADD_FAILURE() << "no error";
  } catch (const WaiverError& e) {
    EXPECT_EQ(std::string(e.what()), dir.string() + ": a folder, not a file");
  }
  {
    std::ofstream out(path);
    out << kValid;
  }
  Waivers w = Waivers::load(path);
  ASSERT_EQ(w.all().size(), 3u);
  EXPECT_EQ(w.all()[1].where, path + ":9");
  fs::remove_all(dir);
}

TEST(Waivers, CheckedInFileLoads) {
  Waivers w = Waivers::load(std::string(GAUNTLET_SOURCE_DIR) + "/waivers.yaml");
  for (const Waiver& x : w.all()) EXPECT_TRUE(is_iso_date(x.expires)) << x.where;
}

// --- matching ----------------------------------------------------------------------------------

const std::string kToday = "2026-06-01";

TEST(WaiverMatch, ByGlob) {
  Waivers w = Waivers::parse(
      "waivers:\n  - {case: \"op/gelu/bf16/*\", reason: r, owner: o, expires: 2027-01-31}\n"
      "  - {case: \"op/ab?/f32/8/contig/eager\", reason: q, owner: p, expires: 2027-01-31}\n",
      "w.yaml");
  auto m = w.match("op/gelu/bf16/8x8/contig/eager", Change::StatusChange, Gate::Accuracy, kToday);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->where, "w.yaml:2");
  EXPECT_EQ(m->reason, "r");
  EXPECT_EQ(m->owner, "o");
  EXPECT_EQ(m->expires, "2027-01-31");
  EXPECT_FALSE(m->expired);
  EXPECT_FALSE(w.match("op/gelu/f32/8x8/contig/eager", Change::StatusChange, Gate::Accuracy, kToday));
  auto q = w.match("op/abs/f32/8/contig/eager", Change::Slower, Gate::Speed, kToday);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->reason, "q");
  EXPECT_FALSE(w.match("op/abs/f32/8/contig/eager-bwd", Change::Slower, Gate::Speed, kToday));
  EXPECT_FALSE(w.match("op/absolute/f32/8/contig/eager", Change::Slower, Gate::Speed, kToday));
}

TEST(WaiverMatch, ByGateAndByChange) {
  Waivers w = Waivers::parse(
      "waivers:\n"
      "  - {case: \"op/a/*\", change: speed, reason: gate, owner: o, expires: 2027-01-31}\n"
      "  - {case: \"op/b/*\", change: graph-breaks, reason: change, owner: o, expires: "
      "2027-01-31}\n"
      "  - {case: \"op/c/*\", reason: any, owner: o, expires: 2027-01-31}\n",
      "w.yaml");
  // A gate covers its changes only.
  EXPECT_TRUE(w.match("op/a/x", Change::Slower, Gate::Speed, kToday));
  EXPECT_FALSE(w.match("op/a/x", Change::StatusChange, Gate::Accuracy, kToday));
  EXPECT_FALSE(w.match("op/a/x", Change::CompileTime, Gate::Coverage, kToday));
  // A change covers that change only, not the rest of its gate.
  EXPECT_TRUE(w.match("op/b/x", Change::GraphBreaks, Gate::Coverage, kToday));
  EXPECT_FALSE(w.match("op/b/x", Change::Recompiles, Gate::Coverage, kToday));
  // No change: any regression.
  EXPECT_TRUE(w.match("op/c/x", Change::StatusChange, Gate::Accuracy, kToday));
  EXPECT_TRUE(w.match("op/c/x", Change::Missing, Gate::Coverage, kToday));
  EXPECT_TRUE(w.match("op/c/x", Change::Slower, Gate::Speed, kToday));
  // Changes that are not regressions are never waived.
  EXPECT_FALSE(w.match("op/c/x", Change::Faster, Gate::Speed, kToday));
  EXPECT_FALSE(w.match("op/c/x", Change::Fixed, Gate::Accuracy, kToday));
  EXPECT_FALSE(w.match("op/c/x", Change::New, Gate::Coverage, kToday));
}

TEST(WaiverMatch, FirstMatchWins) {
  Waivers w = Waivers::parse(
      "waivers:\n"
      "  - {case: \"op/gelu/*\", change: slower, reason: narrow, owner: o, expires: 2027-01-31}\n"
      "  - {case: \"op/*\", reason: broad, owner: o, expires: 2027-01-31}\n"
      "  - {case: \"op/gelu/*\", reason: shadowed, owner: o, expires: 2027-01-31}\n",
      "w.yaml");
  EXPECT_EQ(w.match("op/gelu/f32", Change::Slower, Gate::Speed, kToday)->reason, "narrow");
  EXPECT_EQ(w.match("op/gelu/f32", Change::XPass, Gate::Accuracy, kToday)->reason, "broad");
  EXPECT_EQ(w.match("op/add/f32", Change::Slower, Gate::Speed, kToday)->reason, "broad");
}

TEST(WaiverMatch, Expiry) {
  Waivers w = Waivers::parse(
      "waivers:\n"
      "  - {case: \"op/a/*\", reason: old, owner: o, expires: 2026-02-28}\n"
      "  - {case: \"op/*\", reason: fresh, owner: o, expires: 2030-01-01}\n",
      "w.yaml");
  auto on_the_day = w.match("op/a/x", Change::Slower, Gate::Speed, "2026-02-28");
  ASSERT_TRUE(on_the_day);
  EXPECT_FALSE(on_the_day->expired);
  EXPECT_FALSE(w.match("op/a/x", Change::Slower, Gate::Speed, "2025-12-31")->expired);
  auto day_after = w.match("op/a/x", Change::Slower, Gate::Speed, "2026-03-01");
  ASSERT_TRUE(day_after);
  EXPECT_TRUE(day_after->expired);
  EXPECT_EQ(day_after->reason, "old");  // first match wins, expired or not
  EXPECT_TRUE(w.match("op/a/x", Change::Slower, Gate::Speed, "2027-01-01")->expired);

  // `today` is the caller's: a malformed one is a bug, not the user's error.
  EXPECT_THROW(w.match("op/a/x", Change::Slower, Gate::Speed, "2026-02-30"), std::invalid_argument);
  EXPECT_THROW(w.match("op/a/x", Change::Slower, Gate::Speed, "today"), std::invalid_argument);
}

TEST(WaiverMatch, Unused) {
  Waivers w = Waivers::parse(kValid, "waivers.yaml");
  std::vector<Finding> findings(2);
  findings[0].key = "op/gelu/bf16/8/contig/eager";
  findings[0].change = Change::Slower;
  findings[0].waiver = w.match(findings[0].key, findings[0].change, Gate::Speed, kToday);
  findings[1].key = "op/zzz";
  findings[1].change = Change::Slower;
  auto stale = w.unused(findings);
  ASSERT_EQ(stale.size(), 2u);
  EXPECT_EQ(stale[0]->where, "waivers.yaml:9");
  EXPECT_EQ(stale[1]->where, "waivers.yaml:14");
  EXPECT_EQ(w.unused({}).size(), 3u);
}

// --- dates -------------------------------------------------------------------------------------

TEST(WaiverDates, IsIsoDate) {
  EXPECT_TRUE(is_iso_date("2027-01-31"));
  EXPECT_TRUE(is_iso_date("2024-02-29"));
  EXPECT_TRUE(is_iso_date("2000-02-29"));
  EXPECT_TRUE(is_iso_date("2027-12-31"));
  EXPECT_FALSE(is_iso_date("1900-02-29"));
  EXPECT_FALSE(is_iso_date("2027-02-30"));
  EXPECT_FALSE(is_iso_date("2027-06-31"));
  EXPECT_FALSE(is_iso_date("2027-12-32"));
  EXPECT_FALSE(is_iso_date("2027-01-00"));
  EXPECT_FALSE(is_iso_date("0000-01-01"));
  EXPECT_FALSE(is_iso_date("2027-01-3a"));
  EXPECT_FALSE(is_iso_date("+027-01-31"));
  EXPECT_FALSE(is_iso_date(" 2027-01-31"));
  EXPECT_FALSE(is_iso_date(""));
}

TEST(WaiverDates, TodayFromClockAndOverride) {
  TodayEnv env;
  env.clear();
  const std::string now = today_utc();
  EXPECT_TRUE(is_iso_date(now)) << now;
  EXPECT_GE(now, std::string("2024-01-01"));

  env.set("2026-03-01");
  EXPECT_EQ(today_utc(), "2026-03-01");
  env.set("");  // empty: unset, the clock again
  EXPECT_TRUE(is_iso_date(today_utc()));
  EXPECT_NE(today_utc(), "2026-03-01");

  for (const char* bad : {"2026-02-30", "tomorrow", "2026-3-1", "20260301"}) {
    SCOPED_TRACE(bad);
    env.set(bad);
    try {
      today_utc();
      ADD_FAILURE() << "no error";
    } catch (const WaiverError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("GAUNTLET_TODAY: '") + bad + "' is not a date (YYYY-MM-DD)");
    }
  }
}

}  // namespace
}  // namespace gauntlet
