// Note [Recorded environment] (harness/run/recorded_env.cpp): the environment variables a run
// records with its configuration, so that --resume and `repro --db` can set them again.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gauntlet {

// The globs of the variables a run records: GAUNTLET_* plus `extra` and $GAUNTLET_RECORD_ENV,
// each a list split at ',' or ':'. A pattern that is not a variable name with '*' and '?' is a
// gauntlet::Error.
std::vector<std::string> record_env_patterns(const std::vector<std::string>& extra);
// Whether variable `name` is one the patterns record.
bool env_recorded(const std::string& name, const std::vector<std::string>& patterns);
// The variables of this process's environment that `patterns` record, by name.
std::map<std::string, std::string> recorded_environment(const std::vector<std::string>& patterns);

}  // namespace gauntlet
