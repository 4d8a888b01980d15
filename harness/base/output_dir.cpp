#include "gauntlet/base/output_dir.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "gauntlet/base/error.h"

namespace gauntlet {

namespace fs = std::filesystem;

std::string output_dir_marker(const std::string& what) { return ".gauntlet-" + what; }

void check_output_dir(const std::string& dir, const std::string& what, const std::vector<std::string>& ours_too) {
  if (dir.empty()) throw Error("the output folder is empty: name a folder");
  std::error_code ec;
  const fs::path path(dir);
  const fs::path canonical = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (canonical == canonical.root_path()) throw Error(fmt::format("{}: refusing to write into the root folder", dir));
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    std::error_code hec;
    if (fs::equivalent(canonical, fs::path(home), hec))
      throw Error(fmt::format("{}: refusing to write into the home folder; name a folder of its own", dir));
  }
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) return;
  if (!fs::is_directory(st)) throw Error(fmt::format("{}: not a folder", dir));
  if (fs::exists(path / output_dir_marker(what), ec)) return;  // written by this command before
  bool empty = true, legacy = !ours_too.empty();
  for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
    (void)e;
    empty = false;
    break;
  }
  if (ec) throw Error(fmt::format("{}: cannot read the folder: {}", dir, ec.message()));
  for (const std::string& name : ours_too) legacy = legacy && fs::exists(path / name, ec);
  if (!empty && !legacy) {
    throw Error(
        fmt::format("{}: the folder holds files Gauntlet did not write (no {} in it); name a new or empty folder", dir,
                    output_dir_marker(what)));
  }
}

void claim_output_dir(const std::string& dir, const std::string& what, const std::vector<std::string>& ours_too) {
  check_output_dir(dir, what, ours_too);
  std::error_code ec;
  const fs::path path(dir);
  if (!fs::exists(path, ec)) {
    fs::create_directories(path, ec);
    if (ec) throw Error(fmt::format("{}: cannot create the folder: {}", dir, ec.message()));
  }
  const fs::path marker = path / output_dir_marker(what);
  if (fs::exists(marker, ec)) return;
  std::ofstream out(marker, std::ios::binary | std::ios::trunc);
  out << "Written by gauntlet " << what << ": it may replace this folder's contents (Note [Output folders]).\n";
  out.close();
  if (!out) throw Error(fmt::format("{}: cannot write", marker.string()));
}

void check_output_file(const std::string& flag, const std::string& path) {
  const auto parent = fs::path(path).parent_path();
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (fs::is_directory(st)) throw Error(fmt::format("{} {}: a folder, not a file", flag, path));
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    throw Error(fmt::format("{} {}: no folder {} (create it first)", flag, path, parent.string()));
  }
  // An existing file must be a regular file we may write (not a FIFO or a device, which would
  // block or swallow what is written); a new one must go in a folder we may write.
  if (fs::exists(st)) {
    if (!fs::is_regular_file(st)) throw Error(fmt::format("{} {}: not a regular file", flag, path));
    if (::access(path.c_str(), W_OK) != 0) throw Error(fmt::format("{} {}: not writable", flag, path));
  } else if (::access(parent.empty() ? "." : parent.c_str(), W_OK | X_OK) != 0) {
    throw Error(
        fmt::format("{} {}: the folder {} is not writable", flag, path, parent.empty() ? "." : parent.string()));
  }
}

void check_input_file(const std::string& flag, const std::string& path) {
  const std::string named = flag.empty() ? path : flag + " " + path;
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (!fs::exists(st)) throw Error(named + ": no such file");
  if (fs::is_directory(st)) throw Error(named + ": a folder, not a file");
  if (!fs::is_regular_file(st)) throw Error(named + ": not a regular file (a FIFO or a device)");
}

void check_database_path(const std::string& path) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (fs::is_directory(st)) throw Error(fmt::format("--db {}: a folder, not a database file", path));
  if (fs::exists(st) && !fs::is_regular_file(st)) throw Error(fmt::format("--db {}: not a regular file", path));
  if (const auto parent = fs::path(path).parent_path(); !parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec) throw Error(fmt::format("cannot create the folder of {}: {}", path, ec.message()));
  }
}

}  // namespace gauntlet
