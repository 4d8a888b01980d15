// What `gauntlet compare` prints on its terminal (unless --quiet): the runs compared, the speed
// and throughput summaries, the findings by kind, and the waivers that matched nothing. The
// report files are reports.h's; this is for a person watching. No torch.
#pragma once

#include <string>

#include "gauntlet/analysis/regress.h"
#include "gauntlet/analysis/waivers.h"

namespace gauntlet {

std::string compare_console_text(const RunComparison& c, const Waivers& waivers);

}  // namespace gauntlet
