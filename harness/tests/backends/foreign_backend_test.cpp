// End to end on backends this team did not write for Gauntlet (libtb_*.so, test_backend.cpp):
// the real gauntlet binary runs the real suites on each and the stored statuses, errors and
// fallbacks must tell a vendor what to fix (issue: any PrivateUse1 backend, as vendors ship them).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "e2e_support.h"
#include "gauntlet/base/case_key.h"
#include "gauntlet/base/outcome.h"
#include "gauntlet/store/store.h"

namespace {

using e2e::Result;
namespace fs = std::filesystem;
using gauntlet::Status;

std::string lib(const std::string& name) { return std::string(GAUNTLET_TEST_BACKENDS) + "/lib" + name + ".so"; }

struct Row {
  Status status;
  std::string error;
  std::vector<std::string> fallback_ops;
  std::string stage;
};
using Rows = std::map<std::string, Row>;

Rows read_rows(const fs::path& db, std::int64_t run = 0) {
  auto store = gauntlet::Store::open(db.string(), gauntlet::Store::OpenMode::ReadOnly);
  const std::int64_t id = run > 0 ? run : *store->latest_run();
  Rows rows;
  for (const auto& r : store->results(id)) {
    rows[r.outcome.key] = {r.outcome.status, r.outcome.error, r.outcome.fallback_ops, r.outcome.stage};
  }
  return rows;
}

// One statement on a database file, as a user's sqlite3 would run it.
void exec_sql(const fs::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* message = nullptr;
  EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK) << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(h);
}

bool ran(Status s) { return s == Status::Pass || s == Status::Fail || s == Status::XFail || s == Status::XPass; }

std::string op_of(const std::string& key) {
  const auto a = key.find('/'), b = key.find('/', a + 1);
  return key.substr(a + 1, b - a - 1);
}

class ForeignBackend : public e2e::E2E {
 protected:
  // Runs `suite` on `backend` into its own database; returns the rows.
  Rows run_suite(const std::string& suite, const std::string& backend, const std::string& env = "",
                 const std::string& extra = "") {
    const fs::path db = dir_ / (suite + "-" + fs::path(backend).stem().string() + ".db");
    const Result r =
        gauntlet("run --suite " + suite + " --backend " + backend + " --db " + db.string() + " --quiet " + extra, env);
    EXPECT_TRUE(r.code == 0 || r.code == 1) << r.out << r.err;
    last_db_ = db;
    return read_rows(db);
  }

  // What every foreign-backend run must satisfy: no harness step blamed on an op, bounded errors.
  static void expect_honest(const Rows& rows, const std::string& what) {
    for (const auto& [key, row] : rows) {
      EXPECT_LE(row.error.size(), gauntlet::kMaxErrorBytes) << what << ": " << key;
      if (row.status == Status::Unsupported) {
        EXPECT_EQ(row.error.find("harness step"), std::string::npos) << what << ": " << key << ": " << row.error;
        const bool names_kernel = row.error.find("Could not run 'aten::") != std::string::npos ||
                                  row.error.find("needs aten::as_strided") != std::string::npos;
        const bool names_other = !row.error.empty();  // a dtype the CPU lacks, no compile path, ...
        EXPECT_TRUE(names_kernel || names_other) << what << ": " << key;
      }
      // The dispatcher's table of every backend is never stored.
      EXPECT_EQ(row.error.find("is only available for these backends"), std::string::npos) << key;
    }
  }

  // The ops each case ran through the fallback, as stored, are those the library warns about when
  // the case runs alone (`repro` in a fresh process): a sample of one case per distinct fallback
  // set (up to 30), plus passing cases with none. `device` is the name the library's warning uses.
  void expect_fallbacks_are_the_warned_ones(const Rows& rows, const std::string& backend, const std::string& device) {
    std::map<std::vector<std::string>, std::string> by_set;
    std::vector<std::string> none;
    int with_fallbacks = 0;
    for (const auto& [key, row] : rows) {
      if (!ran(row.status)) continue;
      if (!row.fallback_ops.empty()) ++with_fallbacks;
      if (row.fallback_ops.empty() && none.size() < 5) none.push_back(key);
      if (!row.fallback_ops.empty() && by_set.size() < 30) by_set.emplace(row.fallback_ops, key);
    }
    EXPECT_GE(with_fallbacks, 200) << "cases that ran through the fallback";
    std::vector<std::string> sample = none;
    for (const auto& [set, key] : by_set) sample.push_back(key);
    const std::regex warned("the operator '([^']+)' is not supported on " + device + " and falls back");
    for (const std::string& key : sample) {
      const Result r = gauntlet("repro '" + key + "' --backend " + backend + " --in-process");
      std::set<std::string> truth;
      for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), warned); it != std::sregex_iterator(); ++it) {
        truth.insert((*it)[1]);
      }
      const std::vector<std::string>& stored = rows.at(key).fallback_ops;
      EXPECT_EQ(std::set<std::string>(stored.begin(), stored.end()), truth) << key << "\n" << r.err;
    }
  }

  fs::path last_db_;
};

