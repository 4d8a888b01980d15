#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "fuzz_target.h"

namespace gauntlet::fuzz {

namespace {
std::map<std::string, Target>& registry() {
  static std::map<std::string, Target> targets;
  return targets;
}
}  // namespace

Register::Register(const char* name, Target target) { registry()[name] = target; }

Target find(const std::string& name) {
  const auto it = registry().find(name);
  if (it != registry().end()) return it->second;
  std::string known;
  for (const auto& [n, t] : registry()) known += (known.empty() ? "" : ", ") + n;
  std::fprintf(stderr, "no fuzz target '%s' (known: %s)\n", name.c_str(), known.c_str());
  return nullptr;
}

void require(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "FINDING: %s\n", what.c_str());
  std::abort();
}

void require_one_line(const std::string& message) {
  for (const char c : message) {
    const auto u = static_cast<unsigned char>(c);
    require(u >= 0x20 && u != 0x7f, "an error message that is not one line: " + message);
  }
}

std::string write_temp(std::string_view data, const std::string& suffix) {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("gauntlet_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  const std::string path = (dir / ("input" + suffix)).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(data.data(), static_cast<std::streamsize>(data.size()));
  return path;
}

}  // namespace gauntlet::fuzz

#ifdef GAUNTLET_FUZZ_ENTRY
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gauntlet::fuzz::Target target = gauntlet::fuzz::find(GAUNTLET_FUZZ_ENTRY);
  if (!target) std::abort();
  target(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
#endif
