// Note [Child processes]: the harness starts other processes in four places: `run`'s workers
// (Note [Orchestrator loop]), the workers of `reduce` and `compare --confirm` (Note
// [Confirmation]), a collective case's ranks (coll_group.cpp), and the child that runs `repro`'s
// case (Note [Crash-safe repro]). All go through ChildProcess:
//   - a worker's stdin and stdout are pipes, our ends close-on-exec, so that a worker started
//     later does not hold an earlier one's stdin open (it would never see EOF);
//   - a rank's stdin is /dev/null and its stdout a file;
//   - stderr goes to a file (a crash's last lines are read from it), to a pipe (repro's child,
//     Note [Crash-safe repro]: passed through with its last lines kept) or stays ours;
//   - `own_group` puts the child in a process group of its own, and kill() then ends the group:
//     a worker's ranks, or anything a backend started, die with the case that hung;
//   - `core` pins it (and what it starts) to one CPU, before exec;
//   - the environment is ours with `env` set over it and `env_defaults` where ours has none.
// What runs in the child between fork and exec is only system calls (open, dup2, setpgid,
// sched_setaffinity). kill() does not reap: wait() does, so that the exit status is read once.
#include "gauntlet/run/child_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <cerrno>
#include <filesystem>
#include <system_error>

#include "gauntlet/base/error.h"

namespace bp = boost::process;

namespace gauntlet {

struct ChildProcess::Impl {
  bp::opstream in;
  bp::ipstream out;
  bp::ipstream err;
  bp::child child;
};

namespace {

// In the child, before exec: only system calls.
void redirect(const char* path, int fd, int flags) {
  const int f = ::open(path, flags, 0644);
  if (f < 0) return;
  ::dup2(f, fd);
  if (f != fd) ::close(f);
}

}  // namespace

ChildProcess::ChildProcess(const ChildSpec& spec) : impl_(std::make_unique<Impl>()), own_group_(spec.own_group) {
  bp::environment env = boost::this_process::environment();
  for (const auto& [name, value] : spec.env) env[name] = value;
  for (const auto& [name, value] : spec.env_defaults) {
    if (env.find(name) == env.end()) env[name] = value;
  }
  const int core = spec.core;
  const bool group = spec.own_group, pipes = spec.pipes;
  const std::string err = spec.err_pipe ? "" : spec.err_file, out = spec.out_file;
  auto setup = [core, group, pipes, &err, &out](auto&) {
    if (group) ::setpgid(0, 0);
    if (core >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(core, &set);
      ::sched_setaffinity(0, sizeof set, &set);
    }
    if (!pipes) {
      redirect("/dev/null", 0, O_RDONLY);
      if (!out.empty()) redirect(out.c_str(), 1, O_WRONLY | O_CREAT | O_TRUNC);
    }
    if (!err.empty()) redirect(err.c_str(), 2, O_WRONLY | O_CREAT | O_TRUNC);
  };
  try {
    if (pipes) {
      impl_->child = bp::child(spec.exe, bp::args(spec.args), bp::std_in<impl_->in, bp::std_out> impl_->out, env,
                               bp::extend::on_exec_setup = setup);
      ::fcntl(impl_->in.pipe().native_sink(), F_SETFD, FD_CLOEXEC);
      ::fcntl(impl_->out.pipe().native_source(), F_SETFD, FD_CLOEXEC);
    } else if (spec.err_pipe) {
      impl_->child =
          bp::child(spec.exe, bp::args(spec.args), bp::std_err > impl_->err, env, bp::extend::on_exec_setup = setup);
      ::fcntl(impl_->err.pipe().native_source(), F_SETFD, FD_CLOEXEC);
    } else {
      impl_->child = bp::child(spec.exe, bp::args(spec.args), env, bp::extend::on_exec_setup = setup);
    }
  } catch (const std::system_error& e) {
    throw Error(fmt::format("cannot start {}: {}", spec.exe, e.what()));
  }
}

ChildProcess::~ChildProcess() {
  if (!impl_) return;
  close_in();
  std::error_code ec;
  if (impl_->child.valid() && impl_->child.running(ec)) {
    kill();
    wait();
  }
}

pid_t ChildProcess::pid() const { return impl_->child.id(); }
std::ostream& ChildProcess::in() { return impl_->in; }
std::istream& ChildProcess::out() { return impl_->out; }
int ChildProcess::out_fd() const { return impl_->out.pipe().native_source(); }
int ChildProcess::err_fd() const { return impl_->err.pipe().native_source(); }

void ChildProcess::close_in() {
  if (impl_->in.pipe().is_open()) impl_->in.pipe().close();
}

bool ChildProcess::running() {
  std::error_code ec;
  return impl_->child.running(ec);
}

void ChildProcess::kill() {
  const pid_t pid = impl_->child.id();
  if (pid <= 0) return;
  ::kill(own_group_ ? -pid : pid, SIGKILL);
}

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find the gauntlet binary (/proc/self/exe): " + ec.message());
  return p.string();
}

int ChildProcess::wait() {
  std::error_code ec;
  impl_->child.wait(ec);
  return impl_->child.native_exit_code();
}

PassedThrough run_passing_stderr(ChildSpec spec, std::size_t keep) {
  spec.err_pipe = true;
  ChildProcess child(spec);
  PassedThrough r;
  std::string line;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(child.err_fd(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (write(STDERR_FILENO, buf, static_cast<std::size_t>(n)) < 0) {
      // stderr is gone: keep reading so the child never blocks on a full pipe
    }
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == '\n') {
        r.tail.push_back(std::move(line));
        line.clear();
        if (r.tail.size() > keep) r.tail.pop_front();
      } else {
        line += buf[i];
      }
    }
  }
  if (!line.empty()) r.tail.push_back(line);
  r.status = child.wait();
  return r;
}

}  // namespace gauntlet
