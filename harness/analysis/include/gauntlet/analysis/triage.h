// Triage (Note [Triage] in triage.cpp): acknowledgements (gauntlet/store/acks.h) applied to a
// comparison, and made from one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gauntlet/analysis/regress.h"
#include "gauntlet/store/acks.h"

namespace gauntlet {

// A regression is open again when its change grew past this factor of what was acknowledged
// (a 20% slowdown acknowledged, 30% is open again), or when its group has this factor more cases
// (and at least 2 more) than were acknowledged.
inline constexpr double kAckGrowth = 1.5;

// Whether ack `a` is about finding `f`: the same change, and its subject the case's key, its group
// or its op (a failure's only with the same error signature) (gauntlet/analysis/rollup.h).
bool ack_covers(const Ack& a, const Finding& f);

// Marks each regression of `c` that a holding ack of the candidate's backend covers (Finding::ack):
// not removed, made against a run after `c`'s baseline, and not past its `until` release (a run
// of that release at or before the candidate, among `runs`). Covered findings that grew (kAckGrowth) are marked grown.
// `honour`: acknowledged regressions do not gate (compare --honour-acks).
void apply_acks(RunComparison& c, const std::vector<Ack>& acks, const std::vector<RunRef>& runs, bool honour);

// The acks of `subject` (a group, an op or a case key, as compare lists them) against the
// regressions of `c`, for `change` (a change name; "" when the subject has regressions of one kind
// only): one per group of the subject (an op's slowdown, one per dtype and mode; its failures, one),
// each with the moved and worst `c` shows now. Throws gauntlet::Error naming the problem when
// nothing regressed matches (with the nearest name), when the subject has several kinds, or when an
// op fails in several ways.
std::vector<Ack> make_acks(const RunComparison& c, const std::string& subject, const std::string& change);

}  // namespace gauntlet