// (a) sparse: every contiguous case of the four ops it implements runs (where the CPU can run it
// at all); every other case names the kernel or the layout capability the backend lacks.
TEST_F(ForeignBackend, SparseRunsEveryContiguousCaseOfItsOpsAndNamesWhatItLacks) {
  const Rows cpu = run_suite("smoke", "cpu", "", "--filter 'op/add/*:op/mul/*:op/relu/*:op/neg/*'");
  const Rows rows = run_suite("smoke", "plugin:" + lib("tb_sparse"));
  EXPECT_LT(fs::file_size(last_db_), 2u * 1024 * 1024) << "smoke.db on a sparse backend";
  expect_honest(rows, "tb_sparse");
  const std::set<std::string> implemented = {"add", "mul", "relu", "neg"};
  int ran_cases = 0;
  for (const auto& [key, row] : rows) {
    const gauntlet::CaseKey k = gauntlet::CaseKey::parse(key);
    const bool forward_contig = k.kind == "op" && implemented.count(k.target) && k.layout == gauntlet::Layout::Contig &&
                                k.mode == gauntlet::Mode::Eager;
    if (forward_contig && cpu.count(key) && ran(cpu.at(key).status)) {
      EXPECT_TRUE(ran(row.status)) << key << ": " << gauntlet::status_name(row.status) << " " << row.error;
      ++ran_cases;
      continue;
    }
    if (row.status == Status::Unsupported && k.layout != gauntlet::Layout::Contig &&
        row.error.find("needs aten::as_strided") != std::string::npos) {
      EXPECT_EQ(row.error.find("layout " + std::string(gauntlet::layout_name(k.layout)) + " needs aten::as_strided"),
                0u)
          << key << ": " << row.error;
    }
    // An ERROR is the backend's own kernel refusing (its _copy_from converts no dtypes, say), and
    // names that kernel.
    if (row.status == Status::Error) {
      EXPECT_NE(row.error.find("(raised in aten::"), std::string::npos) << key << ": " << row.error;
    }
  }
  EXPECT_GE(ran_cases, 40);
}

