// gauntlet rank: one rank of a collective case's group (Note [Collective groups] in
// harness/src/coll_group.cpp), started by the group's launcher, never by hand: it joins the
// group's store on 127.0.0.1:--port, runs the case (Note [Collective ranks]) and answers one
// outcome line (JSON) on stdout. Exit 0 when it answered, whatever the status.
#include <sys/prctl.h>

#include <csignal>
#include <iostream>

#include "cli.h"
#include "gauntlet/backend.h"
#include "gauntlet/collective.h"
#include "gauntlet/outcome_json.h"
#include "gauntlet/runner.h"

namespace gauntlet::cli {

int rank(const RankOptions& o) {
  // If the launcher dies (killed at its own timeout, or the worker that ran it), so does the rank:
  // a group never outlives whoever started it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const CaseKey key = CaseKey::parse(o.key);
  const std::string dir = suites_dir_or_default(o.suites_dir);
  const ToleranceTable tolerances = ToleranceTable::load(dir + "/tolerances.yaml");
  auto backend = make_backend(o.backend);
  RankConfig cfg;
  cfg.tolerances = &tolerances;
  cfg.store_timeout_s = o.store_timeout;
  cfg.startup_timeout_s = o.startup_timeout;
  const Outcome out = run_rank(key, o.rank, o.port, *backend, cfg);
  std::cout << to_json_text(out) << std::endl;
  return 0;
}

}  // namespace gauntlet::cli
