// The release pages of a group (Note [Release pages]): what changed against the release before.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "dashboard_group.h"
#include "gauntlet/analysis/reports.h"
#include "gauntlet/analysis/rollup.h"
#include "gauntlet/base/outcome.h"
#include "gauntlet/base/text.h"

namespace gauntlet::dashboard_detail {

namespace {

// A group of failures with one cause (Note [Release pages]).
struct Cause {
  std::int64_t count = 0, fresh = 0, still = 0;
  std::uint32_t first = 0;          // the first case's slot: its repro and message stand for all
  std::string message;              // the first case's error, first line
  std::vector<std::uint32_t> keys;  // the first kKeysPerCause cases
};
constexpr std::size_t kKeysPerCause = 20;

json release_page(const GroupData& d, std::size_t r, const RunComparison& c) {
  const json groups_by_change = groups_json(c, 25);
  std::unordered_map<std::string_view, std::uint32_t> by_key;
  for (std::uint32_t i = 0; i < d.cases.size(); ++i) by_key.emplace(d.cases[i].key, i);
  json regressions = json::array(), missing = json::array();
  std::map<Gate, std::int64_t> counts;
  for (Gate gate : kAllGates) counts[gate] = 0;
  std::int64_t total = 0, missing_total = 0;
  std::map<std::string, std::int64_t> new_fallbacks;
  for (const Finding& f : c.findings) {
    if (!is_regression(f.change)) continue;
    ++counts[change_gate(f.change)];
    ++total;
    if (f.change == Change::Missing) {
      if (missing_total++ < d.o.max_regressions) missing.push_back(f.key);
    }
    for (const std::string& op : f.new_fallback_ops) ++new_fallbacks[op];
    if (static_cast<int>(regressions.size()) >= d.o.max_regressions) continue;
    json row = {{"key", f.key},
                {"gate", gate_name(change_gate(f.change))},
                {"change", change_name(f.change)},
                {"detail", f.detail},
                {"ratio", f.ratio > 0 ? number(f.ratio) : json(nullptr)},
                {"baseline", number(f.baseline)},
                {"candidate", number(f.candidate)},
                {"repro", repro_command(c, f)}};
    d.add_case_facets(row, f.key, by_key, r);
    regressions.push_back(std::move(row));
  }
  json fallbacks = json::array();
  std::vector<std::pair<std::string, std::int64_t>> sorted(new_fallbacks.begin(), new_fallbacks.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [op, n] : sorted) fallbacks.push_back({{"op", op}, {"cases", n}});
  // Note [Throughput and cost] in regress.h: compare's figures, per unit.
  json throughput = json::array();
  for (const ThroughputSummary& t : c.throughput) {
    throughput.push_back({{"unit", t.unit},
                          {"baseline_per_s", number(t.baseline)},
                          {"candidate_per_s", number(t.candidate)},
                          {"ratio", interval_json(t.ratio, t.cases)},
                          {"baseline_cost_per_million", number(t.baseline_cost)},
                          {"candidate_cost_per_million", number(t.candidate_cost)},
                          {"cost_ratio", interval_json(t.cost_ratio, t.cases)}});
  }
  // Fixed cases, and the failures by cause: the new ones (compare's status regressions) and the
  // ones failing in both releases (compare's known failures).
  json fixes = json::array();
  std::int64_t fixes_total = 0;
  std::map<std::tuple<std::string, std::string, std::string>, Cause> causes;
  auto add_cause = [&](const std::string& key, bool fresh) {
    const auto it = by_key.find(key);
    if (it == by_key.end()) return;
    const std::uint32_t i = it->second;
    const std::uint8_t s = d.cols[r].status[i];
    if (s == kAbsent || !is_failure(static_cast<Status>(s))) return;
    const auto e = d.cols[r].error.find(i);
    const std::string message = e == d.cols[r].error.end() ? "" : first_line_cut(e->second, 200);
    Cause& cause =
        causes[{d.cases[i].target, std::string(status_name(static_cast<Status>(s))), error_signature(message)}];
    if (cause.count++ == 0) {
      cause.first = i;
      cause.message = message;
    }
    (fresh ? cause.fresh : cause.still)++;
    if (cause.keys.size() < kKeysPerCause) cause.keys.push_back(i);
  };
  for (const Finding& f : c.findings) {
    if (f.change == Change::StatusChange || f.change == Change::XPass || f.change == Change::New)
      add_cause(f.key, true);  // add_cause keeps only the failing
    if (f.change != Change::Fixed) continue;
    if (fixes_total++ >= d.o.max_regressions) continue;
    json row = {{"key", f.key}, {"detail", f.detail}};
    d.add_case_facets(row, f.key, by_key, r);
    fixes.push_back(std::move(row));
  }
  for (const KnownFailure& k : c.known_failures) add_cause(k.key, false);
  std::vector<const std::pair<const std::tuple<std::string, std::string, std::string>, Cause>*> order;
  for (const auto& entry : causes) order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return std::tie(a->second.fresh, a->second.count) > std::tie(b->second.fresh, b->second.count);
  });
  json groups = json::array();
  std::int64_t still_total = 0;
  for (const auto* entry : order) {
    const auto& [op, status, pattern] = entry->first;
    const Cause& cause = entry->second;
    still_total += cause.still;
    if (static_cast<int>(groups.size()) >= d.o.max_regressions) continue;
    json keys = json::array();
    for (std::uint32_t i : cause.keys) keys.push_back(d.cases[i].key);
    groups.push_back({{"op", op},
                      {"status", status},
                      {"message", cause.message},
                      {"pattern", pattern},
                      {"count", cause.count},
                      {"new", cause.fresh},
                      {"still", cause.still},
                      {"keys", keys},
                      {"repro", repro_command(d.cases[cause.first].key, c.db_path, c.candidate.id, d.g.backend)},
                      {"case_file", cause.first / static_cast<std::uint32_t>(d.o.per_file)}});
  }
  json j = {{"schema_version", kSchemaVersion},
            {"group", d.g.id},
            {"index", r},
            {"baseline", {{"release", c.baseline.release}, {"run_id", c.baseline.id}}},
            {"candidate", {{"release", c.candidate.release}, {"run_id", c.candidate.id}}},
            {"geomean", interval_json(c.speed.geomean, c.speed.compared)},
            {"throughput", throughput},
            {"counts", gates_json(counts)},
            {"groups", groups_by_change},
            {"regressions", regressions},
            {"regressions_total", total},
            {"missing", missing},
            {"missing_total", missing_total},
            {"new_fallbacks", fallbacks},
            {"fixes", fixes},
            {"fixes_total", fixes_total},
            {"still_failing_total", still_total},
            {"causes", groups},
            {"causes_total", causes.size()}};
  return j;
}

}  // namespace

