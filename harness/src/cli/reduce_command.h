// `gauntlet reduce`: its options and entry point (Note [Failing-shape reduction] in
// harness/src/reduce.cpp; the command in reduce.cpp beside this file).
#pragma once

#include <string>

#include "gauntlet/run/restore.h"

namespace gauntlet::cli {

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
// Exit codes: 0 reduced (the smallest case that fails the same way printed, the case itself when
// no smaller one does), 2 bad input: an unknown or invalid key, a case that does not fail
// ("case passes; nothing to reduce"), a collective case, a model case that does not FAIL or whose
// first divergent node has no op case (Note [Model reduction]), a backend that cannot start.
int reduce(const ReduceOptions& o);

}  // namespace gauntlet::cli
