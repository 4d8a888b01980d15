#include "gauntlet/run/stop_signals.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>

#include "gauntlet/analysis/reports.h"
#include "gauntlet/base/error.h"
#include "gauntlet/base/text.h"

namespace gauntlet {

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_signal(int) { g_interrupted = true; }

// Note [Bus errors]: SQLite maps the WAL index (the database's -shm file) into memory. When the
// database's files are made immutable or truncated mid-run, or their storage fails, touching that
// mapping raises SIGBUS, which ended the run with exit 135 and no word. The run is then as a
// SIGKILL leaves it: every committed result stored, nothing half-written (commits are atomic), so
// it resumes. The orchestrator (or an in-process run) says so in one line naming the resume
// command and exits 4 (Note [Stopped by the environment]): the handler writes a message made
// beforehand and calls _exit, both async-signal-safe. Workers keep the default: a bus error in a
// case is that case's CRASH.
char g_bus_message[2048];
std::size_t g_bus_length = 0;
extern "C" void on_bus_error(int) {
  const ssize_t written = ::write(STDERR_FILENO, g_bus_message, g_bus_length);
  (void)written;
  ::_exit(kExitEnvironment);
}
}  // namespace

void catch_bus_errors(std::int64_t run_id, const std::string& db, bool in_process) {
  const std::string m = fmt::format(
      "gauntlet: error: run {} stopped by a bus error (SIGBUS): a file mapped into memory could not be read or written "
      "(the database or its -shm file made immutable or truncated, or their storage failing{}); the results committed "
      "before it are stored. Once that is fixed, finish it with: gauntlet run --resume {} --db {}\n",
      run_id, in_process ? ", or the case in progress: workers isolate those" : "", run_id, shell_argument(db));
  g_bus_length = std::min(m.size(), sizeof g_bus_message);
  std::memcpy(g_bus_message, m.data(), g_bus_length);
  struct sigaction sa {};
  sa.sa_handler = on_bus_error;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  ::sigaction(SIGBUS, &sa, nullptr);
}

void catch_stop_signals() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

bool interrupted() { return g_interrupted.load(); }

}  // namespace gauntlet
