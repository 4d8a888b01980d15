// One case explained, as `gauntlet repro` prints it: what the case is, its inputs, golden against
// actual, the worst elements, the tolerance, metrics, time, fallbacks and the verdict; and the same
// as JSON (`repro --json`: the outcome fields the store keeps, plus the details).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gauntlet/base/case_key.h"
#include "gauntlet/base/outcome.h"

namespace gauntlet {

struct CaseDetail;

// "case / id / op (or model, or coll) / backend" lines and a blank line; `backend` as it is to be
// shown ("sim", or "sim (sim-0.3.1)" once loaded).
std::string case_title_text(const CaseKey& key, const std::string& backend);
// An op case's inputs as make_inputs makes them on the CPU and laid out for the device: shown
// before the case runs (no backend code), so that a case that kills its process still shows them.
// "" for other kinds.
std::string case_inputs_text(const CaseKey& key);
// After the case: `detail`'s inputs (when `with_inputs`), actual and golden tensors, the worst
// elements, then the tolerance, metrics, time, fallbacks, decompositions, golden and verdict.
std::string case_explanation_text(const Outcome& out, const CaseDetail& detail, bool with_inputs);
// The outcome as the store keeps it, with the schema version, the key's id, the backend, the
// inputs and the worst elements.
nlohmann::json case_explanation_json(const CaseKey& key, const Outcome& out, const CaseDetail& detail,
                                     const std::string& backend);

}  // namespace gauntlet
