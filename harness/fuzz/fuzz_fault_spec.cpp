// The simulator's fault rules (simulator/src/fault_spec.h): parse or throw std::invalid_argument
// (one line); canonical() parses back to the same rules.
#include <stdexcept>

#include "fault_spec.h"
#include "fuzz_target.h"

GAUNTLET_FUZZ_TARGET(fault_spec) {
  using gauntlet::sim::FaultSpec;
  using gauntlet::sim::parse_fault_spec;
  FaultSpec spec;
  try {
    spec = parse_fault_spec(data, "GAUNTLET_SIM_FAULTS");
  } catch (const std::invalid_argument& e) {
    gauntlet::fuzz::require_one_line(e.what());
    return;
  }
  const std::string canonical = spec.canonical();
  FaultSpec again;
  try {
    again = parse_fault_spec(canonical, "canonical");
  } catch (const std::invalid_argument& e) {
    gauntlet::fuzz::require(false, "canonical() does not parse: " + canonical + ": " + e.what());
  }
  gauntlet::fuzz::require(again.canonical() == canonical, "parse(canonical()) differs: " + canonical);
}
