// End to end: the run's reporters (Note [Run reporters] in gauntlet/run/reporters.h),
// GitHub Actions output (Note [GitHub Actions]), compare's known failures and ci/qualify.sh's
// report.xml; the real gauntlet binary, real suites, real SQLite files. No torch in this file: it
// builds in seconds once the binary is built.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "e2e_support.h"
#include "gauntlet/base/outcome.h"

namespace fs = std::filesystem;
using e2e::E2E;
using e2e::Result;
using e2e::slurp;

namespace {

// ---- Reporters on run (Note [Run reporters]) and GitHub Actions output (Note [GitHub Actions]) ----

const std::string kJUnitXsd = std::string(GAUNTLET_SOURCE_DIR) + "/harness/tests/junit.xsd";

// xmllint's verdict on `file` against harness/tests/junit.xsd: "" when it validates.
std::string junit_errors(const fs::path& file) {
  if (std::system("command -v xmllint >/dev/null 2>&1") != 0)
    return "xmllint not found: run ci/setup.sh (libxml2-utils)";
  const std::string cmd = "xmllint --noout --schema '" + kJUnitXsd + "' '" + file.string() + "' 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : out;
}

std::size_t occurrences(const std::string& s, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

// An XML attribute of the first element named `element`, as written.
std::string attribute(const std::string& xml, const std::string& element, const std::string& name) {
  const std::size_t at = xml.find("<" + element + " ");
  if (at == std::string::npos) return "";
  const std::size_t a = xml.find(" " + name + "=\"", at);
  if (a == std::string::npos) return "";
  const std::size_t from = a + name.size() + 3;
  return xml.substr(from, xml.find('"', from) - from);
}

// Zero tolerances for f32: mm's f32 cases FAIL.
const std::map<std::string, std::string> kStrictF32 = {
    {"tolerances.yaml", "rules:\n  - dtypes: [f32]\n    rtol: 0\n    atol: 0\n"}};
const char* kReportFilter = "'op/mm/f32/*:op/add/*:op/hardswish/*'";

TEST_F(E2E, RunJUnitHasEveryCaseWithTimeValidatesAndCountsFailuresAsShowDoes) {
  const fs::path suites = suites_with(kStrictF32);
  const std::string db = (dir_ / "r.db").string();
  const fs::path junit = dir_ / "run.xml", lines = dir_ / "run.jsonl", md = dir_ / "run.md";
  const Result r = gauntlet("run --suite smoke --quiet --gate --suites-dir " + suites.string() + " --db " + db +
                                " --filter " + kReportFilter + " --junit " + junit.string() + " --json-lines " +
                                lines.string() + " --markdown " + md.string(),
                            "GITHUB_ACTIONS=");
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.find("::error"), std::string::npos) << "annotations only with --github or GITHUB_ACTIONS=true";
  const std::string xml = slurp(junit);
  EXPECT_EQ(junit_errors(junit), "");

  const Result show = gauntlet("show --db " + db + " --json --status all");
  ASSERT_EQ(show.code, 0) << show.err;
  const auto j = nlohmann::json::parse(show.out);
  std::int64_t failing = 0, skipped = 0;
  for (const auto& [status, n] : j.at("counts").items()) {
    if (gauntlet::is_failure(*gauntlet::parse_status(status))) failing += n.get<std::int64_t>();
    if (status == "SKIP" || status == "UNSUPPORTED") skipped += n.get<std::int64_t>();
  }
  const std::size_t cases = j.at("results").size();
  ASSERT_GT(failing, 0);
  EXPECT_EQ(occurrences(xml, "<testcase "), cases);
  // grouped by op: `<suite>.<kind>.<op>`, the op being the key's second part
  std::size_t by_op = 0;
  for (const auto& result : j.at("results")) {
    const std::string key = result.at("key").get<std::string>();
    const std::string op = key.substr(3, key.find('/', 3) - 3);
    by_op += occurrences(xml, "<testcase classname=\"smoke.op." + op + "\" name=\"" + key + "\"");
  }
  EXPECT_EQ(by_op, cases);
  std::size_t timed = 0;
  for (std::size_t at = xml.find("<testcase "); at != std::string::npos; at = xml.find("<testcase ", at + 1)) {
    timed += xml.substr(at, xml.find('>', at) - at).find(" time=\"") != std::string::npos;
  }
  EXPECT_EQ(timed, cases);
  EXPECT_EQ(std::stoll(attribute(xml, "testsuites", "failures")) + std::stoll(attribute(xml, "testsuites", "errors")),
            failing);
  EXPECT_EQ(std::stoll(attribute(xml, "testsuites", "skipped")), skipped);
  EXPECT_EQ(std::stoull(attribute(xml, "testsuites", "tests")), cases);
  for (const auto& res : j.at("results")) {
    EXPECT_NE(xml.find("name=\"" + res.at("key").get<std::string>() + "\""), std::string::npos) << res.at("key");
  }
  EXPECT_NE(xml.find("repro: gauntlet repro 'op/mm/f32/"), std::string::npos) << "element text keeps its quotes";
  EXPECT_NE(xml.find("--db " + db + " --run 1"), std::string::npos);

  // JSON lines: one per result, each the stored outcome with its run and repro command.
  std::ifstream in(lines);
  std::set<std::string> keys;
  std::size_t n = 0;
  for (std::string line; std::getline(in, line); ++n) {
    const auto l = nlohmann::json::parse(line);
    EXPECT_EQ(l.at("run"), 1);
    EXPECT_EQ(l.at("repro").get<std::string>().rfind("gauntlet repro '", 0), 0u);
    keys.insert(l.at("key").get<std::string>());
  }
  EXPECT_EQ(n, cases);
  EXPECT_EQ(keys.size(), cases);
  const std::string markdown = slurp(md);
  EXPECT_NE(markdown.find("## Failures (" + std::to_string(failing) + ")"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("**FAIL** (exit code 1): gate: FAIL: " + std::to_string(failing) + " of " +
                          std::to_string(cases) + " cases failed"),
            std::string::npos)
      << markdown;
}

// --failed-keys (the reporter added as one listener file and one registration line): the failing
// keys of the run, sorted, the same as `show` counts them, and a run given them by --keys-file runs
// exactly those cases. A run with no failure writes an empty file.
TEST_F(E2E, FailedKeysListsTheFailuresAndKeysFileRunsThemAgain) {
  const fs::path suites = suites_with(kStrictF32);
  const std::string db = (dir_ / "k.db").string();
  const fs::path failed = dir_ / "failed.txt";
  const std::string run = "run --suite smoke --quiet --suites-dir " + suites.string() + " --db " + db;
  ASSERT_EQ(gauntlet(run + " --filter " + kReportFilter + " --failed-keys " + failed.string()).code, 0);
  const Result show = gauntlet("show --db " + db + " --json --status all");
  ASSERT_EQ(show.code, 0) << show.err;
  std::vector<std::string> failing;
  const nlohmann::json stored = nlohmann::json::parse(show.out);  // alive through the loop
  for (const auto& res : stored.at("results")) {
    if (gauntlet::is_failure(*gauntlet::parse_status(res.at("status").get<std::string>()))) {
      failing.push_back(res.at("key").get<std::string>());
    }
  }
  std::sort(failing.begin(), failing.end());
  ASSERT_FALSE(failing.empty());
  std::string expected;
  for (const std::string& k : failing) expected += k + "\n";
  EXPECT_EQ(slurp(failed), expected);

  const Result again = gauntlet(run + " --keys-file " + failed.string() + " --failed-keys " + failed.string());
  ASSERT_EQ(again.code, 0) << again.err;
  const Result rerun = gauntlet("show --db " + db + " --run 2 --json --status all");
  ASSERT_EQ(rerun.code, 0) << rerun.err;
  EXPECT_EQ(nlohmann::json::parse(rerun.out).at("results").size(), failing.size());
  EXPECT_EQ(slurp(failed), expected) << "the same cases fail again";

  ASSERT_EQ(gauntlet(run + " --filter 'op/add/bf16/*' --failed-keys " + failed.string()).code, 0);
  EXPECT_EQ(slurp(failed), "");
}

// A run stopped by --max-failures, then resumed with the reporters: they cover the whole run, each
// case once.
TEST_F(E2E, ResumedRunsReportsCoverEveryResultOnce) {
  const fs::path suites = suites_with(kStrictF32);
  const std::string db = (dir_ / "r.db").string();
  const fs::path junit = dir_ / "run.xml", lines = dir_ / "run.jsonl";
  const std::string common = "--quiet --db " + db + " --junit " + junit.string() + " --json-lines " + lines.string();
  const Result first = gauntlet("run --suite smoke --workers 0 --max-failures 1 --suites-dir " + suites.string() +
                                " --filter " + kReportFilter + " " + common);
  ASSERT_EQ(first.code, 1) << first.err;
  const std::string partial = slurp(junit);
  EXPECT_EQ(junit_errors(junit), "");
  EXPECT_NE(partial.find("name=\"finished_at\" value=\"unfinished\""), std::string::npos);
  const Result resumed = gauntlet("run --resume 1 --workers 0 " + common);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const auto j = nlohmann::json::parse(gauntlet("show --db " + db + " --json --status all").out);
  const std::size_t cases = j.at("results").size();
  EXPECT_LT(occurrences(partial, "<testcase "), cases);
  const std::string xml = slurp(junit);
  EXPECT_EQ(junit_errors(junit), "");
  EXPECT_EQ(occurrences(xml, "<testcase "), cases);
  std::ifstream in(lines);
  std::set<std::string> keys;
  std::size_t n = 0;
  for (std::string line; std::getline(in, line); ++n)
    keys.insert(nlohmann::json::parse(line).at("key").get<std::string>());
  EXPECT_EQ(n, cases);
  EXPECT_EQ(keys.size(), cases);
}

TEST_F(E2E, GitHubActionsGetsStepSummariesAndAnnotationsFromRunAndCompare) {
  const std::string db = (dir_ / "gh.db").string();
  const fs::path summary = dir_ / "summary.md";
  const std::string env = "GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=" + summary.string();
  const std::string filter = " --filter 'op/mm/f32/*:op/add/*'";  // add's integer cases pass whatever the tolerance
  // Release a passes; b, with zero tolerances, fails mm's f32 cases.
  const Result a = gauntlet("run --suite smoke --quiet --gate --release a --db " + db + filter, env);
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out.find("::error"), std::string::npos) << a.out;
  std::string s = slurp(summary);
  EXPECT_NE(s.find("### gauntlet run 1: a (cpu, smoke)"), std::string::npos) << s;
  EXPECT_NE(s.find("**PASS** (exit code 0)"), std::string::npos) << s;

  const fs::path suites = suites_with(kStrictF32);
  // The suite file lies in the workspace: the annotations name it, relative to it.
  const Result b =
      gauntlet("run --suite smoke --quiet --gate --release b --suites-dir " + suites.string() + " --db " + db + filter,
               env + " GITHUB_WORKSPACE=" + dir_.string());
  ASSERT_EQ(b.code, 1) << b.err;
  EXPECT_NE(b.out.find("::error file=suites/smoke.yaml,title=FAIL op/mm/f32/"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("%0Arepro: gauntlet repro 'op/mm/f32/"), std::string::npos) << b.out;
  s = slurp(summary);
  EXPECT_NE(s.find("### gauntlet run 2: b (cpu, smoke)"), std::string::npos) << s;
  EXPECT_NE(s.find("**FAIL** (exit code 1): gate: FAIL: "), std::string::npos) << s;
  EXPECT_NE(s.find("gauntlet repro 'op/mm/f32/"), std::string::npos) << s;

  const Result cmp = gauntlet("compare --db " + db + " --gate accuracy --quiet", env);
  EXPECT_EQ(cmp.code, 1) << cmp.out << cmp.err;
  EXPECT_NE(cmp.out.find("::error title=status-change op/mm/f32/"), std::string::npos) << cmp.out;
  s = slurp(summary);
  EXPECT_NE(s.find("### gauntlet compare: b vs a (cpu, smoke)"), std::string::npos) << s;
  EXPECT_NE(s.find("**FAIL**: "), std::string::npos) << s;
  EXPECT_NE(s.find("gate accuracy: FAIL: "), std::string::npos) << s;

  // Release c fails as b did: known failures, listed apart, not gating, not annotated.
  ASSERT_EQ(
      gauntlet("run --suite smoke --quiet --release c --suites-dir " + suites.string() + " --db " + db + filter).code,
      0);
  const fs::path cx = dir_ / "compare.xml", cj = dir_ / "compare.json";
  const Result known = gauntlet(
      "compare --db " + db + " --gate accuracy --quiet --junit " + cx.string() + " --json " + cj.string(), env);
  EXPECT_EQ(known.code, 0) << known.out << known.err;
  EXPECT_EQ(known.out.find("::error"), std::string::npos) << known.out;
  EXPECT_EQ(junit_errors(cx), "");
  const auto kj = nlohmann::json::parse(slurp(cj));
  EXPECT_GT(kj.at("known_failures").size(), 0u);
  EXPECT_EQ(kj.at("counts").at("known_failures"), kj.at("known_failures").size());
  EXPECT_NE(
      slurp(cx).find("<testsuite name=\"known-failures\" tests=\"" + std::to_string(kj.at("known_failures").size())),
      std::string::npos);
  EXPECT_NE(slurp(summary).find("Known failures (failing in both runs; not regressions, not gating): " +
                                std::to_string(kj.at("known_failures").size())),
            std::string::npos);
  // Without GITHUB_ACTIONS, --github asks for the same.
  const Result flag = gauntlet("compare --db " + db + " --baseline 1 --run 2 --gate accuracy --quiet --github",
                               "GITHUB_ACTIONS= GITHUB_STEP_SUMMARY=" + summary.string());
  EXPECT_NE(flag.out.find("::error title=status-change"), std::string::npos) << flag.out;
}

// The first qualification of a database leaves report.xml (the run's own JUnit); the second adds
// compare's (compare.xml). ci/qualify.sh on the binary under test (GAUNTLET_BIN), on cpu.
TEST_F(E2E, QualifyLeavesReportXmlFromTheFirstRun) {
  const fs::path out = dir_ / "qualify";
  const std::string script = std::string(GAUNTLET_SOURCE_DIR) + "/ci/qualify.sh";
  const std::string env = "GAUNTLET_BIN=" + std::string(GAUNTLET_BIN) + " BACKEND=cpu OUT=" + out.string();
  auto qualify = [&](const std::string& release) {
    const std::string cmd = env + " RELEASE=" + release + " bash " + script + " --quiet --filter 'op/exp/f32/*' >" +
                            (dir_ / "q.log").string() + " 2>&1";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  ASSERT_EQ(qualify("r1"), 0) << slurp(dir_ / "q.log");
  ASSERT_TRUE(fs::exists(out / "report.xml")) << slurp(dir_ / "q.log");
  EXPECT_EQ(junit_errors(out / "report.xml"), "");
  EXPECT_NE(slurp(out / "report.xml").find("<testsuites name=\"gauntlet run 1\""), std::string::npos);
  EXPECT_FALSE(fs::exists(out / "compare.xml"));
  ASSERT_EQ(qualify("r2"), 0) << slurp(dir_ / "q.log");
  EXPECT_NE(slurp(out / "report.xml").find("<testsuites name=\"gauntlet run 2\""), std::string::npos);
  ASSERT_TRUE(fs::exists(out / "compare.xml")) << slurp(dir_ / "q.log");
  EXPECT_EQ(junit_errors(out / "compare.xml"), "");
}

// ci/setup.sh on a machine with neither Node.js nor npm (a fresh Debian 12) installs both from
// Debian, then runs npm ci for the dashboard; a second run touches nothing. Container-free: the
// script runs on a PATH of stubs (dpkg-query answering that only nodejs and npm are missing,
// apt-get and npm that log what they are asked), so nothing is installed on this machine.
TEST_F(E2E, SetupInstallsNodeAndNpmFromDebianWhenTheMachineHasNeither) {
  const fs::path tree = dir_ / "tree", bin = dir_ / "bin", log = dir_ / "calls.log";
  fs::create_directories(tree / "ci");
  fs::create_directories(tree / "dashboards");
  fs::create_directories(bin);
  fs::copy_file(fs::path(GAUNTLET_SOURCE_DIR) / "ci/setup.sh", tree / "ci/setup.sh");
  fs::copy_file(fs::path(GAUNTLET_SOURCE_DIR) / "dashboards/package-lock.json", tree / "dashboards/package-lock.json");
  for (const char* tool : {"grep", "id", "readlink", "dirname", "head", "touch", "cat", "mkdir", "chmod"}) {
    const std::string cmd = std::string("command -v ") + tool + " >" + (dir_ / "where").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << tool;
    std::string where = slurp(dir_ / "where");
    where.erase(where.find_last_not_of('\n') + 1);
    fs::create_symlink(where, bin / tool);
  }
  const auto script = [&](const char* name, const std::string& body) {
    std::ofstream(bin / name) << "#!/bin/bash\n" << body;
    fs::permissions(bin / name, fs::perms::owner_all);
  };
  script("dpkg-query",
         "case \"${@: -1}\" in nodejs|npm) echo -n 'unknown ok not-installed';; *) echo -n 'install ok installed';; "
         "esac\n");
  // apt-get install puts a node and an npm on PATH, as Debian's packages would.
  script("apt-get", "echo \"apt-get $*\" >> '" + log.string() + "'\n" +
                        "if [ \"$1\" = install ]; then printf '#!/bin/bash\\necho \"npm $*\" >> " + log.string() +
                        "\\n[ \"$1\" = ci ] && mkdir -p node_modules\\n' > '" + (bin / "npm").string() + "'; printf " +
                        "'#!/bin/bash\\n' > '" + (bin / "node").string() + "'; chmod +x '" + (bin / "npm").string() +
                        "' '" + (bin / "node").string() + "'; fi\n");
  script("sudo", "\"$@\"\n");
  const std::string run = "env -i PATH='" + bin.string() + "' /bin/bash '" + (tree / "ci/setup.sh").string() + "' >" +
                          (dir_ / "out").string() + " 2>&1";
  ASSERT_EQ(std::system(run.c_str()), 0) << slurp(dir_ / "out");
  const std::string calls = slurp(log);
  EXPECT_NE(calls.find("apt-get update"), std::string::npos) << calls;
  EXPECT_NE(calls.find("apt-get install -y -qq --no-install-recommends nodejs npm\n"), std::string::npos) << calls;
  EXPECT_NE(calls.find("npm ci "), std::string::npos) << calls;
  EXPECT_NE(slurp(dir_ / "out").find("ci/setup.sh: installing nodejs npm"), std::string::npos) << slurp(dir_ / "out");
  EXPECT_TRUE(fs::exists(tree / "dashboards/node_modules"));
  // Everything present now: a second run prints nothing and asks for nothing.
  ASSERT_EQ(std::system(run.c_str()), 0) << slurp(dir_ / "out");
  EXPECT_EQ(slurp(dir_ / "out"), "");
  EXPECT_EQ(slurp(log), calls);
}

}  // namespace
