// Waivers: a checked-in file of known regressions (docs/waivers.md). `gauntlet compare --waivers`
// reports a waived regression but does not let it fail the gate, until its waiver expires.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gauntlet/analysis/regress.h"
#include "gauntlet/base/error.h"

namespace gauntlet {

// The user's error in a waiver file, or in GAUNTLET_TODAY. One line: "waivers.yaml:7: expires:
// 'tomorrow' is not a date (YYYY-MM-DD)".
class WaiverError : public Error {
 public:
  using Error::Error;
};

// One entry of the file, validated.
struct Waiver {
  std::string pattern;           // glob on case keys (gauntlet::glob_match)
  std::optional<Gate> gate;      // `change: speed`: every regression of that gate
  std::optional<Change> change;  // `change: slower`: that change only
                                 // (neither: any regression)
  std::string reason, owner;
  std::string expires;  // YYYY-MM-DD, the last day (UTC) the waiver applies
  std::string where;    // "waivers.yaml:12" (the name as given to load/parse; a waiver that
                        // shares its line with an earlier one gets ":column" too, so that
                        // `where` tells waivers apart)

  // What the waiver covers, as written in the file: "any", a gate name or a change name.
  std::string change_str() const;
};

class Waivers {
 public:
  Waivers() = default;  // no waivers

  // Throws WaiverError: "waivers.yaml: cannot read: No such file or directory", or
  // "<path>:<line>: <field>: <problem>" for a bad entry.
  static Waivers load(const std::string& path);
  // The same from text; `name` stands for the file in messages and in Waiver::where.
  static Waivers parse(const std::string& text, const std::string& name);

  // The first waiver, in file order, whose glob matches `key` and that covers `change`: it names
  // that change, or names `gate_of_change` (the caller's change_gate(change)), or names neither.
  // First match wins, expired or not. Changes that are not regressions (faster, fixed, new) are
  // never waived. `today` ("YYYY-MM-DD", UTC; see today_utc) decides WaiverRef::expired: a
  // waiver is expired when today > expires. Throws std::invalid_argument for a malformed `today`.
  std::optional<WaiverRef> match(std::string_view key, Change change, Gate gate_of_change,
                                 const std::string& today) const;

  // Stale waivers: those that no finding cites (by WaiverRef::where), in file order. Call it with
  // the findings that `match` annotated. A waiver unused by one comparison may still cover another
  // suite or backend, so report these; do not fail on them.
  std::vector<const Waiver*> unused(const std::vector<Finding>& findings) const;

  const std::vector<Waiver>& all() const { return waivers_; }
  bool empty() const { return waivers_.empty(); }

 private:
  std::vector<Waiver> waivers_;
};

// True for a real calendar date written YYYY-MM-DD (month 1-12, day within the month, leap years).
bool is_iso_date(std::string_view s);

// Today's date in UTC, "YYYY-MM-DD", from the system clock. GAUNTLET_TODAY=YYYY-MM-DD overrides it
// (tests and reproducible reports); a malformed override throws WaiverError. Empty means unset.
std::string today_utc();

}  // namespace gauntlet
