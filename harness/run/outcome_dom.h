// An outcome from a JSON object already parsed by simdjson (outcome_json.cpp): how the worker
// protocol's reader (run/worker_protocol.cpp) reads a result without a second parse.
#pragma once

#include <simdjson.h>

#include "gauntlet/base/outcome.h"

namespace gauntlet {

// Throws std::runtime_error for a missing status or a mistyped field; unknown fields are ignored.
Outcome outcome_from_dom(simdjson::dom::object obj);

}  // namespace gauntlet
