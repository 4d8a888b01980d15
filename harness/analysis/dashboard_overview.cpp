// The overview of a group (overview.js): per release and per week, the figures the charts draw.
#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

#include "dashboard_group.h"
#include "gauntlet/analysis/dates.h"
#include "gauntlet/base/outcome.h"

namespace gauntlet::dashboard_detail {

namespace {

json release_json(const GroupData& d, std::size_t r) {
  const Release& rel = d.g.releases[r];
  return {{"release", rel.run.release},
          {"run_id", rel.run.id},
          {"started_at", rel.run.started_at},
          {"week", rel.dated ? json(dates::iso_week(rel.day).name) : json(nullptr)},
          {"backend_version", rel.run.backend_version},
          {"cases", d.results[r]},
          {"counts", counts_json(d.counts[r])},
          {"pass_rate", d.pass_rate(r)},
          {"pass_rate_ran", d.pass_rate_ran_json(r)},
          {"ran_share", d.ran_share(r)},
          {"fallback_rate", d.fallback_rate(r)},
          {"graph_breaks", d.breaks_json(r)},
          {"recompiles", d.recompiles_json(r)},
          {"speed", r == 0 ? json(nullptr) : interval_json(d.speed[r], d.compared[r])},
          {"speed_index", d.index[r]},
          {"change_point", d.cps[r].to_json()},
          {"regressions", d.judged[r] ? gates_json(*d.judged[r]) : json(nullptr)}};
}

// A week's figures are its last release's; releases without a date belong to no week. A change
// point of a release marks its week, when the weekly series is long enough for one
// (kMinChangePointSeries weeks).
json weeks_json(const GroupData& d) {
  json weeks = json::array();
  std::vector<ChangePoints> week_cps;
  std::string current;
  for (std::size_t r = 0; r < d.g.releases.size(); ++r) {
    const Release& rel = d.g.releases[r];
    if (!rel.dated) continue;
    const dates::IsoWeek w = dates::iso_week(rel.day);
    json point = {{"week", w.name},
                  {"start", dates::civil_from_days(w.start)},
                  {"release", rel.run.release},
                  {"releases", 1},
                  {"pass_rate", d.pass_rate(r)},
                  {"pass_rate_ran", d.pass_rate_ran_json(r)},
                  {"ran_share", d.ran_share(r)},
                  {"fallback_rate", d.fallback_rate(r)},
                  {"graph_breaks", d.breaks_json(r)},
                  {"speed_index", d.index[r]}};
    if (w.name == current) {
      point["releases"] = weeks.back()["releases"].get<int>() + 1;
      weeks.back() = std::move(point);
      week_cps.back() |= d.cps[r];
    } else {
      weeks.push_back(std::move(point));
      week_cps.push_back(d.cps[r]);
      current = w.name;
    }
  }
  for (std::size_t k = 0; k < weeks.size(); ++k)
    weeks[k]["change_point"] = (weeks.size() >= kMinChangePointSeries ? week_cps[k] : ChangePoints{}).to_json();
  return weeks;
}

json facets_json(const GroupData& d) {
  std::set<std::string> family, dtype, mode, status;
  const Column& latest = d.cols.back();
  for (std::size_t c = 0; c < d.cases.size(); ++c) {
    if (latest.status[c] == kAbsent) continue;
    family.insert(d.family[c]);
    dtype.insert(d.cases[c].dtype);
    mode.insert(d.cases[c].mode);
    status.insert(std::string(status_name(static_cast<Status>(latest.status[c]))));
  }
  return {{"family", family}, {"dtype", dtype}, {"mode", mode}, {"status", status}};
}

}  // namespace

json group_overview(const GroupData& d, std::int64_t case_files) {
  const std::size_t nr = d.g.releases.size();
  json releases = json::array();
  for (std::size_t r = 0; r < nr; ++r) releases.push_back(release_json(d, r));
  return {{"id", d.g.id},
          {"backend", d.g.backend},
          {"suite", d.g.suite},
          {"metric", d.sim ? "sim" : "host"},
          {"releases", releases},
          {"weeks", weeks_json(d)},
          {"latest", nr >= 2 ? json{{"release", d.g.releases[nr - 1].run.release},
                                    {"baseline", d.g.releases[nr - 2].run.release},
                                    {"groups", d.latest_groups}}
                             : json(nullptr)},
          {"facets", facets_json(d)},
          {"cases", d.cases.size()},
          {"case_files", case_files}};
}

}  // namespace gauntlet::dashboard_detail
