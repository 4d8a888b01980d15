// What `repro --db` restores from a stored run (Note [Repro from the record] in repro.cpp), shared
// by `repro` and `reduce`. No torch here.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"

namespace gauntlet::cli {

struct Restored {
  RunInfo info;
  std::optional<Outcome> stored;   // the run's result for the case, when it has one
  nlohmann::json backend_config;   // as the run recorded it
  std::vector<std::string> notes;  // what was restored, to print
  std::vector<std::string> warnings;
  std::string standalone;  // the same case as a command that needs no database
};

// With o.db set: restores run o.run's (0: the latest with a result for the key) backend,
// profile, suites dir, goldens, timing and environment into `o` and this process's environment;
// nullopt without --db. Throws UsageError for a run or database that is not there.
std::optional<Restored> restore_run(ReproOptions& o, const std::string& canonical_key);
// "restored from run N of DB ...", the notes, warnings, the standalone command and the stored status.
void print_restored(const Restored& r, const std::string& db);

}  // namespace gauntlet::cli
