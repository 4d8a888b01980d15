// `gauntlet triage` (gauntlet/run/triage_command.h; Note [Triage] in analysis/triage.cpp).
#include "gauntlet/run/triage_command.h"

#include <fmt/format.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "gauntlet/analysis/regress.h"
#include "gauntlet/analysis/rollup.h"
#include "gauntlet/analysis/triage.h"
#include "gauntlet/base/error.h"
#include "gauntlet/base/host.h"
#include "gauntlet/base/strings.h"
#include "gauntlet/store/acks.h"
#include "gauntlet/store/store_reader.h"

namespace gauntlet {

namespace {

[[noreturn]] void raise(const std::string& message, int exit_code) { throw Error(message, exit_code); }

std::string who(const std::string& by) {
  if (!by.empty()) return by;
  for (const char* name : {"GAUNTLET_USER", "USER", "LOGNAME"}) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') return v;
  }
  return "unknown";
}

std::optional<std::int64_t> baseline_id(const std::string& text) {
  if (text == "auto") return std::nullopt;
  try {
    std::size_t used = 0;
    const std::int64_t id = std::stoll(text, &used);
    if (used == text.size()) return id;
  } catch (const std::exception&) {
  }
  throw Error(fmt::format("--baseline: '{}' is neither a run id nor auto", text));
}

std::string ack_line(const Ack& a) {
  std::string line = fmt::format("ack {}  {} {}  on {}  by {} at {}", a.id, a.subject, a.change, a.backend, a.by, a.at);
  if (!a.until.empty()) line += fmt::format("  until {}", a.until);
  line += fmt::format("  ({} case{} in run {}", a.moved, a.moved == 1 ? "" : "s", a.run_id);
  if (std::isfinite(a.worst)) line += fmt::format(", worst {:+.1f}%", (a.worst - 1) * 100);
  line += ")";
  if (!a.removed_at.empty()) line += fmt::format("  removed by {} at {}", a.removed_by, a.removed_at);
  return line + "\n    " + a.note + "\n";
}

std::string list(const TriageRequest& o) {
  const std::vector<Ack> acks = read_acks(o.db, raise);
  if (o.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const Ack& a : acks) {
      if (!o.all && !a.removed_at.empty()) continue;
      out.push_back(
          {{"id", a.id},
           {"subject", a.subject},
           {"change", a.change},
           {"signature", a.signature},
           {"backend", a.backend},
           {"note", a.note},
           {"by", a.by},
           {"at", a.at},
           {"until", a.until.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(a.until)},
           {"run_id", a.run_id},
           {"moved", a.moved},
           {"worst", std::isfinite(a.worst) ? nlohmann::ordered_json(a.worst) : nlohmann::ordered_json(nullptr)},
           {"removed_at",
            a.removed_at.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(a.removed_at)},
           {"removed_by",
            a.removed_by.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(a.removed_by)}});
    }
    return out.dump(2) + "\n";
  }
  std::string text;
  std::int64_t shown = 0, removed = 0;
  for (const Ack& a : acks) {
    if (!a.removed_at.empty()) ++removed;
    if (!o.all && !a.removed_at.empty()) continue;
    text += ack_line(a);
    ++shown;
  }
  if (shown == 0) text += "no acknowledgements\n";
  if (!o.all && removed > 0) text += fmt::format("({} removed, not listed: --all lists them)\n", removed);
  return text;
}

std::string ack(const TriageRequest& o) {
  if (o.subject.empty())
    throw Error("triage ack: name what to acknowledge: a group, an op or a case key, as compare lists it");
  if (o.note.empty()) throw Error("triage ack: --note is required: say why it is acknowledged");
  if (!o.change.empty()) {
    bool known = false;
    std::vector<std::string> names;
    for (int i = 0; i <= static_cast<int>(kLastChange); ++i) {
      const auto c = static_cast<Change>(i);
      if (!is_regression(c)) continue;
      names.emplace_back(change_name(c));
      known = known || names.back() == o.change;
    }
    if (!known) throw Error(fmt::format("--change: unknown change '{}'{}", o.change, nearest_hint(o.change, names)));
  }
  RunComparison c = compare_runs(o.db, o.run, baseline_id(o.baseline), CompareOptions{});
  StoreReader reader(o.db, raise);
  const std::vector<RunRef> runs = reader.runs();
  if (!o.until.empty()) {
    for (const RunRef& r : runs) {
      if (r.release == o.until && r.id <= c.candidate.id) {
        throw Error(fmt::format("--until: release '{}' is run {}, not after run {}: the ack would never hold", o.until,
                                r.id, c.candidate.id));
      }
    }
  }
  std::vector<Ack> acks = make_acks(c, o.subject, o.change);
  const std::string by = who(o.by), at = utc_now();
  std::string out;
  for (Ack& a : acks) {
    a.note = o.note;
    a.by = by;
    a.at = at;
    a.until = o.until;
  }
  for (Ack& a : acks) a.id = add_ack(o.db, a, raise);
  for (const Ack& a : acks) out += "acknowledged: " + ack_line(a);
  return out;
}

std::string unack(const TriageRequest& o) {
  if (o.subject.empty()) throw Error("triage unack: name the acknowledgement: its id (triage list), or its subject");
  const std::vector<Ack> acks = read_acks(o.db, raise);
  // By id, one; by subject, every holding ack of it and of its groups (an op's ack is one a group).
  std::vector<const Ack*> hits;
  for (const Ack& a : acks) {
    if (!a.removed_at.empty()) continue;
    if (std::to_string(a.id) == o.subject || a.subject == o.subject || case_target(a.subject) == o.subject)
      hits.push_back(&a);
  }
  if (hits.empty())
    throw Error(fmt::format("triage unack: no acknowledgement '{}' holds in {} (triage list)", o.subject, o.db));
  const std::string by = who(o.by), at = utc_now();
  std::string out;
  for (const Ack* a : hits) {
    if (remove_ack(o.db, a->id, by, at, raise))
      out += fmt::format("removed: ack {} ({} {}), by {} at {}\n", a->id, a->subject, a->change, by, at);
  }
  return out;
}

}  // namespace

void describe_options(OptionSink& s, TriageRequest& o) {
  s.option("action", o.action, "ack | unack | list").required();
  s.option("subject", o.subject, "ack: a group, op or case key as compare lists it; unack: an ack's id or subject");
  s.option("--db", o.db, "SQLite database holding the runs (the acknowledgements are kept in it)").required();
  s.option("--note", o.note, "ack: why it is acknowledged (required)");
  s.option("--until", o.until, "ack: the release from whose first run on it no longer holds");
  s.option("--change", o.change,
           "ack: the kind of regression (slower, status-change, ...), where the subject has several");
  s.option("--run", o.run, "ack: the run whose regression it is (default: the latest run)");
  s.option("--baseline", o.baseline, "ack: the baseline it is judged against, as compare's").show_default();
  s.option("--by", o.by, "who acknowledges (default: $GAUNTLET_USER, else $USER)");
  s.flag("--all", o.all, "list: removed acknowledgements too");
  s.flag("--json", o.json, "list: as JSON");
}

std::string triage_command(const TriageRequest& o) {
  if (o.action == "ack") return ack(o);
  if (o.action == "unack") return unack(o);
  if (o.action == "list") return list(o);
  throw Error(fmt::format("triage: unknown action '{}'{}", o.action, nearest_hint(o.action, {"ack", "unack", "list"})));
}

}  // namespace gauntlet