// (b) fallback: the ops each case ran through the CPU fallback are recorded with no vendor ABI.
// The ground truth is the library's own warning, once per op per process: `repro` runs one case in
// a fresh process, so the ops it warns about are exactly the ops that case ran through the fallback.
TEST_F(ForeignBackend, FallbackOpsAreReadFromTheDispatcher) {
  const std::string backend = "plugin:" + lib("tb_fallback");
  const Rows rows = run_suite("smoke", backend);
  expect_honest(rows, "tb_fallback");
  const Result info = gauntlet("backend-info --backend " + backend + " --verbose");
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_NE(info.out.find("backend fallback: yes"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("aten::add.Tensor"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("the dispatcher (no vendor ABI needed)"), std::string::npos) << info.out;

  expect_fallbacks_are_the_warned_ones(rows, backend, "privateuseone");
  // show counts them like sim's.
  const Result show = gauntlet("show --db " + last_db_.string());
  EXPECT_NE(show.out.find("fallback: "), std::string::npos) << show.out;
}

// A 2.x library that renames PrivateUse1 (c10::register_privateuse1_backend("npu"), as torch_npu
// does) qualifies like its unrenamed twin: the same statuses and fallbacks case by case, read from
// the dispatcher, with its device printed by its own name.
TEST_F(ForeignBackend, ARenamedDeviceQualifiesUnderItsOwnName) {
  const std::string backend = "plugin:" + lib("tb_npu");
  const Rows twin = run_suite("smoke", "plugin:" + lib("tb_fallback"));
  const Rows rows = run_suite("smoke", backend);
  expect_honest(rows, "tb_npu");
  ASSERT_EQ(rows.size(), twin.size());
  for (const auto& [key, row] : rows) {
    ASSERT_TRUE(twin.count(key)) << key;
    EXPECT_EQ(gauntlet::status_name(row.status), gauntlet::status_name(twin.at(key).status))
        << key << ": " << row.error;
    EXPECT_EQ(row.fallback_ops, twin.at(key).fallback_ops) << key;
    EXPECT_EQ(row.error.find("privateuseone"), std::string::npos) << key << ": " << row.error;
  }
  const Result info = gauntlet("backend-info --backend " + backend);
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_NE(info.out.find("device   npu:0"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("backend fallback: yes"), std::string::npos) << info.out;
  expect_fallbacks_are_the_warned_ones(rows, backend, "npu");
}

// On sim, whose library reports its own fallbacks, the dispatcher's view agrees case by case.
TEST_F(ForeignBackend, OnSimTheDispatcherAgreesWithTheSimulatorsOwnFallbacks) {
  const Rows own = run_suite("smoke", "sim");
  const Rows derived = run_suite("smoke", "sim", "GAUNTLET_FALLBACKS=dispatcher");
  ASSERT_EQ(own.size(), derived.size());
  int with = 0;
  for (const auto& [key, row] : own) {
    ASSERT_TRUE(derived.count(key)) << key;
    EXPECT_EQ(derived.at(key).fallback_ops, row.fallback_ops) << key;
    EXPECT_EQ(derived.at(key).status, row.status) << key;
    with += !row.fallback_ops.empty();
  }
  EXPECT_GE(with, 300);
}

// (c) buggy: its as_strided drops the storage offset. Against its correct twin (tb_views), only
// cases that make views with an offset change, and they FAIL or CRASH; neg on bf16 crashes, and
// `repro` of such a case prints its header and the signal.
TEST_F(ForeignBackend, BuggyOffsetViewsFailAndACrashIsReproducedSafely) {
  const Rows good = run_suite("smoke", "plugin:" + lib("tb_views"));
  const Rows bad = run_suite("smoke", "plugin:" + lib("tb_buggy"));
  expect_honest(bad, "tb_buggy");
  ASSERT_EQ(good.size(), bad.size());
  int changed = 0, offset_views = 0;
  std::string crashing;
  for (const auto& [key, row] : bad) {
    const Row& twin = good.at(key);
    if (row.status == twin.status) continue;
    ++changed;
    // What changed is wrong: a wrong view reads the wrong elements (FAIL, or an error in a kernel
    // that checks shapes), and neg on bf16 crashes, also as a step of another op's backward.
    EXPECT_TRUE(row.status == Status::Fail || row.status == Status::Crash || row.status == Status::Error)
        << key << ": " << gauntlet::status_name(twin.status) << " -> " << gauntlet::status_name(row.status) << " "
        << row.error;
    if (row.status == Status::Crash) {
      EXPECT_NE(row.error.find("SIGABRT"), std::string::npos) << key << ": " << row.error;
      if (op_of(key) == "neg") crashing = key;
    } else {
      ++offset_views;
    }
  }
  EXPECT_GE(offset_views, 5) << "offset-view cases among " << changed << " changed";
  ASSERT_FALSE(crashing.empty());
  const Result r = gauntlet("repro '" + crashing + "' --backend plugin:" + lib("tb_buggy"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("\ncase     " + crashing + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict  CRASH: the case killed its process with SIGABRT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("free(): invalid pointer"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("debug it: gdb --args"), std::string::npos) << r.out;
}

// A port that corrupts the heap copying views out, after a flood of warnings (issue 48): each
// CRASH keeps glibc's abort line and the warnings folded into a count, and says it died copying
// outputs to the host, not running the op; repro says when its signal differs from the stored one.
TEST_F(ForeignBackend, ACrashKeepsItsFatalLineAndNamesTheStageItDiedIn) {
  const Rows rows = run_suite("smoke", "plugin:" + lib("tb_flood"));
  expect_honest(rows, "tb_flood");
  int crashes = 0;
  for (const auto& [key, row] : rows) {
    if (row.status != Status::Crash) {
      if (row.status != Status::Pass && row.status != Status::XPass) {
        EXPECT_FALSE(row.stage.empty()) << key;
      }
      continue;
    }
    ++crashes;
    EXPECT_NE(row.error.find("worker died with SIGABRT"), std::string::npos) << key << ": " << row.error;
    EXPECT_NE(row.error.find("free(): invalid pointer"), std::string::npos) << key << ": " << row.error;
    EXPECT_TRUE(std::regex_search(row.error, std::regex(R"(\[\d+ more lines like: .*as_strided appears to be a view)")))
        << key << ": " << row.error;
    EXPECT_EQ(row.stage, "outputs") << key;
  }
  EXPECT_GE(crashes, 5);
  const std::string chunk = "op/chunk/f32/6x5/contig/eager";
  ASSERT_EQ(rows.at(chunk).status, Status::Crash);
  const Result show = gauntlet("show --db " + last_db_.string() + " --status CRASH");
  EXPECT_NE(show.out.find("[stage: copying outputs to the host]"), std::string::npos) << show.out;

  // The same case stored as a SIGSEGV while running the op: repro says where it differs.
  exec_sql(
      last_db_,
      "UPDATE results SET error = replace(error, 'SIGABRT', 'SIGSEGV'), stage = 'op' WHERE case_id = (SELECT id FROM "
      "cases WHERE key = '" +
          chunk + "')");
  const Result r = gauntlet("repro '" + chunk + "' --db " + last_db_.string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("stage    copying outputs to the host (outputs)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("reproduced: CRASH as stored in run 1, but SIGABRT where the run saw SIGSEGV, and while "
                       "copying outputs to the host where the run failed while running on the device"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("more lines like:"), std::string::npos) << r.out;
}

// A CPU fallback without the _copy_from_and_resize it needs (issue 48): backend-info names the gap
// (found by a call, though the dispatcher says the fallback has every op), the run warns before the
// first case, and the rows that failed inside the fallback keep their fallback_ops.
TEST_F(ForeignBackend, AFallbackThatCannotCopyBackIsNamedBeforeTheFirstCase) {
  const std::string backend = "plugin:" + lib("tb_nocfr");
  const Result info = gauntlet("backend-info --backend " + backend);
  EXPECT_EQ(info.code, 0) << info.err;
  EXPECT_NE(info.out.find("MISSING  aten::_copy_from_and_resize"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("the CPU fallback needs it: not covered by the CPU fallback: Could not run "
                          "'aten::_copy_from_and_resize' with arguments from the 'CPU' backend."),
            std::string::npos)
      << info.out;
  const fs::path db = dir_ / "nocfr.db";
  const Result run = gauntlet("run --suite smoke --backend " + backend + " --db " + db.string());
  EXPECT_EQ(run.code, 0) << run.err;  // no --gate
  const std::string warning = "CPU fallback needs aten::_copy_from_and_resize from the backend, which it lacks";
  EXPECT_NE(run.err.find(warning), std::string::npos) << run.err;
  EXPECT_LT(run.err.find(warning), run.err.find("progress:")) << run.err;
  EXPECT_NE(run.out.find("of them failed)"), std::string::npos) << run.out;
  int inside = 0;
  for (const auto& [key, row] : read_rows(db)) {
    const std::size_t at = row.error.find("inside the CPU fallback of ");
    if (at == std::string::npos) continue;
    ++inside;
    const std::string op = row.error.substr(at + 27, row.error.find(')', at) - at - 27);
    EXPECT_NE(std::find(row.fallback_ops.begin(), row.fallback_ops.end(), op), row.fallback_ops.end())
        << key << ": " << row.error;
    EXPECT_EQ(row.stage, "op") << key;
  }
  EXPECT_GE(inside, 1000);
}

// (d) hollow: a library that registers nothing is refused at once, and fails every gate.
TEST_F(ForeignBackend, AHollowLibraryFailsTheGate) {
  const std::string backend = "plugin:" + lib("tb_hollow");
  const fs::path db = dir_ / "hollow.db";
  const Result plain = gauntlet("run --suite smoke --backend " + backend + " --db " + db.string());
  expect_one_line_error(plain, "cannot take even contiguous inputs");
  EXPECT_FALSE(fs::exists(db));
  // Every command that runs cases refuses it as run does (Hardening II), writing nothing.
  for (const std::string& command :
       std::vector<std::string>{"repro 'op/exp/f32/_/contig/eager'", "reduce 'op/exp/f32/4/contig/eager'",
                                "bench --suite smoke --filter 'op/exp/f32/_/contig/eager' --db " + db.string()}) {
    SCOPED_TRACE(command);
    expect_one_line_error(gauntlet(command + " --backend " + backend), "cannot take even contiguous inputs");
    EXPECT_FALSE(fs::exists(db));
  }

  ASSERT_EQ(
      gauntlet("run --suite smoke --backend cpu --quiet --release r1 --filter 'op/add/*' --db " + db.string()).code, 0);
  const Result gated = gauntlet("run --suite smoke --backend " + backend +
                                " --release r2 --filter 'op/add/*' --gate --db " + db.string());
  EXPECT_EQ(gated.code, 1) << gated.out << gated.err;
  EXPECT_NE(gated.out.find("gate: FAIL: run 2 is hollow"), std::string::npos) << gated.out;
  const Result cmp = gauntlet("compare --db " + db.string() + " --run 2 --baseline 1 --gate accuracy --quiet");
  EXPECT_EQ(cmp.code, 1) << cmp.out << cmp.err;
  EXPECT_NE(cmp.out.find("run 2 is hollow"), std::string::npos) << cmp.out;

  // A run where nothing passes is hollow too, whatever its statuses.
  const Result sparse = gauntlet("run --suite smoke --backend plugin:" + lib("tb_sparse") +
                                 " --filter 'op/abs/*' --gate --quiet --db " + (dir_ / "abs.db").string());
  EXPECT_EQ(sparse.code, 1) << sparse.out << sparse.err;
  EXPECT_NE(sparse.out.find("no case passed"), std::string::npos) << sparse.out;
}

// The other suites on each backend: statuses stay honest (no harness step blamed on an op).
TEST_F(ForeignBackend, OtherSuitesStayHonestOnEveryTestBackend) {
  for (const std::string name : {"tb_sparse", "tb_fallback", "tb_buggy"}) {
    for (const std::string suite : {"compile_smoke", "models_smoke", "coll_smoke"}) {
      const Rows rows = run_suite(suite, "plugin:" + lib(name));
      EXPECT_FALSE(rows.empty()) << suite << " on " << name;
      expect_honest(rows, suite + " on " + name);
      // A library without a compile path: its compile cases say so (docs/compile-path.md), before
      // the trace would run the op eagerly and report its eager failure instead.
      for (const auto& [key, row] : rows) {
        if (suite != "compile_smoke" || key.rfind("op/", 0) != 0) continue;
        EXPECT_TRUE(row.status == Status::Unsupported || row.status == Status::Skip) << key << ": " << row.error;
      }
    }
  }
}

// A plugin's profile is its library's name, not its path, so expectations written for it hold
// wherever the file lives; --profile overrides it.
TEST_F(ForeignBackend, APluginsProfileIsItsLibrarysName) {
  Result r = gauntlet("backend-info --backend plugin:" + lib("tb_sparse"));
  EXPECT_NE(r.out.find("profile  tb_sparse\n"), std::string::npos) << r.out;
  // its problems first, before the dispatcher's section says each in full
  EXPECT_NE(r.out.find("\nproblems 4:\n  MISSING aten::as_strided: "), std::string::npos) << r.out;
  EXPECT_LT(r.out.find("  no backend fallback: "), r.out.find("\ndispatcher (")) << r.out;
  r = gauntlet("backend-info --backend plugin:" + lib("tb_sparse") + " --profile acme-x1");
  EXPECT_NE(r.out.find("profile  acme-x1\n"), std::string::npos) << r.out;
  const fs::path suites =
      suites_with({{"expectations.yaml",
                    "skip:\n  - match: \"op/add/*\"\n    backend: [tb_sparse]\n    reason: the vendor's own\n"}});
  const fs::path copy = dir_ / "elsewhere" / "libtb_sparse.so";
  fs::create_directories(copy.parent_path());
  fs::copy_file(lib("tb_sparse"), copy);
  const Rows rows =
      run_suite("smoke", "plugin:" + copy.string(), "", "--filter 'op/add/*' --suites-dir " + suites.string());
  ASSERT_FALSE(rows.empty());
  for (const auto& [key, row] : rows) EXPECT_EQ(row.status, Status::Skip) << key;
}

}  // namespace
