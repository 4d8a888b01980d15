// Failing-shape reduction (Note [Failing-shape reduction] in reduce.cpp): smaller op cases that
// still fail the same way. Pure: the cases run through a function the caller gives (`gauntlet
// reduce` runs them in worker processes). No torch here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gauntlet/case_key.h"
#include "gauntlet/outcome.h"

namespace gauntlet {

// How a case fails, as far as reduction compares: the status, and for FAIL the outputs out of
// tolerance, for ERROR the error's first line with its numbers blanked (a shape in the message
// changes with the shape), for CRASH the signal.
struct FailureSignature {
  Status status = Status::Pass;
  std::vector<std::string> outputs;  // FAIL: sorted output names ("out0", "grad.self")
  std::string detail;                // ERROR: normalised first line; CRASH: "SIGSEGV"; else ""
  std::string str() const;           // "FAIL (out0 out of tolerance)", "CRASH (SIGSEGV)", ...
  bool operator==(const FailureSignature& o) const {
    return status == o.status && outputs == o.outputs && detail == o.detail;
  }
  bool operator!=(const FailureSignature& o) const { return !(*this == o); }
};
FailureSignature failure_signature(const Outcome& o);
// Whether reduction can start from this status: FAIL, ERROR, CRASH or TIMEOUT.
bool reducible_status(Status s);

// A case's size as reduction orders candidates: elements over all inputs, then dims.
std::int64_t total_elements(const CaseKey& key);
std::int64_t largest_input_elements(const CaseKey& key);

struct Candidate {
  CaseKey key;
  std::string move;  // what changed, e.g. "dim 16 -> 8 in every input"
};
struct Candidates {
  std::vector<Candidate> valid;  // distinct, smallest first
  int invalid = 0;               // generated, rejected by validate_key (never run)
};
// One step smaller in every way the strategy knows, from `key` (an op case).
Candidates shrink_candidates(const CaseKey& key);

struct ReduceStep {
  std::string from, to, move;
};
struct ReduceStats {
  int rounds = 0;      // moves made, plus the last round that found none
  int tried = 0;       // candidates run
  int reproduced = 0;  // ... that failed the same way
  int passed = 0;      // ... that passed
  int other = 0;       // ... that ended otherwise (another failure, an error of the golden)
  int invalid = 0;     // candidates rejected by validate_key, not run
  int batches = 0;     // calls of the runner (each starts worker processes)
};
struct ReduceResult {
  CaseKey smallest;
  Outcome outcome;  // the smallest case's
  std::vector<ReduceStep> steps;
  ReduceStats stats;
  bool budget_spent = false;  // stopped at max_candidates, not at a minimum
};
struct ReduceConfig {
  int max_candidates = 400;  // candidates run at most
};
// Runs cases and returns their outcomes, in the order given.
using RunCases = std::function<std::vector<Outcome>(const std::vector<std::string>& keys)>;
// Greedy descent from `start` (which failed as `start_outcome`): each round runs the candidates
// smallest first, in batches of 1, 2, 4, ..., and moves to the smallest that fails the same way;
// it stops when a round finds none or the budget is spent.
ReduceResult reduce_case(const CaseKey& start, const Outcome& start_outcome, const RunCases& run,
                         const ReduceConfig& cfg = {});
// The strategy in one line, for output and docs.
std::string reduce_strategy();

}  // namespace gauntlet
