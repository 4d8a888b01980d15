#include "gauntlet/base/command_line.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "gauntlet/base/error.h"

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

void describe_dynamo(OptionSink& s, std::string& backend, std::string& options) {
  s.option("--dynamo-backend", backend,
           "the dynamo backend compile cases compile with: NAME or NAME@MODULE, MODULE a Python package or .py "
           "file that registers NAME (default: inductor on cpu, gauntlet_sim on sim; or $GAUNTLET_DYNAMO_BACKEND)");
  s.option("--dynamo-options", options,
           "torch.compile's options for compile cases, a JSON object such as '{\"max_autotune\": true}' (or "
           "$GAUNTLET_DYNAMO_OPTIONS)");
}

void check_dynamo_backend(const std::string& value, const std::string& where) {
  const auto at = value.find('@');
  const std::string name = value.substr(0, at);
  const std::string module = at == std::string::npos ? "" : value.substr(at + 1);
  const bool name_ok = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
  const bool module_ok = at == std::string::npos ||
                         (!module.empty() && std::none_of(module.begin(), module.end(),
                                                          [](unsigned char c) { return c < 0x20 || c == 0x7f; }));
  if (!name_ok || !module_ok) {
    throw Error(
        fmt::format("{}='{}': use NAME or NAME@MODULE (a dynamo backend's registered name, letters, digits, "
                    "'_', '-', '.'; MODULE a Python module or a .py file that registers it)",
                    where, one_line(value)));
  }
}

void check_dynamo_options(const std::string& value, const std::string& where) {
  const nlohmann::json options = nlohmann::json::parse(value, nullptr, false);
  if (options.is_discarded() || !options.is_object())
    throw Error(fmt::format("{}='{}': torch.compile's options are a JSON object, such as '{{\"max_autotune\": true}}'",
                            where, one_line(value)));
}

}  // namespace gauntlet
