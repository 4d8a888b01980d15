// What a suite is once expanded: its cases, each a case key with what the suite says of it, and
// where suites live. Plain data, no torch: the torch-free part of a run (selection, the run record,
// restore, progress) holds suites and cases; the catalog (gauntlet/core/catalog/catalog.h) makes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gauntlet/base/case_key.h"
#include "gauntlet/base/error.h"

namespace gauntlet {

// A problem in a catalog file: what() is "file:line:col: message".
class CatalogError : public Error {
 public:
  using Error::Error;
};

struct Case {
  CaseKey key;
  std::string text;  // key.str()
  std::uint64_t id = 0;
  // What the suite says of the case, stored at the front of its result's reason: "from models:
  // resnet18, vgg11" for a case cut from models (Note [Ops from models]). Usually empty.
  std::string note;
  // The per-case timeout of the suite file that made the case, when it set one (`timeout:`), so
  // that a suite including it keeps it (Note [Included suites]); 0: the run's.
  double timeout_s = 0;
};

struct Suite {
  std::string name, description, file;
  std::vector<std::string> tags;
  double timeout_s = 60;    // per case, in worker processes (`timeout:`; --timeout overrides)
  std::vector<Case> cases;  // sorted by key text, unique
  // A suite that includes others (Note [Included suites]): its parts in order, each with its own
  // case count (the suite's own groups first, under its name, when it has any), and `shared`, the
  // keys more than one part makes, run once: cases.size() == sum of the parts' - shared.
  struct Part {
    std::string name;
    std::size_t cases = 0;
  };
  std::vector<Part> parts;
  std::size_t shared = 0;
};

// Where suites live: --suites-dir, else $GAUNTLET_SUITES, else the source tree's suites/yaml.
std::string default_suites_dir();
// `dir`, or default_suites_dir() when it is empty.
std::string suites_dir_or_default(const std::string& dir);

}  // namespace gauntlet
