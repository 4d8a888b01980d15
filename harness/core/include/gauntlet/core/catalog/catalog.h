// Note [Catalog]: suites are YAML files (docs/writing-suites.md). A suite names groups; each
// group is a cross product ops x dtypes x shapes x layouts x argument sets x modes x values,
// pruned where a combination does not apply to an op (an unsupported dtype, a layout the input
// rank cannot take, a backward the op does not have). What remains must be a valid case key for
// its op, or expansion fails with file:line. Skip and xfail lists live in expectations.yaml and
// tolerance rules in tolerances.yaml, beside the suites, so `run` and `repro` read the same ones.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gauntlet/base/case_key.h"
#include "gauntlet/base/error.h"
#include "gauntlet/base/glob.h"
#include "gauntlet/core/cases/compare.h"
#include "gauntlet/run/suite.h"

namespace gauntlet {

enum class Expect { Run, Skip, XFail };

struct Expectation {
  Expect kind = Expect::Run;
  std::string reason;  // required for skip and xfail
  std::string source;  // file:line of the entry
  // A strict xfail (the default) turns a pass into XPASS, a failure: the entry is stale. A
  // non-strict one (strict: false) is for failures that depend on the data, like a
  // low-precision accumulation that only some inputs expose: a pass stays PASS.
  bool strict = true;
};

// Skip / xfail entries: globs on the case key, optionally for some backends only.
class Expectations {
 public:
  static Expectations load(const std::string& file);  // a missing file means none
  Expectation lookup(const std::string& key, const std::string& backend) const;

 private:
  struct Entry {
    Expect kind;
    std::vector<std::string> matches;   // globs on the case key; any may match
    std::vector<std::string> backends;  // empty: every backend
    std::string reason, source;
    bool strict = true;
  };
  std::vector<Entry> entries_;
};

// Tolerance rules; the last rule that matches wins, else the per-dtype default.
class ToleranceTable {
 public:
  static ToleranceTable load(const std::string& file);  // a missing file means defaults only
  Tolerance lookup(const CaseKey& key, DType output_dtype, const std::string& backend) const;

 private:
  struct Rule {
    std::vector<std::string> ops, families, dtypes, modes;
    std::vector<std::string> backends;  // empty: every backend
    std::string source;
    std::optional<double> rtol, atol;
    // Note [Contraction length] (op_spec.h): atol is at least this times sqrt(K).
    std::optional<double> atol_per_sqrt_k;
  };
  std::vector<Rule> rules_;
};

// Loads a suite by name (DIR/NAME.yaml) or by path (anything ending in .yaml).
Suite load_suite(const std::string& name_or_path, const std::string& suites_dir);
// Note [Model file suites] (catalog_models.cpp): the suite of the model files at `path` (a .pt, a
// manifest or a folder); load_suite takes such paths too (a .pt, or "model:PATH").
Suite model_file_suite(const std::string& path);
bool is_model_file_path(const std::string& name_or_path);
// The names of the suites in a directory (sorted).
std::vector<std::string> list_suites(const std::string& suites_dir);

// Note [Keys no suite holds] (catalog.cpp): the suites of `suites_dir` that hold `key` (sorted),
// and those that could not be read ("name: error"), expanding only the groups that can make it.
struct SuitesHolding {
  std::vector<std::string> suites, unreadable;
};
SuitesHolding suites_holding(const CaseKey& key, const std::string& suites_dir);

}  // namespace gauntlet
