#include "gauntlet/run/run_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "gauntlet/analysis/regress.h"
#include "gauntlet/analysis/reports.h"
#include "gauntlet/base/error.h"
#include "gauntlet/base/stage.h"
#include "gauntlet/base/strings.h"
#include "gauntlet/base/text.h"
#include "gauntlet/run/outcome_json.h"
#include "gauntlet/run/run_config.h"

namespace gauntlet {

namespace {

bool ran_to_the_end(Status s) {
  return s == Status::Pass || s == Status::Fail || s == Status::XFail || s == Status::XPass;
}

// A case cut from models (Note [Ops from models]) names them: its reason's first part.
std::string models_of(const Outcome& o) {
  static constexpr std::string_view kFrom = "from models: ";
  if (o.error.empty() || o.reason.rfind(kFrom, 0) != 0) return std::string();
  const std::size_t semi = o.reason.find(';');
  return o.reason.substr(kFrom.size(), semi == std::string::npos ? std::string::npos : semi - kFrom.size());
}

bool wanted(const std::vector<std::string>& statuses, Status s) {
  return std::find(statuses.begin(), statuses.end(), std::string(status_name(s))) != statuses.end();
}

}  // namespace

std::vector<std::string> parse_status_list(const std::string& spec) {
  std::vector<std::string> out;
  if (spec.empty()) {
    for (Status s : kAllStatuses) {
      if (is_failure(s)) out.emplace_back(status_name(s));
    }
    return out;
  }
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == "all") {
      for (Status s : kAllStatuses) out.emplace_back(status_name(s));
      continue;
    }
    auto st = parse_status(item);
    if (!st) {
      std::string shouted = item;
      for (char& c : shouted) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      std::vector<std::string> names;
      for (Status known : kAllStatuses) names.emplace_back(status_name(known));
      throw Error("unknown status '" + item + "'" + nearest_hint(shouted, names) +
                  " (PASS, FAIL, ERROR, CRASH, TIMEOUT, UNSUPPORTED, SKIP, XFAIL, XPASS, all)");
    }
    out.emplace_back(status_name(*st));
  }
  return out;
}

// Note [Hollow runs]: a gate must not pass a qualification in which nothing was qualified. A run
// is hollow when no case passed, or when the cases that ran (PASS, FAIL, XFAIL, XPASS) are fewer
// than `min_ran` of its cases (those stored, or planned when more: a run stopped before its
// cases, e.g. a backend that cannot take inputs, counts every case it had). compare also calls a
// candidate hollow when its ran fraction fell more than `max_ran_drop` below the baseline's.
RanSummary ran_summary(const Store& store, std::int64_t run_id) {
  RanSummary s;
  for (const auto& [status, n] : store.status_counts(run_id)) {
    s.cases += n;
    if (ran_to_the_end(status)) s.ran += n;
    if (status == Status::Pass) s.passed += n;
  }
  if (auto info = store.run(run_id)) {
    s.cases = std::max(s.cases, RunConfig::parse(info->config_json).cases.value_or(0));
  }
  return s;
}

std::string hollow_reason(const RanSummary& s, double min_ran) {
  if (s.cases == 0) return "it has no cases";
  if (s.passed == 0) return fmt::format("no case passed ({} of {} ran)", s.ran, s.cases);
  if (s.fraction() < min_ran) {
    return fmt::format("only {} of {} cases ran ({:.1f}%, PASS/FAIL/XFAIL/XPASS), below --min-ran {:g}", s.ran, s.cases,
                       100 * s.fraction(), min_ran);
  }
  return "";
}

std::string hollow_against(const Store& store, std::int64_t candidate, std::int64_t baseline, double min_ran,
                           double max_ran_drop) {
  if (!(min_ran >= 0 && min_ran <= 1) || !(max_ran_drop >= 0 && max_ran_drop <= 1)) {
    throw Error("--min-ran and --max-ran-drop must be fractions between 0 and 1");
  }
  const RanSummary cand = ran_summary(store, candidate), base = ran_summary(store, baseline);
  std::string hollow = hollow_reason(cand, min_ran);
  if (hollow.empty() && base.cases > 0 && cand.fraction() < base.fraction() - max_ran_drop) {
    hollow =
        fmt::format("its cases that ran fell from {:.1f}% (baseline run {}) to {:.1f}%, more than --max-ran-drop {:g}",
                    100 * base.fraction(), baseline, 100 * cand.fraction(), max_ran_drop);
  }
  return hollow;
}

