// Failing-shape reduction (Note [Failing-shape reduction] in reduce.cpp): smaller op cases that
// still fail the same way. Pure: the cases run through a function the caller gives (`gauntlet
// reduce` runs them in worker processes). No torch here.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gauntlet/base/case_key.h"
#include "gauntlet/base/outcome.h"

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

// Note [Model reduction]: a model case is not shrunk as a model (its sizes are the model's); its
// failure is taken to the op where it starts. A FAIL names its first divergent node (Note [First
// divergent node]: the op's kind and its tensor inputs' shapes, on the device); the case's
// executed-op records (Note [Executed ops]) hold that op's call with every argument, and the
// record whose op and tensor shapes are the node's becomes an op case of the table (Note [Ops
// from models]). That op case runs on its own; when it fails, it is reduced as any op case. When it
// passes, the model's values (not the shapes) make the node fail, and the op case is still printed.
struct DivergentNode {
  std::string text;  // as the error has it: "aten::gelu (mlp.py:12) inputs [2, 16]: 3 of 32 ..."
  std::string kind;  // "aten::gelu"
  std::vector<Shape> shapes;
  bool has_inputs = false;  // the text names the node's inputs (a value divergence, not a branch)
};

// The first divergent node a model case's FAIL names in its error, if it names one.
std::optional<DivergentNode> divergent_node(const std::string& error);
// The op cases the node's records (Outcome::executed_ops) cut to (most records one; the same op and
// shapes called with other arguments more), and why none when none.
std::vector<std::string> op_cases_of_node(const DivergentNode& n, const std::vector<std::string>& records,
                                          std::string& why);

}  // namespace gauntlet
