// The dashboard's pieces (dashboard.cpp): a group's results as columns with the series computed
// from them (GroupData, Note [Dashboard aggregates]), and one writer per kind of file of the site:
// the overview's group entry (dashboard_overview.cpp), the release pages (dashboard_releases.cpp),
// the breakdown and coverage (dashboard_breakdown.cpp), the case files and the status grid
// (dashboard_cases.cpp). Private to gauntlet_analysis.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gauntlet/analysis/dashboard.h"
#include "gauntlet/analysis/regress.h"
#include "gauntlet/analysis/stats.h"
#include "gauntlet/store/store_reader.h"

namespace gauntlet::dashboard_detail {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kSchemaVersion = 1;

void raise(const std::string& message, int exit_code = kExitBadInput);

// ---- JSON

// A number, or null for NaN and infinities.
json number(double v);
std::string dump(const json& j);
// Text of a JSON string for the fast writers of the case files and the grid.
void append_string(std::string& out, std::string_view s);
void append_number(std::string& out, double v);
double ratio_or_nan(float a, float b);
json interval_json(const stats::Interval& i, std::int64_t n);
json counts_json(const std::vector<std::int64_t>& counts);
json gates_json(const std::map<Gate, std::int64_t>& n);

// ---- A group's results

// A release's results, one slot per case of the group (Note [Dashboard aggregates]).
constexpr std::uint8_t kAbsent = 0xff;
struct Column {
  std::vector<std::uint8_t> status;                      // Status, or kAbsent
  std::vector<bool> fell_back;                           // the case fell back to the CPU on some op
  std::vector<float> time, abs_err, rel_err, atol;       // NaN: none (errors: not compared)
  std::unordered_map<std::uint32_t, std::string> error;  // error texts, by case slot
  std::map<std::string, std::int64_t> fallback_cases;    // op -> cases where it fell back
  std::int64_t fallback_results = 0, graph_breaks = 0, recompiles = 0;
  std::int64_t breaks_measured = 0;  // results that record graph breaks (compile-path cases)
  // The compile path per target (op or model) with graph breaks or recompiles: cases with breaks,
  // breaks, recompiles, and each break's reason and each recompile's failed guard with how often
  // it was recorded (compile_reasons.h).
  struct TargetCompile {
    std::int64_t cases = 0, breaks = 0, recompiles = 0;
    std::map<std::string, std::int64_t> reasons, guards;
  };
  std::map<std::string, TargetCompile> compile_by_target;
};

// ---- A group: one backend and suite

struct Release {
  RunRef run;
  std::int64_t day = 0;
  bool dated = false;
};

struct Group {
  std::string id, backend, suite;
  std::vector<Release> releases;  // oldest first
};

// Writes data/<name>.js (dashboard_script) and counts the files and bytes in the summary.
class Writer {
 public:
  Writer(fs::path data, DashboardSummary& summary) : data_(std::move(data)), summary_(summary) {}
  void write(const std::string& name, const std::string& json_text);

 private:
  fs::path data_;
  DashboardSummary& summary_;
};

struct ChangePoints {
  bool speed = false, pass = false, fallback = false, breaks = false;
  ChangePoints& operator|=(const ChangePoints& o) {
    speed |= o.speed;
    pass |= o.pass;
    fallback |= o.fallback;
    breaks |= o.breaks;
    return *this;
  }
  nlohmann::json to_json() const {
    return {{"speed", speed}, {"pass", pass}, {"fallback", fallback}, {"breaks", breaks}};
  }
};
constexpr std::size_t kMinChangePointSeries = 4;

// Results that ran to a verdict on the op: PASS, FAIL, ERROR, CRASH, TIMEOUT, XPASS (not
// UNSUPPORTED, SKIP or XFAIL).
inline bool ran_to_a_verdict(Status s) {
  return s == Status::Pass || s == Status::Fail || s == Status::Error || s == Status::Crash || s == Status::Timeout ||
         s == Status::XPass;
}

// A group's releases as columns over the cases they ran, and the series the overview draws
// (Note [Dashboard aggregates]): built by dashboard.cpp, read by the page writers.
struct GroupData {
  GroupData(const Group& group, const DashboardOptions& options) : g(group), o(options) {}

