// What a run records about the machine and the libtorch build it ran on.
#pragma once

#include <string>

#include "gauntlet/base/host.h"  // utc_now
#include "gauntlet/store/store.h"

namespace gauntlet {

// Fills host, cpu, threads, torch_version, blas, build_config and gauntlet_version.
void describe_environment(RunInfo& info);
std::string gauntlet_version();

}  // namespace gauntlet
