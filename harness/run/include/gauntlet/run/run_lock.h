// Note [One orchestrator per run] (harness/run/run_lock.cpp): one process at a time runs a
// stored run's missing cases.
#pragma once

#include <cstdint>
#include <string>

namespace gauntlet {

class RunLock {
 public:
  // Locks run `run_id` of database `db` for the life of this object (of this process, when it is
  // killed). Throws gauntlet::Error naming the holder when another process has it, or when the
  // lock file cannot be created.
  RunLock(const std::string& db, std::int64_t run_id);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace gauntlet
