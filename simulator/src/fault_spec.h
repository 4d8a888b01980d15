// Fault injection rules for the simulator backend: which op calls get which fault.
//
// Faults are off unless configured, so a plain run never sees them. Configuration comes from
// GAUNTLET_SIM_FAULTS (a spec string) and/or GAUNTLET_SIM_FAULTS_FILE (one rule a line). A bad spec
// fails at load, naming the rule and column, rather than silently injecting nothing.
//
//   spec  := rule (';' rule)*             empty rules (";;", trailing ';') are ignored
//   rule  := item (',' item)*             each key at most once; kind= is required
//   item  := key '=' value                whitespace around rules, keys and values is ignored
//   key   := op | dtype | min_numel | max_numel | kind | factor | rank
//
//   op=<glob>          fnmatch(glob, "aten::name.overload", 0); default '*'
//   dtype=<name>       f64 f32 f16 bf16 i64 i32 i16 i8 u8 bool, or the torch spelling; default any
//   min_numel=<int>    inclusive lower bound on the largest tensor argument's numel; default 0
//   max_numel=<int>    inclusive upper bound; default INT64_MAX
//   kind=<kind>        bias flip precision nan slow sleep fallback segv abort hang oom
//   factor=<number>    finite and > 0; only for bias (default 1e-3), slow (2.0) and sleep (10 ms)
//   rank=<int>         only in the process that is this rank of a collective group (its process
//                      group was made with this rank); default any process. Collectives are
//                      ops named c10d::allreduce, c10d::allgather, c10d::reduce_scatter,
//                      c10d::broadcast, c10d::alltoall_base, c10d::barrier, c10d::send, c10d::recv
//
// In a file, '#' starts a comment (whole line or trailing) and ';' may still join rules on a line.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet::sim {

enum class FaultKind { Bias, Flip, Precision, NaN, Slow, Sleep, Fallback, Segv, Abort, Hang, Oom };
std::string_view fault_kind_name(FaultKind k);  // "bias", "flip", ...

struct FaultRule {
  std::string op = "*";  // glob on "aten::name" or "aten::name.overload"
  std::string dtype;     // canonical dtype name, "" = any
  std::int64_t min_numel = 0;
  std::int64_t max_numel = std::numeric_limits<std::int64_t>::max();
  FaultKind kind = FaultKind::Bias;
  int rank = -1;      // -1: any process
  double factor = 0;  // the kind's default when not given; 0 for kinds without one
  std::string text;   // the rule as written (trimmed), for reports
  // True when this rule applies to an op call: op name, dtype name of its first tensor argument
  // ("" when it has none), and the largest numel among its tensor arguments.
  bool matches(std::string_view op_name, std::string_view dtype_name, std::int64_t numel) const;
};

// The rank this process is in its collective group (set when the simulator's process group is
// made); -1 outside any group, where rules with rank= never apply.
void set_process_rank(int rank);
int process_rank();

struct FaultSpec {
  std::vector<FaultRule> rules;
  bool empty() const { return rules.empty(); }
  // Every rule that applies, in file order.
  std::vector<const FaultRule*> match(std::string_view op_name, std::string_view dtype_name, std::int64_t numel) const;
  // A canonical one-line form: rules joined by "; ", each "op=...,dtype=...,min_numel=..,max_numel=..,kind=..,
  // factor=.." with defaults omitted (op=* omitted too; factor printed with %g only for kinds that use it).
  // parse(canonical()) must give the same rules.
  std::string canonical() const;
};

// Errors throw std::invalid_argument with one line: "<origin>: rule <n> (column <c>): <problem>", n counting
// the ';'-separated pieces from 1 and c the 1-based column in `text`.
FaultSpec parse_fault_spec(std::string_view text, std::string_view origin);
// Errors throw std::invalid_argument: "<path>:<line>:<col>: <problem>", or "<path>: cannot read fault file".
FaultSpec parse_fault_file(const std::string& path);
// Reads GAUNTLET_SIM_FAULTS and GAUNTLET_SIM_FAULTS_FILE (both may be set: the file's rules come first, then the
// string's).
FaultSpec fault_spec_from_env();

}  // namespace gauntlet::sim
