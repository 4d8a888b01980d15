// The waivers file (gauntlet/analysis/waivers.h): parses or throws WaiverError, one line naming the file.
#include "fuzz_target.h"
#include "gauntlet/analysis/waivers.h"

GAUNTLET_FUZZ_TARGET(waivers) {
  try {
    const gauntlet::Waivers w = gauntlet::Waivers::parse(std::string(data), "waivers.yaml");
    (void)w;
  } catch (const gauntlet::WaiverError& e) {
    gauntlet::fuzz::require_one_line(e.what());
    gauntlet::fuzz::require(std::string(e.what()).rfind("waivers.yaml", 0) == 0,
                            std::string("an error that does not name the file: ") + e.what());
  }
}
