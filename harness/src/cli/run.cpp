// gauntlet run: expand a suite, run every case in worker processes (or in-process with
// --workers 0), store every result as it arrives; --resume finishes a run that stopped. The run
// itself is the library's (gauntlet/run/run_request.h, Note [Run session]).
#include "cli.h"
#include "gauntlet/run/run_request.h"

namespace gauntlet::cli {

int run(const RunOptions& o) { return PreparedRun::prepare(o)->run(); }

}  // namespace gauntlet::cli
