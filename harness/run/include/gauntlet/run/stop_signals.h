// How signals stop a run (harness/run/stop_signals.cpp): SIGINT and SIGTERM ask it to stop
// after the cases in flight (stored results stay; it resumes), and a bus error ends it in one line
// (Note [Bus errors]).
#pragma once

#include <cstdint>
#include <string>

namespace gauntlet {

// From now on SIGINT and SIGTERM set interrupted() instead of ending the process.
void catch_stop_signals();
bool interrupted();
// Note [Bus errors]: from now on SIGBUS prints that run `run_id` of `db` stopped and how to resume
// it, and exits kExitEnvironment.
void catch_bus_errors(std::int64_t run_id, const std::string& db, bool in_process);

}  // namespace gauntlet
