// `gauntlet triage` (docs/regressions.md#triage): acknowledge a regression compare lists (a group,
// an op or a case), take an acknowledgement back, list them. No torch.
#pragma once

#include <cstdint>
#include <string>

#include "gauntlet/base/command_line.h"

namespace gauntlet {

struct TriageRequest {
  std::string action;   // ack | unack | list
  std::string subject;  // ack: a group, op or case key; unack: an ack's id, or its subject
  std::string db;
  std::string note, until, change, by;
  std::int64_t run = 0;           // ack: the run whose regression it is (0: the latest)
  std::string baseline = "auto";  // ... judged against this baseline, as compare judges it
  bool all = false;               // list: removed acknowledgements too
  bool json = false;              // list: as JSON
};
void describe_options(OptionSink& s, TriageRequest& o);

// What the command prints; throws gauntlet::Error (one line, exit 2) on bad input, before
// anything is written.
std::string triage_command(const TriageRequest& o);

}  // namespace gauntlet
