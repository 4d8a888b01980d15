// A child process of the harness (Note [Child processes] in harness/run/child_process.cpp): the
// one way workers (run's orchestrator, reduce, compare --confirm), a collective case's ranks and
// repro's child are started, watched, killed and reaped.
#pragma once

#include <sys/types.h>

#include <deque>
#include <istream>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace gauntlet {

// The path of this process's binary (/proc/self/exe): the gauntlet that starts its own workers
// and ranks. Throws gauntlet::Error when it cannot be read.
std::string self_exe();

struct ChildSpec {
  std::string exe;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;           // set over this process's
  std::vector<std::pair<std::string, std::string>> env_defaults;  // set where this process has none
  // Pipes: the child's stdin and stdout are ours to write and read (in(), out()). Else its stdin
  // is /dev/null and its stdout goes to out_file ("": this process's stdout).
  bool pipes = true;
  std::string out_file;
  std::string err_file;    // its stderr ("": this process's)
  bool err_pipe = false;   // its stderr a pipe ours to read (err_fd()) instead
  int core = -1;           // pinned to this CPU (-1: any)
  bool own_group = false;  // in a process group of its own, which kill() ends whole
};

class ChildProcess {
 public:
  // Throws gauntlet::Error when it cannot be started (no such program, too many processes).
  explicit ChildProcess(const ChildSpec& spec);
  // A child still running is killed and reaped.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const;
  std::ostream& in();   // with pipes: its stdin
  std::istream& out();  // with pipes: its stdout
  int out_fd() const;   // with pipes: our end of its stdout, to poll and read
  int err_fd() const;   // with err_pipe: our end of its stderr
  // Closes its stdin without flushing what is buffered (a dead child's pipe would throw).
  void close_in();
  bool running();
  // SIGKILL to the child (its whole group with own_group); wait() then reaps it.
  void kill();
  // Waits for it to end; its wait status (as waitpid gives it).
  int wait();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool own_group_ = false;
};

// Runs `spec` with its stderr passed through to ours as it comes (err_pipe is set here), keeping
// its last `keep` lines (Note [Crash-safe repro] in harness/cli_torch/repro_command.cpp); waits for it.
struct PassedThrough {
  int status = 0;  // as waitpid gives it
  std::deque<std::string> tail;
};
PassedThrough run_passing_stderr(ChildSpec spec, std::size_t keep);

}  // namespace gauntlet
