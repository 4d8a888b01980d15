// compare --confirm (Note [Confirmation] in harness/run/confirm.cpp): flagged host-time speed
// changes re-measured A B B A ... in fresh worker processes of both releases. No torch here.
#pragma once

#include <string>
#include <vector>

#include "gauntlet/analysis/regress.h"
#include "gauntlet/run/worker_protocol.h"

namespace gauntlet {

struct ConfirmOptions {
  std::string baseline_backend, candidate_backend, suites_dir;
  std::vector<std::string> baseline_env, candidate_env;  // NAME=VALUE
  int rounds = 16;
  TimingOptions timing;
  bool verbose = true;  // a line on stderr for each finding dropped
};
struct ConfirmResult {
  int confirmed = 0, dropped = 0;
};
// Re-measures the host-time speed findings of `c` and drops those not confirmed; those kept carry
// the confirmed figures. Throws gauntlet::Error when a worker cannot start or dies.
ConfirmResult confirm_speed(RunComparison& c, const CompareOptions& opt, const ConfirmOptions& o);

}  // namespace gauntlet
