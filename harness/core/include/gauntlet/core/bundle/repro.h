// `gauntlet repro` and `gauntlet reduce`: their options (Note [Options beside their fields]); the
// stored run's configuration they restore is gauntlet/run/restore.h, the case's explanation
// gauntlet/core/bundle/case_report.h, the reduction gauntlet/core/reduce/reduce.h and
// gauntlet/core/reduce/reduce_report.h.
#pragma once

#include <string>
#include <vector>

#include "gauntlet/base/command_line.h"
#include "gauntlet/run/restore.h"

namespace gauntlet {

// ReproSetup (gauntlet/run/restore.h): --backend, --profile, --suites-dir, --golden-store,
// --golden-release and the timing, as given or restored from --db.
struct ReproOptions : ReproSetup {
  std::string key;
  std::string db;      // --db: restore the configuration of a stored run (Note [Repro from the record])
  long long run = 0;   // --run: that run (0: the latest with a result for the key)
  std::string bundle;  // --bundle: write a standalone bundle of the case here (Note [Bundles])
  bool json = false;
  bool any_key = false;           // run a key no suite holds (Note [Keys no suite holds])
  bool in_process = false;        // run the case in this process (default: in a child, Note [Crash-safe repro])
  bool child = false;             // this process is that child: the parent printed the header
  std::vector<std::string> argv;  // the command line, for the child and the debug command
  double collective_timeout = 40;
};
// --profile is the command line's (it also goes to $GAUNTLET_PROFILE).
void describe_options(OptionSink& s, ReproOptions& o);

// ReproSetup: --backend ("": cpu, or the run's), --profile (also in $GAUNTLET_PROFILE by then),
// --suites-dir, --golden-store, --golden-release, as given or restored from --db.
struct ReduceOptions : ReproSetup {
  std::string key;
  std::string db;       // --db: restore a stored run's configuration, as repro --db does
  long long run = 0;    // --run: that run (0: the latest with a result for the key)
  int workers = 2;      // worker processes per batch of candidates
  double timeout = 60;  // seconds a candidate may take (then TIMEOUT)
  int max_candidates = 400;
  bool json = false;
};
void describe_options(OptionSink& s, ReduceOptions& o);

}  // namespace gauntlet