// Note [Grouped failures]: identical failures are one entry: three or more results with the same
// status and the same failure signature (Note [Failure signature] in base/text.cpp: the first line
// of the error, or the reason, with numbers blanked) print once, with the first case's text, their
// count, the first case's repro command and where to see each; `show --json` lists every result.
RunSummary summarize_run(const Store& store, std::int64_t run_id, const std::vector<std::string>& statuses) {
  RunSummary s;
  auto info = store.run(run_id);
  if (!info) throw Error(fmt::format("no run {} in the database", run_id));
  s.info = *info;
  s.counts = store.status_counts(run_id);
  for (const auto& [st, n] : s.counts) s.total += n;
  s.planned = ran_summary(store, run_id).cases;
  const auto results = store.results(run_id);

  std::map<std::string, int> fallback_ops;
  for (const auto& r : results) {
    if (r.outcome.status == Status::Skip) continue;
    ++s.ran;
    if (!r.outcome.fallback_ops.empty()) ++s.fell_back;
    if (!r.outcome.fallback_ops.empty() && is_failure(r.outcome.status)) ++s.fell_back_failed;
    for (const auto& op : r.outcome.fallback_ops) ++fallback_ops[op];
  }
  for (const auto& [op, n] : fallback_ops) s.fallback_ops.emplace_back(op, n);
  std::sort(s.fallback_ops.begin(), s.fallback_ops.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });

  double logs[2] = {0, 0};
  std::int64_t n[2] = {0, 0};
  for (const auto& r : results) {
    const Outcome& o = r.outcome;
    s.simulated = s.simulated || o.sim_time_us.has_value();
    if (!ran_to_the_end(o.status)) continue;
    const double tp = throughput_per_s(o.work_items, o.sim_time_us ? *o.sim_time_us : o.timing.median_us);
    if (std::isnan(tp)) continue;
    const int u = o.key.rfind("model/", 0) == 0 ? 0 : 1;
    logs[u] += std::log(tp);
    ++n[u];
  }
  for (int u = 0; u < 2; ++u) {
    if (n[u] > 0) s.throughput.push_back({u == 0 ? "samples" : "elements", n[u], std::exp(logs[u] / double(n[u]))});
  }

  std::map<std::string, std::vector<const Outcome*>> by_collective;
  for (const auto& r : results) {
    if (r.outcome.busbw_gbps && r.outcome.key.rfind("coll/", 0) == 0) {
      const std::string& key = r.outcome.key;
      by_collective[key.substr(5, key.find('/', 5) - 5)].push_back(&r.outcome);
    }
  }
  for (auto& [coll, outs] : by_collective) {
    std::sort(outs.begin(), outs.end(),
              [](const Outcome* a, const Outcome* b) { return *a->busbw_gbps < *b->busbw_gbps; });
    const std::size_t m = outs.size() / 2;
    const double median =
        outs.size() % 2 ? *outs[m]->busbw_gbps : (*outs[m - 1]->busbw_gbps + *outs[m]->busbw_gbps) / 2;
    const Outcome& best = *outs.back();
    s.bandwidth.push_back({coll, best.key, static_cast<std::int64_t>(outs.size()), median, *best.busbw_gbps,
                           best.algbw_gbps.value_or(0)});
  }

  std::map<std::pair<std::string, std::string>, std::size_t> index;
  for (const auto& r : results) {
    if (!wanted(statuses, r.outcome.status)) continue;
    const std::string st(status_name(r.outcome.status));
    std::string why = !r.outcome.error.empty() ? first_line(r.outcome.error) : r.outcome.reason;
    // One group per failure signature (Note [Failure signature]) and stage (Note [Failing stage]:
    // an ERROR, CRASH or TIMEOUT names it), shown with its first member's text.
    const Status status = r.outcome.status;
    const bool stopped = status == Status::Error || status == Status::Crash || status == Status::Timeout;
    const std::string stage =
        stopped && !r.outcome.stage.empty() ? " [stage: " + stage_text(r.outcome.stage) + "]" : "";
    auto [it, added] = index.emplace(std::make_pair(st, error_signature(why) + stage), s.groups.size());
    why += stage;
    if (added) s.groups.push_back({st, why, !r.outcome.error.empty(), {}});
    s.groups[it->second].members.push_back({r.outcome.key, models_of(r.outcome)});
  }
  return s;
}

