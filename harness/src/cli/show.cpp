// gauntlet show: a stored run's summary by status, then its failures with repro commands.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli.h"
#include "gauntlet/catalog.h"
#include "gauntlet/outcome_json.h"
#include "gauntlet/regress.h"
#include "gauntlet/reports.h"
#include "gauntlet/store.h"

namespace gauntlet::cli {

namespace {

std::vector<std::string> wanted_statuses(const std::string& spec) {
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
    if (!st)
      throw UsageError("unknown status '" + item +
                       "' (PASS, FAIL, ERROR, CRASH, TIMEOUT, UNSUPPORTED, SKIP, XFAIL, XPASS, all)");
    out.emplace_back(status_name(*st));
  }
  return out;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

std::string run_suites_dir(const std::string& config_json) {
  auto j = nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("suites_dir") || !j["suites_dir"].is_string()) return "";
  std::string dir = j["suites_dir"].get<std::string>();
  return dir == default_suites_dir() ? "" : dir;
}

RanSummary ran_summary(const Store& store, long long run_id) {
  RanSummary s;
  for (const auto& [status, n] : store.status_counts(run_id)) {
    s.cases += n;
    if (status == Status::Pass || status == Status::Fail || status == Status::XFail || status == Status::XPass)
      s.ran += n;
    if (status == Status::Pass) s.passed += n;
  }
  if (auto info = store.run(run_id)) {
    const auto cfg = nlohmann::json::parse(info->config_json, nullptr, false);
    if (cfg.is_object() && cfg.contains("cases") && cfg["cases"].is_number_integer()) {
      s.cases = std::max<std::int64_t>(s.cases, cfg["cases"].get<std::int64_t>());
    }
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

void print_summary(const Store& store, const std::string& db_path, long long run_id,
                   const std::vector<std::string>& statuses) {
  auto info = store.run(run_id);
  if (!info) throw UsageError(fmt::format("no run {} in the database", run_id));
  auto counts = store.status_counts(run_id);
  std::int64_t total = 0;
  for (const auto& [s, n] : counts) total += n;
  // An unfinished run says how far it got: "8802 of 13114 cases".
  const std::int64_t planned = ran_summary(store, run_id).cases;
  const std::string how_many =
      info->finished_at.empty() && planned > total ? fmt::format("{} of {}", total, planned) : std::to_string(total);
  fmt::print("run {}  suite {}  backend {} ({})  release {}  {} cases  {} .. {}\n", info->id, info->suite,
             info->backend, info->backend_version, info->release.empty() ? "-" : info->release, how_many,
             info->started_at, info->finished_at.empty() ? "(unfinished)" : info->finished_at);
  std::string line = " ";
  for (Status s : kAllStatuses) {
    auto it = counts.find(s);
    line += fmt::format(" {} {}", status_name(s), it == counts.end() ? 0 : it->second);
  }
  fmt::print("{}\n", line);
  const auto results = store.results(run_id);
  // Fallbacks are data, not failures: a run's fallback rate and its most frequent ops.
  std::map<std::string, int> fallback_ops;
  std::int64_t fell_back = 0, ran = 0;
  for (const auto& r : results) {
    if (r.outcome.status == Status::Skip) continue;
    ++ran;
    if (!r.outcome.fallback_ops.empty()) ++fell_back;
    for (const auto& op : r.outcome.fallback_ops) ++fallback_ops[op];
  }
  if (fell_back > 0) {
    std::vector<std::pair<int, std::string>> top;
    for (const auto& [op, n] : fallback_ops) top.emplace_back(-n, op);
    std::sort(top.begin(), top.end());
    std::string ops;
    for (std::size_t i = 0; i < top.size() && i < 5; ++i)
      ops += fmt::format("{}{} ({})", i ? ", " : "", top[i].second, -top[i].first);
    fmt::print("  fallback: {} of {} cases ({:.1f}%) ran ops on the CPU, {} ops: {}{}\n", fell_back, ran,
               100.0 * double(fell_back) / double(std::max<std::int64_t>(ran, 1)), fallback_ops.size(), ops,
               top.size() > 5 ? ", ..." : "");
  }
  // Note [Throughput and cost] (gauntlet/regress.h): per unit, over the cases that ran to the end.
  {
    double logs[2] = {0, 0};
    std::int64_t n[2] = {0, 0};
    for (const auto& r : results) {
      const Outcome& o = r.outcome;
      if (o.status != Status::Pass && o.status != Status::Fail && o.status != Status::XFail &&
          o.status != Status::XPass) {
        continue;
      }
      const double tp = throughput_per_s(o.work_items, o.sim_time_us ? *o.sim_time_us : o.timing.median_us);
      if (std::isnan(tp)) continue;
      const int u = o.key.rfind("model/", 0) == 0 ? 0 : 1;
      logs[u] += std::log(tp);
      ++n[u];
    }
    for (int u = 0; u < 2; ++u) {
      if (n[u] == 0) continue;
      const double tp = std::exp(logs[u] / static_cast<double>(n[u]));
      const char* unit = u == 0 ? "samples" : "elements";
      std::string cost;
      if (info->price_per_device_hour) {
        cost = fmt::format(", cost per million {} {:.4g} at {:g} per device-hour", unit,
                           *info->price_per_device_hour * 1e6 / 3600 / tp, *info->price_per_device_hour);
      }
      fmt::print(
          "  throughput: {} cases, geomean {:.4g} {}/s ({} time){}\n", n[u], tp, unit,
          std::any_of(results.begin(), results.end(), [](const auto& r) { return r.outcome.sim_time_us.has_value(); })
              ? "simulated"
              : "host",
          cost);
    }
  }
  // Note [Grouped failures]: identical failures are one entry: three or more results with the same
  // status and the same first line of error (or reason) print once, with their count, the first
  // case's repro command and where to see each; `show --json` lists every result.
  std::map<std::pair<std::string, std::string>, std::vector<const StoredResult*>> groups;
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& r : results) {
    std::string st(status_name(r.outcome.status));
    if (std::find(statuses.begin(), statuses.end(), st) == statuses.end()) continue;
    std::string why = !r.outcome.error.empty() ? first_line(r.outcome.error) : r.outcome.reason;
    auto& members = groups[{st, why}];
    if (members.empty()) order.emplace_back(st, why);
    members.push_back(&r);
  }
  int shown = 0;
  for (const auto& [st, why] : order) {
    const std::vector<const StoredResult*>& members = groups.at({st, why});
    if (shown++ == 0) fmt::print("\n");
    const std::string& first = members.front()->outcome.key;
    // A case cut from models (Note [Ops from models]) names them: its reason's first part.
    auto models_of = [](const Outcome& o) {
      static constexpr std::string_view kFrom = "from models: ";
      if (o.error.empty() || o.reason.rfind(kFrom, 0) != 0) return std::string();
      return o.reason.substr(kFrom.size(), o.reason.find(';') == std::string::npos ? std::string::npos
                                                                                   : o.reason.find(';') - kFrom.size());
    };
    if (members.size() < 3) {
      for (const StoredResult* r : members) {
        const std::string models = models_of(r->outcome);
        fmt::print("{:<11} {}\n            {}\n{}            repro: {}\n", st, r->outcome.key, why,
                   models.empty() ? "" : "            from models: " + models + "\n",
                   repro_command(r->outcome.key, db_path, run_id, info->backend));
      }
      continue;
    }
    std::set<std::string> models;
    for (const StoredResult* r : members) {
      std::string list = models_of(r->outcome);
      for (std::size_t i = 0; i < list.size();) {
        std::size_t j = list.find(", ", i);
        models.insert(list.substr(i, j == std::string::npos ? std::string::npos : j - i));
        i = j == std::string::npos ? list.size() : j + 2;
      }
    }
    fmt::print(
        "{:<11} {} and {} more with the same {}\n            {}\n{}            repro: {}\n            each: {}\n", st,
        first, members.size() - 1, members.front()->outcome.error.empty() ? "reason" : "error", why,
        models.empty() ? "" : fmt::format("            from models: {}\n", fmt::join(models, ", ")),
        repro_command(first, db_path, run_id, info->backend),
        fmt::format("gauntlet show --db {} --run {} --status {} --json", shell_argument(db_path), run_id, st));
  }
}

int show(const ShowOptions& o) {
  auto store = Store::open(o.db, Store::OpenMode::ReadOnly);
  long long run_id = o.run;
  if (run_id == 0) {
    auto latest = store->latest_run();
    if (!latest) throw UsageError(o.db + ": the database holds no run yet");
    run_id = *latest;
  }
  auto statuses = wanted_statuses(o.statuses);
  if (!o.json) {
    print_summary(*store, o.db, run_id, statuses);
    return 0;
  }
  auto info = store->run(run_id);
  if (!info) throw UsageError(fmt::format("no run {} in {}", run_id, o.db));
  nlohmann::json counts = nlohmann::json::object();
  for (const auto& [s, n] : store->status_counts(run_id)) counts[std::string(status_name(s))] = n;
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : store->results(run_id)) {
    std::string st(status_name(r.outcome.status));
    if (std::find(statuses.begin(), statuses.end(), st) == statuses.end()) continue;
    nlohmann::json j = to_json(r.outcome);
    j["repro"] = repro_command(r.outcome.key, o.db, run_id, info->backend);
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
  std::cout << nlohmann::json{{"json_schema_version", kJsonSchemaVersion},
                              {"run", run},
                              {"counts", counts},
                              {"results", results}}
                   .dump(1)
            << "\n";
  return 0;
}

}  // namespace gauntlet::cli
