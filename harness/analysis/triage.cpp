#include "gauntlet/analysis/triage.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "gauntlet/analysis/rollup.h"
#include "gauntlet/base/strings.h"
#include "gauntlet/base/text.h"

namespace gauntlet {

// Note [Triage]: a release manager who looked at a regression and decided (a known slowdown, a fix
// on its way) says so once, `gauntlet triage ack op/add/f32/eager --note ...`, instead of reading
// the same 80 rows every week. The ack names what compare lists: a group (Note [Rollups]), a
// op (every group of it; a failure's op with its error signature: another error on the same op is
// not covered) or one case, and one kind of change. It holds for that backend's runs until it is removed (`unack`) or
// its `--until` release arrives, in comparisons whose baseline precedes the run it was made
// against (a release gate judging each nightly against the last release sees it every night; once
// a baseline holds the regression, anything more is a change of its own and is flagged), and
// only while the regression stays what was acknowledged: a
// finding whose change grew past kAckGrowth times the worst acknowledged (a 20% slowdown
// acknowledged, 30% or more flagged), or a group with kAckGrowth times more cases moved, is open
// again and says why. Acknowledged is not waived: compare, its reports and the dashboard list
// acknowledged regressions apart with their note, and the gate counts them unless asked
// (`--honour-acks`), so that nothing is hidden from a gate by default. Waivers (waivers.h) are
// the reviewed, checked-in, expiring exceptions; acks are the team's running triage state.

namespace {

bool has_ratio(const Finding& f) { return f.ratio > 0 && std::isfinite(f.ratio); }

std::string signature_of(const Finding& f) {
  return f.change == Change::StatusChange ? error_signature(f.detail) : std::string();
}

}  // namespace

bool ack_covers(const Ack& a, const Finding& f) {
  if (a.change != change_name(f.change)) return false;
  if (a.subject == f.key || a.subject == case_group(f.key)) return true;
  // an op's: every group of it; a failure's, only with the same error signature
  return a.subject == case_target(f.key) && (f.change != Change::StatusChange || a.signature == signature_of(f));
}

void apply_acks(RunComparison& c, const std::vector<Ack>& acks, const std::vector<RunRef>& runs, bool honour) {
  std::vector<const Ack*> holding;
  for (const Ack& a : acks) {
    if (!a.removed_at.empty() || a.backend != c.candidate.backend) continue;
    // The acknowledged change is the one between its run's baseline and its run: a comparison
    // whose baseline already has it (the ack's run or later) sees only what changed since.
    if (c.baseline.id >= a.run_id) continue;
    const bool past = !a.until.empty() && std::any_of(runs.begin(), runs.end(), [&](const RunRef& r) {
      return r.release == a.until && r.id <= c.candidate.id;
    });
    if (!past) holding.push_back(&a);
  }
  if (holding.empty()) return;
  std::map<const Ack*, std::vector<Finding*>> covered;
  for (Finding& f : c.findings) {
    if (!is_regression(f.change)) continue;
    // The most specific ack: a case's own before its group's before its op's; the newest of those.
    const Ack* best = nullptr;
    int best_rank = 0;
    for (const Ack* a : holding) {
      if (!ack_covers(*a, f)) continue;
      const int rank = a->subject == f.key ? 3 : a->subject == case_group(f.key) ? 2 : 1;
      if (rank >= best_rank) best = a, best_rank = rank;
    }
    if (best == nullptr) continue;
    AckRef ref;
    ref.id = best->id;
    ref.subject = best->subject;
    ref.note = best->note;
    ref.by = best->by;
    ref.at = best->at;
    ref.until = best->until;
    ref.honoured = honour;
    if (has_ratio(f) && std::isfinite(best->worst) && f.ratio - 1 > kAckGrowth * (best->worst - 1)) {
      ref.grown = true;
      ref.grown_why = fmt::format("{} where at most {} was acknowledged", group_change_text(f.change, f.ratio),
                                  group_change_text(f.change, best->worst));
    }
    f.ack = std::move(ref);
    covered[best].push_back(&f);
  }
  for (auto& [a, findings] : covered) {
    const auto n = static_cast<std::int64_t>(findings.size());
    if (n <=
        std::max<std::int64_t>(static_cast<std::int64_t>(kAckGrowth * static_cast<double>(a->moved)), a->moved + 1))
      continue;
    for (Finding* f : findings) {
      if (f->ack->grown) continue;
      f->ack->grown = true;
      f->ack->grown_why = fmt::format("{} cases where {} were acknowledged", n, a->moved);
    }
  }
}

std::vector<Ack> make_acks(const RunComparison& c, const std::string& subject, const std::string& change) {
  std::map<std::string, std::vector<const Finding*>> by_change;  // change name -> findings
  std::set<std::string> subjects;                                // for the nearest name
  for (const Finding& f : c.findings) {
    if (!is_regression(f.change)) continue;
    subjects.insert(f.key);
    subjects.insert(case_group(f.key));
    subjects.insert(case_target(f.key));
    const bool matches = subject == f.key || subject == case_group(f.key) || subject == case_target(f.key);
    if (matches && (change.empty() || change == change_name(f.change))) {
      by_change[std::string(change_name(f.change))].push_back(&f);
    }
  }
  const std::string runs = fmt::format("run {} ({}) against run {} ({})", c.candidate.id, c.candidate.release,
                                       c.baseline.id, c.baseline.release);
  if (by_change.empty()) {
    const std::vector<std::string> names(subjects.begin(), subjects.end());
    throw Error(fmt::format("triage ack: nothing regressed in {} is '{}'{}{}", runs, subject,
                            change.empty() ? "" : fmt::format(" with change {}", change),
                            nearest_hint(subject, names)));
  }
  if (by_change.size() > 1) {
    std::vector<std::string> kinds;
    for (const auto& [name, _] : by_change) kinds.push_back(name);
    throw Error(fmt::format("triage ack: '{}' has {} kinds of regression in {} ({}): name one with --change", subject,
                            kinds.size(), runs, fmt::join(kinds, ", ")));
  }
  const auto& [name, findings] = *by_change.begin();
  const bool failures = findings.front()->change == Change::StatusChange;
  // One ack per group (an op's failures are one group a cause), so that each group's growth is
  // judged against its own worst: an op's backward slowing twice as much as it did is open again
  // even when its forward slowed more.
  std::map<std::string, std::vector<const Finding*>> parts;
  for (const Finding* f : findings) {
    const bool whole = subject == f->key || failures || subject == case_group(f->key);
    parts[whole ? subject : case_group(f->key)].push_back(f);
  }
  if (failures && subject != findings.front()->key) {
    // An op's failures: an ack is about one cause; another error on the op is not covered.
    std::set<std::string> signatures;
    for (const Finding* f : findings) signatures.insert(signature_of(*f));
    if (signatures.size() > 1) {
      throw Error(
          fmt::format("triage ack: '{}' fails in {} ways in {}: acknowledge each cause by one of its cases' keys",
                      subject, signatures.size(), runs));
    }
  }
  std::vector<Ack> out;
  for (const auto& [part, members] : parts) {
    Ack a;
    a.subject = part;
    a.change = name;
    a.backend = c.candidate.backend;
    a.run_id = c.candidate.id;
    a.moved = static_cast<std::int64_t>(members.size());
    if (failures) a.signature = signature_of(*members.front());
    for (const Finding* f : members) {
      if (has_ratio(*f)) a.worst = std::isfinite(a.worst) ? std::max(a.worst, f->ratio) : f->ratio;
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace gauntlet
