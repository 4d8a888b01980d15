#include "gauntlet/run/recorded_env.h"

#include <fmt/format.h>

#include <algorithm>

#include "gauntlet/base/error.h"
#include "gauntlet/base/glob.h"
#include "gauntlet/base/strings.h"

extern char** environ;

namespace gauntlet {

// Note [Recorded environment]: a backend's configuration often lives in environment variables
// (the simulator's GAUNTLET_SIM_FAULTS and GAUNTLET_SIM_NUMERICS, a vendor's compiler flags), and
// a case's verdict depends on them. A run records, in its config_json, the variables matching
// GAUNTLET_* (less the harness's own that judge nothing: kNotRecorded) and the globs of
// --record-env / $GAUNTLET_RECORD_ENV, with the patterns themselves, so that `repro --db` can set
// them again and unset those of the same patterns the run did not have.
namespace {
constexpr const char* kNotRecorded[] = {"GAUNTLET_PROFILE", "GAUNTLET_RECORD_ENV", "GAUNTLET_PRICE_PER_DEVICE_HOUR",
                                        "GAUNTLET_TODAY"};
}  // namespace

std::vector<std::string> record_env_patterns(const std::vector<std::string>& extra) {
  std::vector<std::string> patterns = {"GAUNTLET_*"};
  std::vector<std::string> more = extra;
  if (const char* env = std::getenv("GAUNTLET_RECORD_ENV"); env && *env) more.emplace_back(env);
  for (const std::string& list : more) {
    for (const std::string& p : split(list, ",:")) {
      if (p.empty()) continue;
      if (p.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_*?") !=
          std::string::npos) {
        throw Error(fmt::format("--record-env '{}': a pattern is a variable name with '*' and '?' ('NEURON_*')", p));
      }
      if (std::find(patterns.begin(), patterns.end(), p) == patterns.end()) patterns.push_back(p);
    }
  }
  return patterns;
}

bool env_recorded(const std::string& name, const std::vector<std::string>& patterns) {
  for (const char* skip : kNotRecorded) {
    if (name == skip) return false;
  }
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return glob_match(p, name); });
}

std::map<std::string, std::string> recorded_environment(const std::vector<std::string>& patterns) {
  std::map<std::string, std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string name = entry.substr(0, eq);
    if (env_recorded(name, patterns)) out[name] = entry.substr(eq + 1);
  }
  return out;
}

}  // namespace gauntlet
