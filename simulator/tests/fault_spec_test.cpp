// Fault spec: grammar, defaults, matching, error messages, files, canonical form and environment.
#include "fault_spec.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace gauntlet::sim {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// The what() of the std::invalid_argument that parsing throws, or "" when it parses.
std::string spec_error(const std::string& text, const std::string& origin = "GAUNTLET_SIM_FAULTS") {
  try {
    parse_fault_spec(text, origin);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string file_error(const std::string& path) {
  try {
    parse_fault_file(path);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// A fresh directory per test so parallel or repeated runs never see each other's files.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "fault_spec_XXXXXX";
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
  }
  ~TempDir() {
    for (const std::string& f : files_) unlink(f.c_str());
    rmdir(dir_.c_str());
  }
  std::string write(const std::string& name, const std::string& content) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << content;
    files_.push_back(path);
    return path;
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::vector<std::string> files_;
};

// Restores the two variables so env tests leave the process as they found it.
class EnvGuard {
 public:
  EnvGuard() {
    save("GAUNTLET_SIM_FAULTS", faults_);
    save("GAUNTLET_SIM_FAULTS_FILE", file_);
  }
  ~EnvGuard() {
    restore("GAUNTLET_SIM_FAULTS", faults_);
    restore("GAUNTLET_SIM_FAULTS_FILE", file_);
  }

 private:
  struct Saved {
    bool set = false;
    std::string value;
  };
  static void save(const char* name, Saved& s) {
    if (const char* v = getenv(name)) s = {true, v};
  }
  static void restore(const char* name, const Saved& s) {
    if (s.set)
      setenv(name, s.value.c_str(), 1);
    else
      unsetenv(name);
  }
  Saved faults_, file_;
};

TEST(FaultSpec, MultiRuleSpecFields) {
  FaultSpec s = parse_fault_spec(
      " op=aten::mul*, dtype=f32, min_numel=10, max_numel=1000, kind=bias, factor=0.5 ;"
      "op = aten::exp , kind = nan;kind=segv",
      "test");
  ASSERT_EQ(s.rules.size(), 3u);
  const FaultRule& a = s.rules[0];
  EXPECT_EQ(a.op, "aten::mul*");
  EXPECT_EQ(a.dtype, "f32");
  EXPECT_EQ(a.min_numel, 10);
  EXPECT_EQ(a.max_numel, 1000);
  EXPECT_EQ(a.kind, FaultKind::Bias);
  EXPECT_EQ(a.factor, 0.5);
  EXPECT_EQ(a.text, "op=aten::mul*, dtype=f32, min_numel=10, max_numel=1000, kind=bias, factor=0.5");
  const FaultRule& b = s.rules[1];
  EXPECT_EQ(b.op, "aten::exp");
  EXPECT_EQ(b.dtype, "");
  EXPECT_EQ(b.min_numel, 0);
  EXPECT_EQ(b.max_numel, kMax);
  EXPECT_EQ(b.kind, FaultKind::NaN);
  EXPECT_EQ(b.factor, 0);
  EXPECT_EQ(b.text, "op = aten::exp , kind = nan");
  EXPECT_EQ(s.rules[2].op, "*");
  EXPECT_EQ(s.rules[2].kind, FaultKind::Segv);
  EXPECT_FALSE(s.empty());
}

TEST(FaultSpec, EmptySpecsAndEmptyRules) {
  EXPECT_TRUE(parse_fault_spec("", "t").empty());
  EXPECT_TRUE(parse_fault_spec("  \t ", "t").empty());
  EXPECT_TRUE(parse_fault_spec(" ; ;; ", "t").empty());
  FaultSpec s = parse_fault_spec(";kind=flip;; kind=oom ;", "t");
  ASSERT_EQ(s.rules.size(), 2u);
  EXPECT_EQ(s.rules[0].kind, FaultKind::Flip);
  EXPECT_EQ(s.rules[1].kind, FaultKind::Oom);
}

TEST(FaultSpec, KindNamesAndDefaultFactors) {
  struct Case {
    const char* name;
    FaultKind kind;
    double factor;
  };
  const Case cases[] = {
      {"bias", FaultKind::Bias, 1e-3},      {"flip", FaultKind::Flip, 0},   {"precision", FaultKind::Precision, 0},
      {"nan", FaultKind::NaN, 0},           {"slow", FaultKind::Slow, 2.0}, {"sleep", FaultKind::Sleep, 10.0},
      {"fallback", FaultKind::Fallback, 0}, {"segv", FaultKind::Segv, 0},   {"abort", FaultKind::Abort, 0},
      {"hang", FaultKind::Hang, 0},         {"oom", FaultKind::Oom, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FaultSpec s = parse_fault_spec(std::string("kind=") + c.name, "t");
    ASSERT_EQ(s.rules.size(), 1u);
    EXPECT_EQ(s.rules[0].kind, c.kind);
    EXPECT_EQ(s.rules[0].factor, c.factor);
    EXPECT_EQ(fault_kind_name(c.kind), c.name);
  }
  EXPECT_EQ(parse_fault_spec("kind=slow,factor=3.5", "t").rules[0].factor, 3.5);
  EXPECT_EQ(parse_fault_spec("kind=sleep,factor=250", "t").rules[0].factor, 250);
  EXPECT_EQ(parse_fault_spec("kind=bias,factor=1e-6", "t").rules[0].factor, 1e-6);
}

TEST(FaultSpec, DtypeAliases) {
  const std::pair<const char*, const char*> cases[] = {
      {"f64", "f64"},       {"float64", "f64"}, {"double", "f64"},  {"f32", "f32"},   {"float32", "f32"},
      {"float", "f32"},     {"f16", "f16"},     {"float16", "f16"}, {"half", "f16"},  {"bf16", "bf16"},
      {"bfloat16", "bf16"}, {"i64", "i64"},     {"int64", "i64"},   {"long", "i64"},  {"i32", "i32"},
      {"int32", "i32"},     {"int", "i32"},     {"i16", "i16"},     {"int16", "i16"}, {"short", "i16"},
      {"i8", "i8"},         {"int8", "i8"},     {"u8", "u8"},       {"uint8", "u8"},  {"bool", "bool"},
  };
  for (const auto& [alias, canon] : cases) {
    SCOPED_TRACE(alias);
    EXPECT_EQ(parse_fault_spec(std::string("dtype=") + alias + ",kind=nan", "t").rules[0].dtype, canon);
  }
}

TEST(FaultSpec, GlobMatchingWithOverloads) {
  FaultRule mul = parse_fault_spec("op=aten::mul*,kind=nan", "t").rules[0];
  EXPECT_TRUE(mul.matches("aten::mul", "f32", 4));
  EXPECT_TRUE(mul.matches("aten::mul.Tensor", "f32", 4));
  EXPECT_TRUE(mul.matches("aten::mul_.Tensor", "f32", 4));
  EXPECT_FALSE(mul.matches("aten::add.Tensor", "f32", 4));

  FaultRule add = parse_fault_spec("op=aten::add.Tensor,kind=nan", "t").rules[0];
  EXPECT_TRUE(add.matches("aten::add.Tensor", "f32", 4));
  EXPECT_FALSE(add.matches("aten::add_.Tensor", "f32", 4));
  EXPECT_FALSE(add.matches("aten::add.Scalar", "f32", 4));
  EXPECT_FALSE(add.matches("aten::add", "f32", 4));

  FaultRule exp = parse_fault_spec("op=aten::exp,kind=nan", "t").rules[0];
  EXPECT_TRUE(exp.matches("aten::exp", "f32", 4));
  EXPECT_FALSE(exp.matches("aten::exp2", "f32", 4));
  EXPECT_FALSE(exp.matches("aten::exp.out", "f32", 4));

  FaultRule any = parse_fault_spec("kind=nan", "t").rules[0];
  EXPECT_TRUE(any.matches("aten::anything.overload", "", 0));
}

TEST(FaultSpec, RankRulesApplyOnlyInThatRankOfACollectiveGroup) {
  const FaultSpec spec = parse_fault_spec("op=c10d::allreduce,rank=2,kind=segv; op=c10d::*,kind=slow", "t");
  const FaultRule& r = spec.rules[0];
  EXPECT_EQ(r.rank, 2);
  EXPECT_EQ(spec.rules[1].rank, -1);
  EXPECT_EQ(spec.canonical(), "op=c10d::allreduce,rank=2,kind=segv; op=c10d::*,kind=slow");
  set_process_rank(-1);  // outside any group: never
  EXPECT_FALSE(r.matches("c10d::allreduce", "f32", 4));
  set_process_rank(1);
  EXPECT_FALSE(r.matches("c10d::allreduce", "f32", 4));
  EXPECT_TRUE(spec.rules[1].matches("c10d::allreduce", "f32", 4));
  set_process_rank(2);
  EXPECT_TRUE(r.matches("c10d::allreduce", "f32", 4));
  EXPECT_FALSE(r.matches("c10d::allgather", "f32", 4));
  set_process_rank(-1);
  try {
    parse_fault_spec("rank=x,kind=hang", "GAUNTLET_SIM_FAULTS");
    FAIL() << "accepted rank=x";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("GAUNTLET_SIM_FAULTS: rule 1 (column 6)"), std::string::npos) << e.what();
  }
}

TEST(FaultSpec, NumelBoundsAreInclusive) {
  FaultRule r = parse_fault_spec("min_numel=10,max_numel=20,kind=flip", "t").rules[0];
  EXPECT_FALSE(r.matches("aten::exp", "f32", 9));
  EXPECT_TRUE(r.matches("aten::exp", "f32", 10));
  EXPECT_TRUE(r.matches("aten::exp", "f32", 20));
  EXPECT_FALSE(r.matches("aten::exp", "f32", 21));
  FaultRule one = parse_fault_spec("min_numel=7,max_numel=7,kind=flip", "t").rules[0];
  EXPECT_TRUE(one.matches("aten::exp", "f32", 7));
  EXPECT_FALSE(one.matches("aten::exp", "f32", 6));
  FaultRule open = parse_fault_spec("kind=flip", "t").rules[0];
  EXPECT_TRUE(open.matches("aten::exp", "f32", 0));
  EXPECT_TRUE(open.matches("aten::exp", "f32", kMax));
}

TEST(FaultSpec, DtypeFilter) {
  FaultRule r = parse_fault_spec("dtype=half,kind=precision", "t").rules[0];
  EXPECT_TRUE(r.matches("aten::exp", "f16", 1));
  EXPECT_TRUE(r.matches("aten::exp", "float16", 1));  // either spelling from the caller
  EXPECT_FALSE(r.matches("aten::exp", "bf16", 1));
  EXPECT_FALSE(r.matches("aten::exp", "f32", 1));
  EXPECT_FALSE(r.matches("aten::exp", "", 1));  // no tensor argument: a dtype rule cannot apply
  FaultRule any = parse_fault_spec("kind=precision", "t").rules[0];
  EXPECT_TRUE(any.matches("aten::exp", "", 1));
  EXPECT_TRUE(any.matches("aten::exp", "i8", 1));
}

TEST(FaultSpec, MatchReturnsEveryMatchingRuleInOrder) {
  FaultSpec s = parse_fault_spec(
      "op=aten::mul*,kind=slow; op=aten::add*,kind=nan; dtype=f32,kind=bias; min_numel=100,kind=flip; kind=sleep", "t");
  std::vector<const FaultRule*> m = s.match("aten::mul.Tensor", "f32", 5);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0], &s.rules[0]);
  EXPECT_EQ(m[1], &s.rules[2]);
  EXPECT_EQ(m[2], &s.rules[4]);

  m = s.match("aten::add_.Tensor", "i64", 100);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0], &s.rules[1]);
  EXPECT_EQ(m[1], &s.rules[3]);
  EXPECT_EQ(m[2], &s.rules[4]);

  EXPECT_TRUE(parse_fault_spec("", "t").match("aten::exp", "f32", 1).empty());
}

