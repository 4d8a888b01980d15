// The case-key parser (gauntlet/base/case_key.h): a key parses or throws KeyError (one line), and the
// canonical text of what parsed parses back to the same key.
#include "fuzz_target.h"
#include "gauntlet/base/case_key.h"

GAUNTLET_FUZZ_TARGET(case_key) {
  using gauntlet::CaseKey;
  CaseKey key;
  try {
    key = CaseKey::parse(data);
  } catch (const gauntlet::KeyError& e) {
    gauntlet::fuzz::require_one_line(e.what());
    return;
  }
  const std::string canonical = key.str();
  CaseKey again;
  try {
    again = CaseKey::parse(canonical);
  } catch (const gauntlet::KeyError& e) {
    gauntlet::fuzz::require(false, "the canonical form of a parsed key does not parse: " + std::string(e.what()));
  }
  gauntlet::fuzz::require(again.str() == canonical, "parse(str(k)) != k for " + canonical);
  gauntlet::fuzz::require(again.id() == key.id(), "the id changed through parse(str(k)): " + canonical);
}
