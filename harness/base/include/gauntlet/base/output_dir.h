// Note [Output folders]: Gauntlet deletes or overwrites only what it wrote itself. A command that
// writes a folder (dashboard --out, repro --bundle) claims it first: a folder that does not exist
// yet, or an empty one, is created and marked with a file of its own (".gauntlet-<what>"); a folder
// holding that marker was written by the same command before and may be replaced; any other
// folder with contents is refused with one line naming it, and so are "/" and the home folder,
// whatever they hold. Nothing is written or removed before the claim succeeds.
#pragma once

#include <string>
#include <vector>

namespace gauntlet {

// Claims `dir` for the command `what` ("dashboard", "bundle"): creates it when missing and writes
// its marker. `ours_too`: names (relative to `dir`) that, all present, show a folder this command
// wrote before markers existed (a site's index.html and data/overview.js), which is claimed too.
// Throws UsageError ("<dir>: ..." on one line) when the folder cannot be claimed.
void claim_output_dir(const std::string& dir, const std::string& what, const std::vector<std::string>& ours_too = {});

// The same checks as claim_output_dir, without creating or writing anything: for a command that
// writes its folder only after long work (repro --bundle), so that it refuses before the work.
void check_output_dir(const std::string& dir, const std::string& what, const std::vector<std::string>& ours_too = {});

// The marker's file name for `what`: ".gauntlet-<what>".
std::string output_dir_marker(const std::string& what);

// Note [Output files]: a file a command will write (a report, bench's JSON), checked before the
// work starts: a regular file we may write, or a new one in an existing folder we may write; a
// folder, FIFO or device, or a missing folder, is an Error "<flag> <path>: ..." on one line.
void check_output_file(const std::string& flag, const std::string& path);

// Note [Input files]: a file a command reads (--keys-file, --plan, --waivers), checked before it is
// opened: a missing one, a folder, a FIFO (whose open would block until someone writes it) or a
// device is an Error "<flag> <path>: ..." on one line ("<path>: ..." without a flag).
void check_input_file(const std::string& flag, const std::string& path);

// The database a command will write (--db), before anything runs: a path that is a folder, a FIFO
// or a device is refused in one line; its missing parent folders are created (docs/cli.md).
void check_database_path(const std::string& path);

}  // namespace gauntlet