std::string run_summary_text(const RunSummary& s, const std::string& db_path) {
  const RunInfo& info = s.info;
  std::string out;
  // An unfinished run says how far it got: "8802 of 13114 cases".
  const std::string how_many = info.finished_at.empty() && s.planned > s.total
                                   ? fmt::format("{} of {}", s.total, s.planned)
                                   : std::to_string(s.total);
  out += fmt::format("run {}  suite {}  backend {} ({})  release {}  {} cases  {} .. {}\n", info.id, info.suite,
                     info.backend, info.backend_version, info.release.empty() ? "-" : info.release, how_many,
                     info.started_at, info.finished_at.empty() ? "(unfinished)" : info.finished_at);
  std::string line = " ";
  for (Status st : kAllStatuses) {
    auto it = s.counts.find(st);
    line += fmt::format(" {} {}", status_name(st), it == s.counts.end() ? 0 : it->second);
  }
  out += line + "\n";
  if (s.fell_back > 0) {
    std::string ops;
    for (std::size_t i = 0; i < s.fallback_ops.size() && i < 5; ++i) {
      ops += fmt::format("{}{} ({})", i ? ", " : "", s.fallback_ops[i].first, s.fallback_ops[i].second);
    }
    out += fmt::format("  fallback: {} of {} cases ({:.1f}%) ran ops on the CPU{}, {} ops: {}{}\n", s.fell_back, s.ran,
                       100.0 * double(s.fell_back) / double(std::max<std::int64_t>(s.ran, 1)),
                       s.fell_back_failed > 0 ? fmt::format(" ({} of them failed)", s.fell_back_failed) : "",
                       s.fallback_ops.size(), ops, s.fallback_ops.size() > 5 ? ", ..." : "");
  }
  for (const RunSummary::Throughput& t : s.throughput) {
    std::string cost;
    if (info.price_per_device_hour) {
      cost = fmt::format(", cost per million {} {:.4g} at {:g} per device-hour", t.unit,
                         *info.price_per_device_hour * 1e6 / 3600 / t.geomean, *info.price_per_device_hour);
    }
    out += fmt::format("  throughput: {} cases, geomean {:.4g} {}/s ({} time){}\n", t.cases, t.geomean, t.unit,
                       s.simulated ? "simulated" : "host", cost);
  }
  for (const RunSummary::Bandwidth& b : s.bandwidth) {
    out +=
        fmt::format("  busbw {}: {} case{}, median {:.3g} GB/s, best {:.3g} GB/s (algbw {:.3g}) on {}\n", b.collective,
                    b.cases, b.cases == 1 ? "" : "s", b.median_gbps, b.best_gbps, b.best_algbw_gbps, b.best_key);
  }
  const auto repro = [&](const std::string& key) { return repro_command(key, db_path, info.id, info.backend); };
  for (std::size_t g = 0; g < s.groups.size(); ++g) {
    const RunSummary::Group& group = s.groups[g];
    if (g == 0) out += "\n";
    if (group.members.size() < 3) {
      for (const RunSummary::Member& m : group.members) {
        out += fmt::format("{:<11} {}\n            {}\n{}            repro: {}\n", group.status, m.key, group.why,
                           m.models.empty() ? "" : "            from models: " + m.models + "\n", repro(m.key));
      }
      continue;
    }
    std::set<std::string> models;
    for (const RunSummary::Member& m : group.members) {
      const std::string& list = m.models;
      for (std::size_t i = 0; i < list.size();) {
        const std::size_t j = list.find(", ", i);
        models.insert(list.substr(i, j == std::string::npos ? std::string::npos : j - i));
        i = j == std::string::npos ? list.size() : j + 2;
      }
    }
    const std::string& first = group.members.front().key;
    out += fmt::format(
        "{:<11} {} and {} more with the same {}\n            {}\n{}            repro: {}\n            each: {}\n",
        group.status, first, group.members.size() - 1, group.by_error ? "error" : "reason", group.why,
        models.empty() ? "" : fmt::format("            from models: {}\n", fmt::join(models, ", ")), repro(first),
        fmt::format("gauntlet show --db {} --run {} --status {} --json", shell_argument(db_path), info.id,
                    group.status));
  }
  return out;
}

nlohmann::json run_json(const Store& store, std::int64_t run_id, const std::vector<std::string>& statuses,
                        const std::string& db_path) {
  auto info = store.run(run_id);
  if (!info) throw Error(fmt::format("no run {} in {}", run_id, db_path));
  nlohmann::json counts = nlohmann::json::object();
  for (const auto& [s, n] : store.status_counts(run_id)) counts[std::string(status_name(s))] = n;
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : store.results(run_id)) {
    if (!wanted(statuses, r.outcome.status)) continue;
    nlohmann::json j = to_json(r.outcome);
    j["repro"] = repro_command(r.outcome.key, db_path, run_id, info->backend);
    results.push_back(std::move(j));
  }
  nlohmann::json run = {
      {"id", info->id},
      {"suite", info->suite},
      {"backend", info->backend},
      {"backend_version", info->backend_version},
      {"release", info->release},
      {"torch_version", info->torch_version},
      {"host", info->host},
      {"started_at", info->started_at},
      {"finished_at", info->finished_at},
      {"price_per_device_hour",
       info->price_per_device_hour ? nlohmann::json(*info->price_per_device_hour) : nlohmann::json(nullptr)}};
  return {{"json_schema_version", kJsonSchemaVersion}, {"run", run}, {"counts", counts}, {"results", results}};
}

void describe_options(OptionSink& s, ShowOptions& o) {
  s.option("--db", o.db, "SQLite database").required();
  s.option("--run", o.run, "run id (default: the latest)");
  s.option("--status", o.statuses, "statuses to list, e.g. FAIL,ERROR (default: failures)");
  s.flag("--json", o.json, "print JSON");
}

std::string show_run(const ShowOptions& o) {
  auto store = Store::open(o.db, Store::OpenMode::ReadOnly);
  long long run_id = o.run;
  if (run_id == 0) {
    auto latest = store->latest_run();
    if (!latest) throw Error(o.db + ": the database holds no run yet");
    run_id = *latest;
  }
  const std::vector<std::string> statuses = parse_status_list(o.statuses);
  if (o.json) return run_json(*store, run_id, statuses, o.db).dump(1) + "\n";
  return run_summary_text(summarize_run(*store, run_id, statuses), o.db);
}

}  // namespace gauntlet
