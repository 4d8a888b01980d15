// gauntlet worker: the process the orchestrator runs cases in (gauntlet/run/worker_loop.h, Note
// [Worker protocol] in harness/src/run/worker_protocol.cpp).
#include "cli.h"
#include "gauntlet/run/worker_loop.h"

namespace gauntlet::cli {

int worker(const WorkerOptions& o) { return run_worker(o); }

}  // namespace gauntlet::cli