  const Group& g;
  const DashboardOptions& o;
  std::vector<CaseRow> cases;       // the cases some release ran, sorted by key: the case slots
  std::vector<std::string> family;  // per slot
  bool sim = false;
  std::vector<Column> cols;  // per release
  std::vector<std::vector<std::int64_t>> counts;
  std::vector<std::int64_t> results, compared;
  std::vector<stats::Interval> speed;
  std::vector<double> index;
  std::vector<ChangePoints> cps;  // per release
  std::vector<std::optional<std::map<Gate, std::int64_t>>> judged;
  std::vector<std::optional<RunComparison>> judged_pairs;  // per release: against the one before
  // The latest release's regressions by group, worst first (Note [Rollups] in rollup.cpp): the
  // overview's first screen. Null when the latest release was not judged.
  json latest_groups;

  std::int64_t ran(std::size_t r) const {
    std::int64_t n = 0;
    for (Status s : kAllStatuses) n += ran_to_a_verdict(s) ? counts[r][static_cast<std::size_t>(s)] : 0;
    return n;
  }
  // 0 when nothing ran, for the change-point series; pass_rate_ran_json is null then.
  double pass_rate_ran(std::size_t r) const {
    const std::int64_t n = ran(r);
    return n ? double(counts[r][static_cast<std::size_t>(Status::Pass)]) / double(n) : 0;
  }
  json pass_rate_ran_json(std::size_t r) const { return ran(r) ? json(pass_rate_ran(r)) : json(nullptr); }
  double ran_share(std::size_t r) const { return results[r] ? double(ran(r)) / double(results[r]) : 0; }
  // Graph breaks and recompiles: null where no result of the release records them (an eager-only
  // suite), not 0.
  json breaks_json(std::size_t r) const { return cols[r].breaks_measured ? json(cols[r].graph_breaks) : json(nullptr); }
  json recompiles_json(std::size_t r) const {
    return cols[r].breaks_measured ? json(cols[r].recompiles) : json(nullptr);
  }
  double pass_rate(std::size_t r) const {
    return results[r] ? double(counts[r][static_cast<std::size_t>(Status::Pass)]) / double(results[r]) : 0;
  }
  double fallback_rate(std::size_t r) const {
    return results[r] ? double(cols[r].fallback_results) / double(results[r]) : 0;
  }
  std::string name(const std::string& file) const { return g.id + "/" + file; }
  json release_names() const {
    json names = json::array();
    for (const Release& r : g.releases) names.push_back(r.run.release);
    return names;
  }
  // family, dtype, mode, status (in release r) and case file of a key, or nulls for a key that
  // is not a case of the group.
  void add_case_facets(json& row, const std::string& key,
                       const std::unordered_map<std::string_view, std::uint32_t>& by_key, std::size_t r) const;
};

// ---- The pages of a group

// The group's entry in overview.js: its releases, weeks and facets (dashboard_overview.cpp).
json group_overview(const GroupData& d, std::int64_t case_files);
// A comparison's regressions by group (Note [Rollups] in rollup.cpp): {"list": at most `per_gate`
// groups a gate, each with its first keys; "more": the groups left out, by gate} (dashboard_releases.cpp).
json groups_json(const RunComparison& c, std::size_t per_gate);
// data/<g>/releases/<r>.js and latest.js (dashboard_releases.cpp); frees each comparison written.
void write_release_pages(GroupData& d, Writer& w);
// data/<g>/breakdown.js and coverage.js (dashboard_breakdown.cpp).
void write_breakdown(const GroupData& d, Writer& w);
void write_coverage(const GroupData& d, Writer& w);
// data/<g>/cases/index.js, the case files (returns how many) and grid.js (dashboard_cases.cpp).
std::int64_t write_cases(const GroupData& d, Writer& w);
void write_grid(const GroupData& d, Writer& w);

}  // namespace gauntlet::dashboard_detail
