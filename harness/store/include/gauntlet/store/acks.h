// Triage state (Note [Acknowledgements] in acks.cpp): who looked at a regression, when, and what
// they decided, kept in the results database beside the runs it is about.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gauntlet/base/sqlite.h"

namespace gauntlet {

struct Ack {
  std::int64_t id = 0;
  std::string subject;                 // a group ("op/add/f32/eager"), a failure's op ("op/exp") or a case key
  std::string change;                  // the change acknowledged (regress.h change_name: "slower", "status-change")
  std::string signature;               // a failure's: its error's signature (text.h error_signature); "" otherwise
  std::string backend;                 // the backend whose runs it covers
  std::string note;                    // why
  std::string by, at;                  // who, and when (UTC, ISO 8601)
  std::string until;                   // a release: the ack no longer holds from that release's first run on ("" never)
  std::int64_t run_id = 0;             // the candidate run it was made against
  std::int64_t moved = 0;              // its findings then
  double worst = NAN;                  // the largest ratio among them then (NaN: the change has none)
  std::string removed_at, removed_by;  // unack: kept for the record ("" while it holds)
};

// Every acknowledgement of the database at `path` (removed ones too), oldest first; none when
// no ack was ever made. Errors are one line through `fail`.
std::vector<Ack> read_acks(const std::string& path, sqlite::Fail fail);
// Records `a` (its id and removed fields ignored); returns its id. Creates the table on first use.
std::int64_t add_ack(const std::string& path, const Ack& a, sqlite::Fail fail);
// Marks ack `id` removed by `by` at `at`; false when there is no such ack still holding.
bool remove_ack(const std::string& path, std::int64_t id, const std::string& by, const std::string& at,
                sqlite::Fail fail);

}  // namespace gauntlet
