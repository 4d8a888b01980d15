// The case files of a group (every case's history) and its status grid (Note [Status grid]).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "dashboard_group.h"
#include "gauntlet/base/outcome.h"

namespace gauntlet::dashboard_detail {

// The case index and the case files, written without building JSON trees: at 100,000 cases
// and 50 releases they hold 5 million points.
std::int64_t write_cases(const GroupData& d, Writer& w) {
  const std::size_t nr = d.g.releases.size(), per = static_cast<std::size_t>(d.o.per_file);
  std::map<std::string, int> family_ids;
  for (const std::string& f : d.family) family_ids.emplace(f, 0);
  json families = json::array();
  int next = 0;
  for (auto& [f, id] : family_ids) {
    id = next++;
    families.push_back(f);
  }
  std::string index = fmt::format("{{\"schema_version\":{},\"group\":", kSchemaVersion);
  append_string(index, d.g.id);
  index += fmt::format(",\"per_file\":{},\"keys\":[", per);
  for (std::size_t c = 0; c < d.cases.size(); ++c) {
    if (c) index += ',';
    append_string(index, d.cases[c].key);
  }
  index += "],\"family\":[";
  for (std::size_t c = 0; c < d.cases.size(); ++c) {
    if (c) index += ',';
    index += std::to_string(family_ids[d.family[c]]);
  }
  index += "],\"families\":" + dump(families) + ",\"status\":[";
  for (std::size_t c = 0; c < d.cases.size(); ++c) {
    if (c) index += ',';
    const std::uint8_t s = d.cols.back().status[c];
    index += '"';
    if (s != kAbsent) index += status_name(static_cast<Status>(s));
    index += '"';
  }
  index += "]}";
  w.write(d.name("cases/index"), index);

  const std::string releases = dump(d.release_names());
  std::int64_t files = 0;
  for (std::size_t first = 0; first < d.cases.size(); first += per, ++files) {
    std::string out = fmt::format("{{\"schema_version\":{},\"group\":", kSchemaVersion);
    append_string(out, d.g.id);
    out += fmt::format(",\"file\":{},\"first\":{},\"releases\":{},\"cases\":[", files, first, releases);
    for (std::size_t c = first; c < std::min(first + per, d.cases.size()); ++c) {
      if (c != first) out += ',';
      out += "{\"key\":";
      append_string(out, d.cases[c].key);
      const auto list = [&](const char* field, auto&& value) {
        out += ",\"";
        out += field;
        out += "\":[";
        for (std::size_t r = 0; r < nr; ++r) {
          if (r) out += ',';
          if (d.cols[r].status[c] == kAbsent) {
            out += "null";
          } else {
            value(r);
          }
        }
        out += ']';
      };
      list("status", [&](std::size_t r) {
        out += '"';
        out += status_name(static_cast<Status>(d.cols[r].status[c]));
        out += '"';
      });
      list("time_us", [&](std::size_t r) { append_number(out, d.cols[r].time[c]); });
      list("max_abs_err", [&](std::size_t r) { append_number(out, d.cols[r].abs_err[c]); });
      list("max_rel_err", [&](std::size_t r) { append_number(out, d.cols[r].rel_err[c]); });
      list("atol", [&](std::size_t r) { append_number(out, d.cols[r].atol[c]); });
      list("error", [&](std::size_t r) {
        const auto it = d.cols[r].error.find(static_cast<std::uint32_t>(c));
        if (it == d.cols[r].error.end()) {
          out += "null";
        } else {
          append_string(out, it->second);
        }
      });
      out += '}';
    }
    out += "]}";
    w.write(d.name(fmt::format("cases/{}", files)), out);
  }
  return files;
}

namespace {

// Note [Status grid]: data/<g>/grid.js holds the status of every case in the newest
// `grid_releases` releases: one string per release with a character per case slot (the slots of
// cases/index.js, whose keys and families it shares), and each case's dtype and mode as indices
// into lists of names. 50 releases of 100,000 cases are 5 MB the browser parses as 50 strings,
// not as 5 million JSON values; the page draws only the rows in view (dashboards/site/app.js,
// viewGrid).
char status_code(Status s) {
  switch (s) {
    case Status::Pass:
      return 'P';
    case Status::Fail:
      return 'F';
    case Status::Error:
      return 'E';
    case Status::Crash:
      return 'C';
    case Status::Timeout:
      return 'T';
    case Status::Unsupported:
      return 'U';
    case Status::Skip:
      return 'S';
    case Status::XFail:
      return 'x';
    case Status::XPass:
      return 'X';
  }
  return '?';
}
constexpr char kAbsentCode = '-';

}  // namespace

void write_grid(const GroupData& d, Writer& w) {
  const std::size_t nr = d.g.releases.size();
  const std::size_t shown = std::min<std::size_t>(nr, static_cast<std::size_t>(d.o.grid_releases));
  const std::size_t first = nr - shown;
  std::string out = fmt::format("{{\"schema_version\":{},\"group\":", kSchemaVersion);
  append_string(out, d.g.id);
  out += fmt::format(",\"first\":{},\"releases\":", first);
  json names = json::array();
  for (std::size_t r = first; r < nr; ++r) names.push_back(d.g.releases[r].run.release);
  out += dump(names);
  json codes = json::object();
  for (Status s : kAllStatuses) codes[std::string(1, status_code(s))] = status_name(s);
  out += ",\"codes\":" + dump(codes) + ",\"absent\":\"" + kAbsentCode + '"';
  // dtype and mode: names sorted, then an index per case.
  const auto facet = [&](const char* list, const char* field, auto&& value) {
    std::map<std::string_view, int> ids;
    for (const CaseRow& c : d.cases) ids.emplace(value(c), 0);
    json all = json::array();
    int next = 0;
    for (auto& [v, id] : ids) {
      id = next++;
      all.push_back(v);
    }
    out += fmt::format(",\"{}\":{},\"{}\":[", list, dump(all), field);
    for (std::size_t c = 0; c < d.cases.size(); ++c) {
      if (c) out += ',';
      out += std::to_string(ids[value(d.cases[c])]);
    }
    out += ']';
  };
  facet("dtypes", "dtype", [](const CaseRow& c) -> std::string_view { return c.dtype; });
  facet("modes", "mode", [](const CaseRow& c) -> std::string_view { return c.mode; });
  out += ",\"status\":[";
  for (std::size_t r = first; r < nr; ++r) {
    if (r != first) out += ',';
    out += '"';
    for (std::uint8_t s : d.cols[r].status) out += s == kAbsent ? kAbsentCode : status_code(static_cast<Status>(s));
    out += '"';
  }
  out += "]}";
  w.write(d.name("grid"), out);
}

}  // namespace gauntlet::dashboard_detail
