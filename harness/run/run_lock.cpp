// Note [One orchestrator per run]: two `run --run-id 7` (or `--resume 7`) at once on one database
// would both run run 7's missing cases, the last writer winning. The first takes an advisory lock
// (flock) on `<db>.run<id>.lock` and holds it until it exits, however it exits: the kernel drops
// the lock of a killed process, so no stale lock outlives it. The second gets a one-line error
// naming the holder. The file stays (empty of meaning once unlocked); it is not a database file.
#include "gauntlet/run/run_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gauntlet/base/error.h"
#include "gauntlet/base/host.h"

namespace gauntlet {

RunLock::RunLock(const std::string& db, std::int64_t run_id) {
  const std::string path = fmt::format("{}.run{}.lock", db, run_id);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(fmt::format("cannot create the run lock {}: {}", path, std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char buf[256] = {};
    const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    std::string holder(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    ::close(fd_);
    throw Error(fmt::format("run {} of {} is being run by another gauntlet ({}): let it end, or stop it and resume",
                            run_id, db, holder.empty() ? "holder unknown" : holder));
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string me = fmt::format("pid {} on {} since {}\n", ::getpid(), host, utc_now());
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) < 0) {
    // The lock holds without the note; a second run's error just cannot name us.
  }
}

RunLock::~RunLock() { ::close(fd_); }

}  // namespace gauntlet
