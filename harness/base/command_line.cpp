#include "gauntlet/base/command_line.h"

namespace gauntlet {

void describe_profile(OptionSink& s, std::string& profile) {
  s.option("--profile", profile,
           "the backend's tolerance and expectation profile (default: the name its library exports, else its "
           "file's stem: libfoo.so -> foo; or $GAUNTLET_PROFILE)");
}

void describe_price(OptionSink& s, std::string& price) {
  s.option("--price-per-device-hour", price,
           "what one device-hour costs, for cost per million samples (default: $GAUNTLET_PRICE_PER_DEVICE_HOUR)");
}

void describe_skip_db_check(OptionSink& s, bool& skip) {
  s.flag("--skip-db-check", skip,
         "skip the PRAGMA quick_check of an existing database before writing (about 0.5 s per million results)");
}

}  // namespace gauntlet
