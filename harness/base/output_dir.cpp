#include "gauntlet/base/output_dir.h"

#include <fmt/format.h>

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

void claim_output_dir(const std::string& dir, const std::string& what, const std::vector<std::string>& ours_too) {
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
  const fs::path marker = path / output_dir_marker(what);
  const fs::file_status st = fs::status(path, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) throw Error(fmt::format("{}: not a folder", dir));
    if (fs::exists(marker, ec)) return;  // written by this command before
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
          fmt::format("{}: the folder holds files Gauntlet did not write (no {} in it); name a new or empty folder",
                      dir, output_dir_marker(what)));
    }
  } else {
    fs::create_directories(path, ec);
    if (ec) throw Error(fmt::format("{}: cannot create the folder: {}", dir, ec.message()));
  }
  std::ofstream out(marker, std::ios::binary | std::ios::trunc);
  out << "Written by gauntlet " << what << ": it may replace this folder's contents (Note [Output folders]).\n";
  out.close();
  if (!out) throw Error(fmt::format("{}: cannot write", marker.string()));
}

}  // namespace gauntlet