TEST(FaultSpec, ErrorMessagesNameOriginRuleAndColumn) {
  // Columns are 1-based in the whole string; the rule number counts ';' pieces, empty ones included.
  EXPECT_EQ(spec_error("kind=segfault"),
            "GAUNTLET_SIM_FAULTS: rule 1 (column 6): unknown kind 'segfault' (known: bias, flip, precision, nan, "
            "slow, sleep, fallback, segv, abort, hang, oom)");
  EXPECT_EQ(spec_error("kind=nan; op=aten::exp", "X"), "X: rule 2 (column 11): missing kind=");
  EXPECT_EQ(spec_error("kind=nan;;kind=nan, min_numel=x"),
            "GAUNTLET_SIM_FAULTS: rule 3 (column 31): 'min_numel' must be a non-negative integer, got 'x'");
  EXPECT_EQ(spec_error("kind=nan,foo"), "GAUNTLET_SIM_FAULTS: rule 1 (column 10): expected key=value, got 'foo'");
  EXPECT_EQ(spec_error("kind=nan, dtype = f8"), "GAUNTLET_SIM_FAULTS: rule 1 (column 19): unknown dtype 'f8'");
  EXPECT_EQ(spec_error("min_numel=10,max_numel=5,kind=nan"),
            "GAUNTLET_SIM_FAULTS: rule 1 (column 14): min_numel 10 is greater than max_numel 5");
  EXPECT_EQ(spec_error("kind=flip,factor=2"),
            "GAUNTLET_SIM_FAULTS: rule 1 (column 11): factor is not used by kind=flip");
  EXPECT_EQ(spec_error("kind=nan,p=0.5"),
            "GAUNTLET_SIM_FAULTS: rule 1 (column 10): unknown key 'p' (known: op, dtype, min_numel, max_numel, "
            "kind, factor, rank)");
  EXPECT_EQ(spec_error("kind=nan,op=a,op=b"), "GAUNTLET_SIM_FAULTS: rule 1 (column 15): duplicate key 'op'");
  EXPECT_EQ(spec_error("kind=nan,op= "), "GAUNTLET_SIM_FAULTS: rule 1 (column 10): empty value for 'op'");
}

