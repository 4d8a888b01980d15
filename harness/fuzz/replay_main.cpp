// gauntlet_fuzz_replay TARGET PATH...: runs every file under each PATH (a file or a folder)
// through TARGET once (Note [Fuzz targets]); a finding aborts. Prints how many inputs ran.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "fuzz_target.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gauntlet_fuzz_replay TARGET PATH...\n");
    return 2;
  }
  const gauntlet::fuzz::Target target = gauntlet::fuzz::find(argv[1]);
  if (!target) return 2;
  std::vector<std::filesystem::path> files;
  for (int i = 2; i < argc; ++i) {
    const std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else if (std::filesystem::is_regular_file(p)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "%s: no such file or folder\n", argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "no inputs under the paths given\n");
    return 2;
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::fprintf(stderr, "%s\n", f.string().c_str());  // the input a finding came from
    target(ss.str());
  }
  std::printf("%s: %zu inputs replayed, no finding\n", argv[1], files.size());
  return 0;
}
