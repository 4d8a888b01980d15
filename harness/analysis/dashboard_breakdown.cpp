// The breakdown of a group by family, dtype and mode, and its coverage: the ops that fall back to
// the CPU and the targets with graph breaks, per release.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "dashboard_group.h"
#include "gauntlet/base/outcome.h"

namespace gauntlet::dashboard_detail {

namespace {

// Pass rate, fallback rate and speed index per release of the cases sharing a facet value.
json breakdown_of(const GroupData& d, const std::function<const std::string&(std::size_t)>& facet) {
  const std::size_t nr = d.g.releases.size();
  struct Acc {
    std::vector<std::int64_t> cases, pass, fallback, ran;
    std::vector<double> log_sum;
    std::vector<std::int64_t> timed;
  };
  std::map<std::string, Acc> acc;
  for (std::size_t c = 0; c < d.cases.size(); ++c) {
    Acc& a = acc[facet(c)];
    if (a.cases.empty()) {
      a.cases.assign(nr, 0);
      a.pass.assign(nr, 0);
      a.fallback.assign(nr, 0);
      a.ran.assign(nr, 0);
      a.log_sum.assign(nr, 0);
      a.timed.assign(nr, 0);
    }
    for (std::size_t r = 0; r < nr; ++r) {
      const std::uint8_t s = d.cols[r].status[c];
      if (s == kAbsent) continue;
      ++a.cases[r];
      a.pass[r] += s == static_cast<std::uint8_t>(Status::Pass);
      a.ran[r] += ran_to_a_verdict(static_cast<Status>(s));
      a.fallback[r] += d.cols[r].fell_back[c];
      if (r > 0) {
        const double q = ratio_or_nan(d.cols[r - 1].time[c], d.cols[r].time[c]);
        if (std::isfinite(q)) {
          a.log_sum[r] += std::log(q);
          ++a.timed[r];
        }
      }
    }
  }
  json out = json::object();
  for (const auto& [value, a] : acc) {
    json list = json::array();
    double index = 1;
    for (std::size_t r = 0; r < nr; ++r) {
      if (a.timed[r] > 0) index *= std::exp(a.log_sum[r] / double(a.timed[r]));
      if (a.cases[r] == 0) {
        list.push_back(nullptr);
        continue;
      }
      list.push_back({{"cases", a.cases[r]},
                      {"pass_rate", double(a.pass[r]) / double(a.cases[r])},
                      {"pass_rate_ran", a.ran[r] ? json(double(a.pass[r]) / double(a.ran[r])) : json(nullptr)},
                      {"ran_share", double(a.ran[r]) / double(a.cases[r])},
                      {"fallback_rate", double(a.fallback[r]) / double(a.cases[r])},
                      {"speed_index", index}});
    }
    out[value] = std::move(list);
  }
  return out;
}

// The most frequent texts of `counts` first (then by text), at most `most`, as [{text_key, n}].
json top_texts(const std::map<std::string, std::int64_t>& counts, const char* text_key, std::size_t most) {
  std::vector<std::pair<std::string, std::int64_t>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  json out = json::array();
  for (std::size_t i = 0; i < v.size() && i < most; ++i) out.push_back({{text_key, v[i].first}, {"n", v[i].second}});
  return out;
}

}  // namespace

void write_breakdown(const GroupData& d, Writer& w) {
  json by = {{"family", breakdown_of(d, [&](std::size_t c) -> const std::string& { return d.family[c]; })},
             {"dtype", breakdown_of(d, [&](std::size_t c) -> const std::string& { return d.cases[c].dtype; })},
             {"mode", breakdown_of(d, [&](std::size_t c) -> const std::string& { return d.cases[c].mode; })}};
  w.write(d.name("breakdown"),
          dump({{"schema_version", kSchemaVersion}, {"group", d.g.id}, {"releases", d.release_names()}, {"by", by}}));
}

void write_coverage(const GroupData& d, Writer& w) {
  const std::size_t nr = d.g.releases.size();
  std::map<std::string, std::vector<std::int64_t>> ops;
  struct Target {
    std::vector<std::int64_t> cases, breaks, recompiles;
    const Column::TargetCompile* latest = nullptr;  // in the latest release that has the target
  };
  std::map<std::string, Target> targets;
  for (std::size_t r = 0; r < nr; ++r) {
    for (const auto& [op, n] : d.cols[r].fallback_cases) {
      auto& v = ops[op];
      v.resize(nr, 0);
      v[r] = n;
    }
    for (const auto& [target, tc] : d.cols[r].compile_by_target) {
      Target& t = targets[target];
      t.cases.resize(nr, 0);
      t.breaks.resize(nr, 0);
      t.recompiles.resize(nr, 0);
      t.cases[r] = tc.cases;
      t.breaks[r] = tc.breaks;
      t.recompiles[r] = tc.recompiles;
      t.latest = &tc;
    }
  }
  // Largest in the latest release first, then by name.
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> op_rows(ops.begin(), ops.end());
  std::stable_sort(op_rows.begin(), op_rows.end(),
                   [](const auto& a, const auto& b) { return a.second.back() > b.second.back(); });
  json fallback = json::array(), breaks = json::array();
  for (const auto& [op, v] : op_rows) fallback.push_back({{"op", op}, {"cases", v}});
  std::vector<std::string> target_names;
  for (const auto& [t, v] : targets) target_names.push_back(t);
  std::stable_sort(target_names.begin(), target_names.end(), [&](const std::string& a, const std::string& b) {
    const Target &ta = targets[a], &tb = targets[b];
    if (ta.cases.back() != tb.cases.back()) return ta.cases.back() > tb.cases.back();
    return ta.recompiles.back() > tb.recompiles.back();
  });
  // Each target's reasons and guards as its latest release recorded them, the 5 most frequent.
  for (const std::string& t : target_names) {
    const Target& x = targets[t];
    breaks.push_back({{"target", t},
                      {"cases", x.cases},
                      {"breaks", x.breaks},
                      {"recompiles", x.recompiles},
                      {"reasons", top_texts(x.latest->reasons, "reason", 5)},
                      {"guards", top_texts(x.latest->guards, "guard", 5)}});
  }
  w.write(d.name("coverage"), dump({{"schema_version", kSchemaVersion},
                                    {"group", d.g.id},
                                    {"releases", d.release_names()},
                                    {"fallback_ops", fallback},
                                    {"graph_breaks", breaks}}));
}

}  // namespace gauntlet::dashboard_detail