TEST(FaultSpec, MalformedItems) {
  EXPECT_EQ(spec_error("=x,kind=nan"), "GAUNTLET_SIM_FAULTS: rule 1 (column 1): expected key=value, got '=x'");
  EXPECT_EQ(spec_error("kind=nan,"), "GAUNTLET_SIM_FAULTS: rule 1 (column 10): expected key=value, got ''");
  EXPECT_EQ(spec_error("kind="), "GAUNTLET_SIM_FAULTS: rule 1 (column 1): empty value for 'kind'");
  EXPECT_EQ(spec_error("kind=NaN"),
            "GAUNTLET_SIM_FAULTS: rule 1 (column 6): unknown kind 'NaN' (known: bias, flip, precision, nan, slow, "
            "sleep, fallback, segv, abort, hang, oom)");
  EXPECT_EQ(spec_error("kind=nan,max_numel=-1"),
            "GAUNTLET_SIM_FAULTS: rule 1 (column 20): 'max_numel' must be a non-negative integer, got '-1'");
  EXPECT_EQ(spec_error("kind=nan,max_numel=99999999999999999999"),
            "GAUNTLET_SIM_FAULTS: rule 1 (column 20): 'max_numel' must be a non-negative integer, got "
            "'99999999999999999999'");
  EXPECT_EQ(spec_error("kind=nan,min_numel=1.5"),
            "GAUNTLET_SIM_FAULTS: rule 1 (column 20): 'min_numel' must be a non-negative integer, got '1.5'");
  EXPECT_EQ(spec_error("max_numel=5, min_numel=6, kind=nan"),
            "GAUNTLET_SIM_FAULTS: rule 1 (column 14): min_numel 6 is greater than max_numel 5");
  for (const char* bad : {"0", "-1", "inf", "nan", "1e999", "x", "1.0x", "+2"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(spec_error(std::string("kind=slow,factor=") + bad),
              std::string("GAUNTLET_SIM_FAULTS: rule 1 (column 18): 'factor' must be a finite number > 0, got '") +
                  bad + "'");
  }
  for (const char* kind : {"precision", "nan", "fallback", "segv", "abort", "hang", "oom"}) {
    SCOPED_TRACE(kind);
    EXPECT_EQ(spec_error(std::string("factor=2,kind=") + kind),
              std::string("GAUNTLET_SIM_FAULTS: rule 1 (column 1): factor is not used by kind=") + kind);
  }
}

TEST(FaultSpec, FileWithCommentsAndBlankLines) {
  TempDir tmp;
  std::string path = tmp.write("faults.txt",
                               "# fault rules for the nightly run\n"
                               "\n"
                               "   # indented comment\n"
                               "op=aten::mul*, kind=bias, factor=0.01   # a trailing comment\n"
                               "  \t\n"
                               "kind=nan; kind=flip\r\n"
                               "dtype=bf16,kind=precision");  // no final newline
  FaultSpec s = parse_fault_file(path);
  ASSERT_EQ(s.rules.size(), 4u);
  EXPECT_EQ(s.rules[0].op, "aten::mul*");
  EXPECT_EQ(s.rules[0].factor, 0.01);
  EXPECT_EQ(s.rules[0].text, "op=aten::mul*, kind=bias, factor=0.01");
  EXPECT_EQ(s.rules[1].kind, FaultKind::NaN);
  EXPECT_EQ(s.rules[2].kind, FaultKind::Flip);
  EXPECT_EQ(s.rules[3].dtype, "bf16");
  EXPECT_EQ(s.rules[3].kind, FaultKind::Precision);

  EXPECT_TRUE(parse_fault_file(tmp.write("empty.txt", "")).empty());
  EXPECT_TRUE(parse_fault_file(tmp.write("comments.txt", "# nothing\n\n#\n")).empty());
}

TEST(FaultSpec, FileErrorsNameLineAndColumn) {
  TempDir tmp;
  std::string path = tmp.write("bad.txt",
                               "# header\n"
                               "kind=nan\n"
                               "\n"
                               "op=aten::exp,  kind=segfault  # typo\n");
  EXPECT_EQ(file_error(path),
            path +
                ":4:21: unknown kind 'segfault' (known: bias, flip, precision, nan, slow, sleep, fallback, segv, "
                "abort, hang, oom)");

  std::string second = tmp.write("second.txt", "kind=nan\nkind=flip;  op=aten::add\n");
  EXPECT_EQ(file_error(second), second + ":2:13: missing kind=");

  std::string unknown = tmp.write("unknown.txt", "  kind=nan, prob=1\n");
  EXPECT_EQ(file_error(unknown),
            unknown + ":1:13: unknown key 'prob' (known: op, dtype, min_numel, max_numel, kind, factor, rank)");
}

TEST(FaultSpec, MissingOrUnreadableFile) {
  TempDir tmp;
  std::string missing = tmp.dir() + "/does_not_exist.txt";
  EXPECT_EQ(file_error(missing), missing + ": cannot read fault file");
  EXPECT_EQ(file_error(tmp.dir()), tmp.dir() + ": cannot read fault file");
}

TEST(FaultSpec, CanonicalRoundTrip) {
  FaultSpec s = parse_fault_spec(
      " op = aten::mul* , dtype=float , min_numel=3, kind=bias ;"
      "kind=slow, factor=3; max_numel=99, kind=sleep, factor=0.1;"
      "kind=bias,factor=0.123456789012345;"  // more digits than %g keeps
      "dtype=bool, min_numel=1, max_numel=1, kind=hang; kind=slow, factor=2",
      "t");
  EXPECT_EQ(s.canonical(),
            "op=aten::mul*,dtype=f32,min_numel=3,kind=bias; kind=slow,factor=3; max_numel=99,kind=sleep,factor=0.1; "
            "kind=bias,factor=0.123456789012345; dtype=bool,min_numel=1,max_numel=1,kind=hang; kind=slow");
  FaultSpec again = parse_fault_spec(s.canonical(), "canonical");
  ASSERT_EQ(again.rules.size(), s.rules.size());
  for (std::size_t i = 0; i < s.rules.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(again.rules[i].op, s.rules[i].op);
    EXPECT_EQ(again.rules[i].dtype, s.rules[i].dtype);
    EXPECT_EQ(again.rules[i].min_numel, s.rules[i].min_numel);
    EXPECT_EQ(again.rules[i].max_numel, s.rules[i].max_numel);
    EXPECT_EQ(again.rules[i].kind, s.rules[i].kind);
    EXPECT_EQ(again.rules[i].factor, s.rules[i].factor);
  }
  EXPECT_EQ(again.canonical(), s.canonical());
  EXPECT_EQ(FaultSpec{}.canonical(), "");
}

TEST(FaultSpec, FromEnvironment) {
  EnvGuard guard;
  unsetenv("GAUNTLET_SIM_FAULTS");
  unsetenv("GAUNTLET_SIM_FAULTS_FILE");
  EXPECT_TRUE(fault_spec_from_env().empty());

  setenv("GAUNTLET_SIM_FAULTS", "op=aten::exp,kind=nan; kind=slow", 1);
  FaultSpec s = fault_spec_from_env();
  ASSERT_EQ(s.rules.size(), 2u);
  EXPECT_EQ(s.rules[0].op, "aten::exp");
  EXPECT_EQ(s.rules[1].kind, FaultKind::Slow);

  // The file's rules come first, then the string's.
  TempDir tmp;
  setenv("GAUNTLET_SIM_FAULTS_FILE", tmp.write("env.txt", "kind=oom\nkind=abort\n").c_str(), 1);
  s = fault_spec_from_env();
  ASSERT_EQ(s.rules.size(), 4u);
  EXPECT_EQ(s.rules[0].kind, FaultKind::Oom);
  EXPECT_EQ(s.rules[1].kind, FaultKind::Abort);
  EXPECT_EQ(s.rules[2].kind, FaultKind::NaN);
  EXPECT_EQ(s.rules[3].kind, FaultKind::Slow);

  unsetenv("GAUNTLET_SIM_FAULTS");
  EXPECT_EQ(fault_spec_from_env().rules.size(), 2u);

  setenv("GAUNTLET_SIM_FAULTS", "kind=bogus", 1);
  try {
    fault_spec_from_env();
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("GAUNTLET_SIM_FAULTS: rule 1 (column 6): unknown kind 'bogus'", 0), 0u)
        << e.what();
  }

  unsetenv("GAUNTLET_SIM_FAULTS");
  std::string missing = tmp.dir() + "/missing.txt";
  setenv("GAUNTLET_SIM_FAULTS_FILE", missing.c_str(), 1);
  EXPECT_THROW(fault_spec_from_env(), std::invalid_argument);

  setenv("GAUNTLET_SIM_FAULTS_FILE", "", 1);  // set but empty: treated as unset
  EXPECT_TRUE(fault_spec_from_env().empty());
}

}  // namespace
}  // namespace gauntlet::sim
