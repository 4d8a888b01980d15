// default_suites_dir, apart from the catalog: the torch-free commands name the default suites
// folder (show, compare) without the suites' op table (Note [Two binaries] in cli_front/front.cpp).
#include <cstdlib>
#include <string>

#include "gauntlet/run/suite.h"

namespace gauntlet {

std::string default_suites_dir() {
  if (const char* env = std::getenv("GAUNTLET_SUITES"); env && *env) return env;
  return GAUNTLET_SOURCE_SUITES_DIR;
}

std::string suites_dir_or_default(const std::string& dir) { return dir.empty() ? default_suites_dir() : dir; }

}  // namespace gauntlet