json groups_json(const RunComparison& c, std::size_t per_gate) {
  json out = json::array(), acked = json::array();
  std::map<Gate, std::size_t> in_gate;
  for (const FindingGroup& g : group_findings(c)) {
    if (!is_regression(g.change)) continue;
    if (g.ack != nullptr) {  // Note [Triage] in triage.cpp: apart, with the note
      if (acked.size() < 100) {
        acked.push_back({{"group", g.group},
                         {"gate", gate_name(change_gate(g.change))},
                         {"change", change_name(g.change)},
                         {"cases", g.cases > 0 ? json(g.cases) : json(nullptr)},
                         {"moved", g.moved},
                         {"change_text", group_change_text(g.change, g.median)},
                         {"ack",
                          {{"id", g.ack->id},
                           {"by", g.ack->by},
                           {"at", g.ack->at},
                           {"until", g.ack->until.empty() ? json(nullptr) : json(g.ack->until)},
                           {"note", g.ack->note}}}});
      }
      continue;
    }
    if (g.waived == g.moved) continue;  // waived: not open (the dashboard applies none today)
    if (in_gate[change_gate(g.change)]++ >= per_gate) continue;
    json keys = json::array();
    for (std::size_t i = 0; i < std::min<std::size_t>(g.findings.size(), kKeysPerCause); ++i)
      keys.push_back(g.findings[i]->key);
    out.push_back({{"group", g.group},
                   {"gate", gate_name(change_gate(g.change))},
                   {"change", change_name(g.change)},
                   {"cause", g.cause.empty() ? json(nullptr) : json(g.cause)},
                   {"cases", g.cases > 0 ? json(g.cases) : json(nullptr)},
                   {"moved", g.moved},
                   {"waived", g.waived},
                   {"median", number(g.median)},
                   {"q1", number(g.q1)},
                   {"q3", number(g.q3)},
                   {"change_text", group_change_text(g.change, g.median)},
                   {"worst_text", group_change_text(g.change, g.findings.front()->ratio)},
                   {"reopened", g.reopened},
                   {"keys", keys}});
  }
  json more = json::object();
  for (const auto& [gate, n] : in_gate) {
    if (n > per_gate) more[std::string(gate_name(gate))] = n - per_gate;
  }
  return {{"list", std::move(out)}, {"more", std::move(more)}, {"acked", std::move(acked)}};
}

// Note [Release pages]: every judged release has a page, data/<g>/releases/<r>.js (r: its index
// in the overview's releases), holding what changed against the release before it: compare's
// regressions, its fixes, the cases failing in both, and the failures grouped by cause (op,
// status and the error's first line with its numbers blanked: one row, a count and one repro
// for sixteen cases that fail the same way). latest.js is the newest page, under its old name.
// The judged releases are the newest --compare-pairs and every change point's; the others have
// no page, the overview's `regressions` is null for them and the site says so.
void write_release_pages(GroupData& d, Writer& w) {
  for (std::size_t r = 1; r < d.judged_pairs.size(); ++r) {
    if (!d.judged_pairs[r]) continue;
    const std::string text = dump(release_page(d, r, *d.judged_pairs[r]));
    w.write(d.name(fmt::format("releases/{}", r)), text);
    if (r + 1 == d.judged_pairs.size()) w.write(d.name("latest"), text);
    d.judged_pairs[r].reset();  // the findings of 50 pairs need not stay in memory together
  }
}

}  // namespace gauntlet::dashboard_detail
