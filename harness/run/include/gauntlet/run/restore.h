// How one case is judged outside the run that stored it (Note [Repro from the record] in
// harness/run/restore.cpp): what `repro` and `reduce` take back from a stored run, and the one
// form of the command that reruns a case without the database. No torch here.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gauntlet/run/worker_protocol.h"
#include "gauntlet/store/store.h"

namespace gauntlet {

// What judges a case beside its key: `repro`'s and `reduce`'s options of the same names.
struct ReproSetup {
  std::string backend;  // "": cpu, or the run's
  std::string profile;  // --profile ("": the backend's own, or the run's)
  std::string suites_dir, golden_store, golden_release;
  TimingOptions timing;  // `run`'s defaults, or the stored run's
};

// What a stored run gave back.
// NOLINTNEXTLINE(bugprone-exception-escape): its implicit members copy strings and JSON, as any value's.
struct Restored {
  RunInfo info;
  std::optional<Outcome> stored;   // the run's result for the case, when it has one
  nlohmann::json backend_config;   // as the run recorded it
  std::vector<std::string> notes;  // what was restored, to print
  std::vector<std::string> warnings;
  std::string standalone;  // the same case as a command that needs no database
};

// With `db` set: restores run `run`'s (0: the latest with a result for the key) backend, profile,
// suites dir, goldens and timing into `s` (what `s` already names stays), and its recorded
// environment into this process's; nullopt without a database. Throws gauntlet::Error for a run or
// database that is not there, or --run without --db.
std::optional<Restored> restore_run(ReproSetup& s, const std::string& db, std::int64_t run,
                                    const std::string& canonical_key);
// "restored from run N of DB ...", the notes, the warnings, the standalone command and the stored
// status: the lines `repro --db` prints before the case runs.
std::string restored_text(const Restored& r, const std::string& db);
// Where the loaded backend differs from the run's: a line each for the version and the
// configuration (a JSON object, compared field by field); none when it is another backend.
std::vector<std::string> backend_differences(const Restored& r, const std::string& name, const std::string& version,
                                             const std::string& config_json);
// The line that closes a repro from the record: whether `now` is the stored verdict ("" when the
// run stored none), and when it is, where the cause differs: the signal of a CRASH (`now_signal`
// "SIGSEGV" against the one the stored error names) and the stage that failed (`now_stage`
// against Outcome::stage): "reproduced: CRASH as stored in run 3, but SIGSEGV where the run saw
// SIGABRT".
std::string reproduced_line(const Restored& r, Status now, std::string_view now_stage = "",
                            std::string_view now_signal = "");
// The signal a stored CRASH's error names ("SIGABRT" of "worker died with SIGABRT ..."); "".
std::string stored_signal(std::string_view error);

// The command that reruns `key` as `s` judges it, without a database: the environment in front
// (NAME=value, shell-quoted), then `gauntlet repro KEY --backend B` and the options that differ
// from the defaults. Every such line Gauntlet prints (repro's `elsewhere`, reduce's) is this one.
std::string standalone_repro_command(const std::string& key, const ReproSetup& s,
                                     const std::map<std::string, std::string>& environment);

}  // namespace gauntlet
